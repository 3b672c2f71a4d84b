package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The store's rules seen from the command line, as real processes of the built binary on
// SQLite and PostgreSQL (issue 10, points 2, 3, 5, 9 and 13).

// TestCLI_RegistryCannotFreeParentID: a --fields file that drops readonly from parent_id is
// refused at load, naming the file and the field, so "set parent_id" can never make a cycle.
func TestCLI_RegistryCannotFreeParentID(t *testing.T) {
	fields := writeFields(t, "readonly: true, label: parent}", "label: parent}")
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			a := mustCreate(t, dsn, "document", "title=A")
			c := mustCreate(t, dsn, "document", "title=B", fmt.Sprintf("parent_id=%d", a.ID))
			r := tandem(t, dsn, "--fields", fields, "set", "document", fmt.Sprint(a.ID), fmt.Sprintf("parent_id=%d", c.ID), "--expect-version", "1")
			wantExit(t, "set parent_id under a registry without readonly", r, exitUsage, fields, "document.parent_id", "readonly")
			if got := mustGet(t, dsn, "document", a.ID); got.Fields["parent_id"] != nil || got.Version != 1 {
				t.Errorf("document %d = parent %v v%d, want still at the root, v1", a.ID, got.Fields["parent_id"], got.Version)
			}
		})
	}
}

// TestCLI_PriceNeverNegative: with a registry that makes price a counter, adjust cannot take
// it below zero; create and set cannot either.
func TestCLI_PriceNeverNegative(t *testing.T) {
	fields := writeFields(t, "{name: price,        type: money,  owner: editor, rule: scalar}",
		"{name: price,        type: money,  owner: editor, rule: counter}")
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			p := mustCreate(t, dsn, "product", "sku=PRICE-1", "name=Priced", "price=5.00")
			id := fmt.Sprint(p.ID)
			r := tandem(t, dsn, "--fields", fields, "adjust", "product", id, "price", "-5.01")
			wantExit(t, "adjust price below zero", r, exitUsage, "product.price: 5.00 - 5.01 would be -0.01, and an amount of money cannot be negative")
			mustTandem(t, dsn, "--fields", fields, "adjust", "product", id, "price", "-5.00")
			if got := mustGet(t, dsn, "product", p.ID); got.Fields["price"] != "0.00" || got.Version != 2 {
				t.Errorf("price = %v v%d, want 0.00 v2", got.Fields["price"], got.Version)
			}
			wantExit(t, "create with a negative price", tandem(t, dsn, "create", "product", "sku=NEG", "name=n", "price=-1"), exitUsage, "negative")
			wantExit(t, "set a negative price", tandem(t, dsn, "set", "product", id, "price=-1", "--expect-version", "2"), exitUsage, "negative")
		})
	}
}

// TestCLI_SKUsComparedNormalised: SKUs that differ only by case, surrounding spaces, width,
// non-breaking or zero-width characters are one sku, on create and on set.
func TestCLI_SKUsComparedNormalised(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			p := mustCreate(t, dsn, "product", "sku=LAMP-7", "name=Lamp")
			for _, sku := range []string{"lamp-7", " LAMP-7 ", "LAMP-7\u00a0", "LAMP\u200b-7", "\ufeffLamp-7", "ＬＡＭＰ-7"} {
				r := tandem(t, dsn, "create", "product", "sku="+sku, "name=Copy")
				wantExit(t, fmt.Sprintf("create sku %+q", sku), r, exitUsage, fmt.Sprintf("already exists (product %d has LAMP-7", p.ID))
			}
			q := mustCreate(t, dsn, "product", "sku=LAMP-8", "name=Other lamp")
			r := tandem(t, dsn, "set", "product", fmt.Sprint(q.ID), "sku=lamp-7\u200d", "--expect-version", "1")
			wantExit(t, "set a lookalike sku", r, exitUsage, "already exists")
			var list []record
			if err := json.Unmarshal([]byte(mustTandem(t, dsn, "list", "products", "--json")), &list); err != nil {
				t.Fatal(err)
			}
			if len(list) != 2 {
				t.Errorf("%d products, want 2", len(list))
			}
		})
	}
}

// TestCLI_RetryAfterLeaseTakenOver: an adjust (and a set) with --key and --lease, applied
// once; the lease is released and taken by someone else; the same command again exits 0 and
// says it was already applied (it used to exit 4, "taken over", and a script believed its
// change was lost).
func TestCLI_RetryAfterLeaseTakenOver(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			p := mustCreate(t, dsn, "product", "sku=KEY-1", "name=Keyed", "stock=10", "price=1.00")
			id := fmt.Sprint(p.ID)
			l := mustLeaseJSON(t, strings.TrimSpace(mustTandem(t, dsn, "--user", "alice", "lease", "acquire", "product", id, "--ttl", "1m")))
			adjust := []string{"--user", "alice", "adjust", "product", id, "stock", "-3", "--key", "K-adjust", "--lease", l.Token}
			set := []string{"--user", "alice", "set", "product", id, "price=2.00", "--expect-version", "2", "--key", "K-set", "--lease", l.Token}
			first := mustTandem(t, dsn, adjust...)
			if !strings.Contains(first, "saved product") {
				t.Fatalf("first adjust: %q", first)
			}
			mustTandem(t, dsn, set...)
			mustTandem(t, dsn, "--user", "alice", "lease", "release", l.Token)
			mustTandem(t, dsn, "--user", "bob", "lease", "acquire", "product", id, "--ttl", "1m")

			for what, args := range map[string][]string{"adjust": adjust, "set": set} {
				r := tandem(t, dsn, args...)
				wantExit(t, "retried "+what, r, 0)
				if !strings.Contains(r.stdout, "already applied") {
					t.Errorf("retried %s says %q, want already applied", what, r.stdout)
				}
			}
			if got := mustGet(t, dsn, "product", p.ID); got.Fields["stock"] != float64(7) || got.Fields["price"] != "2.00" || got.Version != 3 {
				t.Errorf("product = stock %v price %v v%d, want 7, 2.00, v3 (each change once)", got.Fields["stock"], got.Fields["price"], got.Version)
			}
			// The same key with another request is still refused.
			other := append([]string(nil), adjust...)
			other[6] = "-4"
			wantExit(t, "key reused for another delta", tandem(t, dsn, other...), exitUsage, "different request")
		})
	}
}

// TestCLI_LeaseBindsEveryWriter: the lease token, not the holder's name, lets a writer
// through: move, set and create under a leased document need it. Releasing a lease that was
// taken over says so; a forged token's message names no empty group.
func TestCLI_LeaseBindsEveryWriter(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			d := mustCreate(t, dsn, "document", "title=Leased")
			p := mustCreate(t, dsn, "document", "title=Parent")
			did, pid := fmt.Sprint(d.ID), fmt.Sprint(p.ID)
			l := mustLeaseJSON(t, strings.TrimSpace(mustTandem(t, dsn, "--user", "alice", "lease", "acquire", "document", did, "--ttl", "1m")))

			wantExit(t, "alice moves her leased document without the token", tandem(t, dsn, "--user", "alice", "move", did, pid), exitLease, "held by alice")
			wantExit(t, "alice sets without the token", tandem(t, dsn, "--user", "alice", "set", "document", did, "title=x", "--expect-version", "1"), exitLease)
			if got := mustGet(t, dsn, "document", d.ID); got.Version != 1 || got.Fields["parent_id"] != nil {
				t.Fatalf("document = parent %v v%d after refused writes, want the root, v1", got.Fields["parent_id"], got.Version)
			}
			mustTandem(t, dsn, "--user", "alice", "move", did, pid, "--lease", l.Token)

			// Creating (and moving) under a leased document needs that document's token.
			wantExit(t, "create under a leased document", tandem(t, dsn, "--user", "alice", "create", "document", "title=Child", "parent_id="+did), exitLease)
			mustTandem(t, dsn, "--user", "alice", "create", "document", "title=Child", "parent_id="+did, "--parent-lease", l.Token)
			o := mustCreate(t, dsn, "document", "title=Other")
			wantExit(t, "move under a leased document", tandem(t, dsn, "move", fmt.Sprint(o.ID), did), exitLease)
			mustTandem(t, dsn, "move", fmt.Sprint(o.ID), did, "--parent-lease", l.Token)

			// A token this store never granted: exit 4, and no "()" for a group it cannot know.
			r := tandem(t, dsn, "set", "document", fmt.Sprint(o.ID), "title=y", "--expect-version", "2", "--lease", strings.Repeat("0f", 32))
			wantExit(t, "forged token", r, exitLease, "never granted")
			if strings.Contains(r.stderr, "()") {
				t.Errorf("forged token message names an empty group: %q", r.stderr)
			}
		})
	}
}

// TestCLI_ReleaseOfTakenOverLease: alice's lease expires and bob takes it; alice's release
// says it had already been taken over, and bob's lease stays.
func TestCLI_ReleaseOfTakenOverLease(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			p := mustCreate(t, dsn, "product", "sku=REL-1", "name=Released")
			id := fmt.Sprint(p.ID)
			alice := mustLeaseJSON(t, strings.TrimSpace(mustTandem(t, dsn, "--user", "alice", "lease", "acquire", "product", id, "--ttl", "1s")))
			// Bob tries until the database clock lets him in: the event is his grant.
			for deadline := time.Now().Add(20 * time.Second); ; {
				r := tandem(t, dsn, "--user", "bob", "lease", "acquire", "product", id, "--ttl", "1m")
				if r.code == 0 {
					break
				}
				if r.code != exitLease || time.Now().After(deadline) {
					t.Fatalf("bob's acquire: exit %d, %s", r.code, r.stderr)
				}
				time.Sleep(100 * time.Millisecond)
			}
			out := mustTandem(t, dsn, "--user", "alice", "lease", "release", alice.Token)
			if !strings.Contains(out, "not released") || !strings.Contains(out, "taken over by bob") {
				t.Errorf("release of a taken-over lease says %q, want not released, taken over by bob", out)
			}
			rows := mustLocks(t, dsn)
			if len(rows) != 1 || rows[0].Holder != "bob" {
				t.Errorf("locks = %+v, want bob's lease, untouched", rows)
			}
		})
	}
}

// TestCLI_CounterOverflow: an adjust past the int64 range is bad input (exit 2) with the same
// message on both stores, and nothing is written.
func TestCLI_CounterOverflow(t *testing.T) {
	const want = "product.stock: 9223372036854775000 + 1000 is out of range (a counter holds -9223372036854775808..9223372036854775807)"
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			p := mustCreate(t, dsn, "product", "sku=BIG-1", "name=Big", "stock=0")
			id := fmt.Sprint(p.ID)
			mustTandem(t, dsn, "adjust", "product", id, "stock", "9223372036854775000")
			r := tandem(t, dsn, "adjust", "product", id, "stock", "1000")
			wantExit(t, "overflowing adjust", r, exitUsage, want)
			var got struct {
				Version int64                      `json:"version"`
				Fields  map[string]json.RawMessage `json:"fields"`
			}
			if err := json.Unmarshal([]byte(mustTandem(t, dsn, "get", "product", id, "--json")), &got); err != nil {
				t.Fatal(err)
			}
			if string(got.Fields["stock"]) != "9223372036854775000" || got.Version != 2 {
				t.Errorf("stock = %s v%d, want 9223372036854775000 v2", got.Fields["stock"], got.Version)
			}
		})
	}
}

// TestCLI_NoEmptyVersions: a move to where a document is, an adjust by 0 and a set of the
// values a record has write nothing and say "no change".
func TestCLI_NoEmptyVersions(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			d := mustCreate(t, dsn, "document", "title=Root doc")
			p := mustCreate(t, dsn, "product", "sku=SAME-1", "name=Same", "price=3.50", "stock=4")
			pid := fmt.Sprint(p.ID)
			for what, args := range map[string][]string{
				"move to the root": {"move", fmt.Sprint(d.ID), "root"},
				"adjust by 0":      {"adjust", "product", pid, "stock", "0"},
				"set equal values": {"set", "product", pid, "name=Same", "price=3.5", "--expect-version", "1"},
			} {
				out := mustTandem(t, dsn, args...)
				if !strings.HasPrefix(out, "no change") {
					t.Errorf("%s says %q, want no change", what, out)
				}
			}
			// A stale base is a conflict even when the values are equal: a read-modify-write
			// script must learn that it read an old version.
			mustTandem(t, dsn, "adjust", "product", pid, "stock", "1")
			wantExit(t, "set, stale, equal", tandem(t, dsn, "set", "product", pid, "price=3.50", "--expect-version", "1"), exitConflict)
			if got := mustGet(t, dsn, "document", d.ID); got.Version != 1 {
				t.Errorf("document version = %d, want 1", got.Version)
			}
			if got := mustGet(t, dsn, "product", p.ID); got.Version != 2 {
				t.Errorf("product version = %d, want 2 (the create and the adjust by 1)", got.Version)
			}
			if n := historyLen(t, dsn, "product", p.ID); n != 2 {
				t.Errorf("product history = %d versions, want 2", n)
			}
			if n := historyLen(t, dsn, "document", d.ID); n != 1 {
				t.Errorf("document history = %d versions, want 1", n)
			}
		})
	}
}

// TestCLI_CorruptSQLiteIsBroken: a damaged or truncated SQLite file is a broken store (exit 1),
// not bad input (exit 2).
func TestCLI_CorruptSQLiteIsBroken(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.db")
	mustTandem(t, good, "seed", "--products", "2000", "--documents", "5")
	// Fold the WAL into the file, so the copies below hold every page.
	mustTandem(t, good, "get", "product", "1")
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(good + "-wal"); err == nil {
		t.Skip("the database kept a WAL after the last process closed it") // never seen: SQLite checkpoints at close
	}
	const page = 4096
	if len(data) < 300*page {
		t.Fatalf("the seeded database has %d bytes, too small to damage in its middle", len(data))
	}
	damaged := filepath.Join(dir, "damaged.db")
	bad := bytes.Clone(data)
	copy(bad[100*page:250*page], bytes.Repeat([]byte{0xff}, 150*page))
	if err := os.WriteFile(damaged, bad, 0o600); err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(dir, "truncated.db")
	if err := os.WriteFile(truncated, data[:len(data)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	for _, db := range []string{damaged, truncated} {
		r := tandem(t, db, "list", "products")
		wantExit(t, "list products on "+filepath.Base(db), r, exitFailure, "the store is broken")
	}
}
