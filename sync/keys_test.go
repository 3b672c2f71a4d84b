package sync_test

import (
	"context"
	"database/sql"
	"path/filepath"
	gosync "sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/postgres"
	"github.com/tandem-editor/tandem/store/postgres/pgtest"
	"github.com/tandem-editor/tandem/store/sqlite"
	tsync "github.com/tandem-editor/tandem/sync"
)

// keySources opens each kind of source with a way to end every idempotency key's stored
// lifetime on it (its expires_at moved a year into the past, as a process whose clock runs a
// year ahead would judge them).
var keySources = map[string]func(t *testing.T) (store.Store, func(t *testing.T)){
	"sqlite": func(t *testing.T) (store.Store, func(t *testing.T)) {
		path := filepath.Join(t.TempDir(), "source.db")
		db := openNew(t, path)
		t.Cleanup(func() { db.Close() })
		return db, func(t *testing.T) {
			raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			if _, err := raw.Exec(`UPDATE idempotency SET expires_at = '2001-01-01T00:00:00.000Z'`); err != nil {
				t.Fatalf("move the source's key expiry into the past: %v", err)
			}
		}
	},
	"postgres": func(t *testing.T) (store.Store, func(t *testing.T)) {
		dsn := pgtest.DSN(t)
		db, err := postgres.Open(context.Background(), dsn, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db, func(t *testing.T) {
			conn, err := pgx.Connect(context.Background(), dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(context.Background())
			if _, err := conn.Exec(context.Background(), `UPDATE idempotency SET expires_at = now() - interval '1 year'`); err != nil {
				t.Fatalf("move the source's key expiry into the past: %v", err)
			}
		}
	},
}

// ackLosingSource applies the first relative save it is sent, then answers it with a lost
// connection: the source applied the change (and recorded its key), the working copy never
// hears so and keeps the entry in its outbox (a sync killed between the source's commit and
// the copy's acknowledgement).
type ackLosingSource struct {
	store.Store
	mu   gosync.Mutex
	lost []string // the keys whose answers were lost
}

func (s *ackLosingSource) UpdateRecord(ctx context.Context, kind store.Kind, id int64, u store.Update) (*store.UpdateResult, error) {
	res, err := s.Store.UpdateRecord(ctx, kind, id, u)
	if err != nil || len(u.Add) == 0 {
		return res, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.lost) > 0 {
		return res, err
	}
	s.lost = append(s.lost, u.IdempotencyKey)
	return nil, store.Errorf(store.EUNAVAILABLE, "connection lost after the commit of %s %d", kind, id)
}

// TestSync_LostAckOfRelativePush pushes an offline stock −5 whose acknowledgement is lost
// after the source applied it, then syncs again: once at once, and once after the source's
// key outlived its stored expiry (a copy that comes back after the key's lifetime, or
// whose sync ran on a process whose clock says so). Either way the change is on the source
// once, and the copy converges.
func TestSync_LostAckOfRelativePush(t *testing.T) {
	for name, open := range keySources {
		for _, late := range []bool{false, true} {
			label := name + "/at_once"
			if late {
				label = name + "/after_expiry"
			}
			t.Run(label, func(t *testing.T) {
				base, expire := open(t)
				src := &ackLosingSource{Store: base}
				p, err := base.CreateRecord(as("root"), store.KindProduct, store.Values{"sku": "ACK-1", "name": "lamp", "stock": int64(20)})
				if err != nil {
					t.Fatal(err)
				}
				wc := mustClone(t, src, "copy")
				mustAdjust(t, wc, "alice", p.ID, -5)

				if _, err := tsync.Sync(context.Background(), src, wc); store.ErrorCode(err) != store.EUNAVAILABLE {
					t.Fatalf("sync with a lost acknowledgement: %v; want the lost connection", err)
				}
				if len(src.lost) != 1 {
					t.Fatalf("answers lost: %v; want the relative push's", src.lost)
				}
				if got := mustGet(t, base, store.KindProduct, p.ID).Fields["stock"]; got != int64(15) {
					t.Fatalf("source stock after the first push = %v, want 15", got)
				}
				if late {
					expire(t)
					if _, err := base.PurgeKeys(context.Background()); err != nil {
						t.Fatal(err)
					}
				}

				rep := mustSync(t, src, wc)
				if !rep.InSync() {
					t.Fatalf("second sync: %+v; want in sync", rep)
				}
				if got := mustGet(t, base, store.KindProduct, p.ID); got.Fields["stock"] != int64(15) || got.Version != 2 {
					t.Errorf("source product after the re-sent push: stock %v at v%d; want 15 at v2 (the −5 once)", got.Fields["stock"], got.Version)
				}
				if got := mustGet(t, wc, store.KindProduct, p.ID).Fields["stock"]; got != int64(15) {
					t.Errorf("copy stock = %v, want 15", got)
				}
				if k, err := base.FindKey(context.Background(), store.ScopeAPI, src.lost[0]); err != nil || k.Status != store.KeyCompleted {
					t.Errorf("the push's key on the source = %+v, %v; want COMPLETED", k, err)
				}
			})
		}
	}
}

// TestSync_RestoredCopyResendsPush restores a working copy from a backup made before a sync
// that pushed an offline stock −5, after the source's key outlived its stored expiry: the
// restored copy still has the entry in its outbox and sends it again, and the source answers
// it as applied, so the −5 counts once and the copy converges.
func TestSync_RestoredCopyResendsPush(t *testing.T) {
	for name, open := range keySources {
		t.Run(name, func(t *testing.T) {
			src, expire := open(t)
			p, err := src.CreateRecord(as("root"), store.KindProduct, store.Values{"sku": "BAK-1", "name": "lamp", "stock": int64(20)})
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			path, backup := filepath.Join(dir, "copy.db"), filepath.Join(dir, "backup.db")
			wc := openNew(t, path)
			if _, err := tsync.Clone(context.Background(), src, wc, tsync.CloneOptions{Source: "test source"}); err != nil {
				t.Fatalf("clone: %v", err)
			}
			mustAdjust(t, wc, "alice", p.ID, -5)
			raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := raw.Exec(`VACUUM INTO ?`, backup); err != nil {
				t.Fatalf("back the copy up: %v", err)
			}
			raw.Close()
			if rep := mustSync(t, src, wc); !rep.InSync() || rep.Pushed != 1 {
				t.Fatalf("first sync: %+v; want one push, in sync", rep)
			}
			if err := wc.Close(); err != nil {
				t.Fatal(err)
			}
			expire(t)

			restored, err := sqlite.Open(context.Background(), backup, store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { restored.Close() })
			if rep := mustSync(t, src, restored); !rep.InSync() {
				t.Fatalf("sync of the restored copy: %+v; want in sync", rep)
			}
			if got := mustGet(t, src, store.KindProduct, p.ID); got.Fields["stock"] != int64(15) || got.Version != 2 {
				t.Errorf("source product after the restored copy's sync: stock %v at v%d; want 15 at v2 (the −5 once)", got.Fields["stock"], got.Version)
			}
			if got := mustGet(t, restored, store.KindProduct, p.ID).Fields["stock"]; got != int64(15) {
				t.Errorf("restored copy's stock = %v, want 15", got)
			}
		})
	}
}
