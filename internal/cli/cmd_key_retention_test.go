package cli

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// ageKeys moves the stored expiry of every idempotency key of the store at dsn a year into
// the past: what a process whose clock runs a year ahead, or a retry a year later, sees.
func ageKeys(t *testing.T, backend, dsn string) {
	t.Helper()
	if backend == "sqlite" {
		raw, err := sql.Open("sqlite", "file:"+dsn+"?_pragma=busy_timeout(10000)")
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		if _, err := raw.Exec(`UPDATE idempotency SET expires_at = '2001-01-01T00:00:00.000Z'`); err != nil {
			t.Fatalf("age the keys: %v", err)
		}
		return
	}
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), `UPDATE idempotency SET expires_at = now() - interval '1 year'`); err != nil {
		t.Fatalf("age the keys: %v", err)
	}
}

// TestCLI_AdjustKeyAfterExpiry: a key is kept for good once applied, so `adjust --key` sent
// again after the key's stored expiry (a year later, or by a process whose clock says so)
// answers "already applied" and changes nothing, and the same key with another delta is
// still refused.
func TestCLI_AdjustKeyAfterExpiry(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			p := mustCreate(t, dsn, "product", "sku=LATE-1", "name=Lamp", "stock=10")
			id := fmt.Sprint(p.ID)
			mustTandem(t, dsn, "--user", "alice", "adjust", "product", id, "stock", "-3", "--key", "k-late")
			ageKeys(t, b.name, dsn)

			r := tandem(t, dsn, "--user", "bob", "adjust", "product", id, "stock", "-3", "--key", "k-late")
			if r.code != 0 || !strings.HasPrefix(r.stdout, "already applied by alice at ") || !strings.Contains(r.stdout, `(key "k-late")`) {
				t.Errorf("adjust --key after the key's expiry: exit %d, stdout %q, stderr %q; want already applied by alice", r.code, r.stdout, r.stderr)
			}
			r = tandem(t, dsn, "--user", "bob", "adjust", "product", id, "stock", "-4", "--key", "k-late")
			wantExit(t, "the expired key with another delta", r, 2, "k-late", "different request")
			if got := mustGet(t, dsn, "product", p.ID); got.Fields["stock"] != float64(7) || got.Version != 2 {
				t.Errorf("product after the late replays: stock %v v%d, want 7 v2 (applied once)", got.Fields["stock"], got.Version)
			}
		})
	}
}
