package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/tandem-editor/tandem/store/postgres/pgtest"

	"github.com/tandem-editor/tandem/store"
)

// openChange takes a change id inside a transaction that stays open until the returned
// function commits (true) or rolls it back (false): a writer that took its id and has not
// committed yet.
func openChange(t *testing.T, db *DB, recordID int64) (int64, func(commit bool)) {
	t.Helper()
	tx, err := db.pool.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	id, err := db.insertChange(t.Context(), tx, store.Change{Event: store.EventSaved, Kind: store.KindProduct,
		RecordID: recordID, Version: 1000, Actor: "late", Role: store.RoleSystem, At: time.Now().UTC()})
	if err != nil {
		t.Fatal(err)
	}
	done := false
	end := func(commit bool) {
		if done {
			return
		}
		done = true
		if commit {
			if err := tx.Commit(t.Context()); err != nil {
				t.Fatal(err)
			}
			return
		}
		_ = tx.Rollback(context.WithoutCancel(t.Context()))
	}
	t.Cleanup(func() { end(false) })
	return id, end
}

func ids(cs []store.Change) []int64 {
	var out []int64
	for _, c := range cs {
		out = append(out, c.ID)
	}
	return out
}

// TestChanges_LateCommit holds a transaction open after it took a change id, while a later
// save commits with a higher id. Neither Changes nor a subscriber may deliver the later id
// before the open transaction ends: a cursor moved past it would never see the earlier one.
// Once it commits, both deliver the two in id order; a transaction that took an id and
// rolled back leaves a gap that holds nothing up.
func TestChanges_LateCommit(t *testing.T) {
	db := mustOpen(t, pgtest.DSN(t))
	p := mustCreateProduct(t, db, "LATE")
	from, err := db.LastChangeID(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	feed, err := db.Subscribe(ctx, from)
	if err != nil {
		t.Fatal(err)
	}

	early, commit := openChange(t, db, p.ID)
	res, err := db.UpdateRecord(actx(t, alice), store.KindProduct, p.ID, store.Update{Add: map[string]int64{"stock": 1}})
	if err != nil {
		t.Fatalf("save while another writer is open: %v", err)
	}
	var later int64
	for _, c := range mustAll(t, db, p.ID) {
		if c.Version == res.Record.Version {
			later = c.ID
		}
	}
	if later <= early {
		t.Fatalf("the committed save has id %d, want above the open writer's %d", later, early)
	}
	// While the early writer is open, nothing after from is settled.
	short, stop := context.WithTimeout(t.Context(), time.Second)
	got, err := db.Changes(short, from, 0)
	stop()
	if len(got) != 0 || err == nil {
		t.Fatalf("Changes while an earlier id is open = %v, %v; want nothing (a wait that ends with the context)", ids(got), err)
	}
	select {
	case c := <-feed:
		t.Fatalf("subscriber delivered change %d while change %d was still open", c.ID, early)
	case <-time.After(time.Second):
	}

	commit(true)
	got, err = db.Changes(t.Context(), from, 0)
	if err != nil || len(got) != 2 || got[0].ID != early || got[1].ID != later {
		t.Fatalf("Changes after the commit = %v, %v; want [%d %d]", ids(got), err, early, later)
	}
	for _, want := range []int64{early, later} {
		select {
		case c := <-feed:
			if c.ID != want {
				t.Fatalf("subscriber delivered %d, want %d", c.ID, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("subscriber did not deliver %d", want)
		}
	}

	// A writer that took an id and rolled back: the ids after it are delivered.
	_, rollback := openChange(t, db, p.ID)
	if _, err := db.UpdateRecord(actx(t, alice), store.KindProduct, p.ID, store.Update{Add: map[string]int64{"stock": 1}}); err != nil {
		t.Fatal(err)
	}
	rollback(false)
	got, err = db.Changes(t.Context(), later, 0)
	if err != nil || len(got) != 1 || got[0].Version != res.Record.Version+1 {
		t.Fatalf("Changes after a rollback = %v, %v; want the one save", ids(got), err)
	}
	select {
	case c := <-feed:
		if c.ID != got[0].ID {
			t.Fatalf("subscriber delivered %d, want %d", c.ID, got[0].ID)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("subscriber did not deliver %d past the rolled-back id", got[0].ID)
	}
	last, err := db.LastChangeID(t.Context())
	if err != nil || last != got[0].ID {
		t.Fatalf("LastChangeID = %d, %v; want %d", last, err, got[0].ID)
	}
}

// mustAll reads every change of a product straight from the table, settled or not.
func mustAll(t *testing.T, db *DB, id int64) []store.Change {
	t.Helper()
	cs, err := queryChanges(t.Context(), db.pool, "SELECT "+changeColumns+" FROM changes WHERE record_id = $1 ORDER BY id", id)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// TestChanges_OtherTransactionsHoldNothingBack: a transaction with an xid that stays open
// elsewhere on the server, in another database or in this one without writing this store's
// change log (another application's long transaction), holds no change back: Changes,
// LastChangeID and a subscriber deliver a save made meanwhile at once, not after the settle
// budget. The context's bound is only where the test gives up.
func TestChanges_OtherTransactionsHoldNothingBack(t *testing.T) {
	dsn := pgtest.DSN(t)
	for _, c := range []struct{ name, database string }{
		{"AnotherDatabase", "postgres"},
		{"SameDatabase", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := mustOpen(t, dsn)
			p := mustCreateProduct(t, db, "OTHER-"+c.name)
			from, err := db.LastChangeID(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			feed, err := db.Subscribe(t.Context(), from)
			if err != nil {
				t.Fatal(err)
			}

			cfg, err := pgx.ParseConfig(dsn)
			if err != nil {
				t.Fatal(err)
			}
			if c.database != "" {
				cfg.Database = c.database
			}
			other, err := pgx.ConnectConfig(t.Context(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close(context.WithoutCancel(t.Context()))
			tx, err := other.Begin(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(context.WithoutCancel(t.Context()))
			var xid int64
			if err := tx.QueryRow(t.Context(), "SELECT txid_current()").Scan(&xid); err != nil {
				t.Fatal(err)
			}

			if _, err := db.UpdateRecord(actx(t, alice), store.KindProduct, p.ID, store.Update{Add: map[string]int64{"stock": 1}}); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			got, err := db.Changes(ctx, from, 0)
			if err != nil || len(got) != 1 {
				t.Fatalf("Changes while xid %d is open in database %q = %v, %v; want the save at once", xid, cfg.Database, ids(got), err)
			}
			last, err := db.LastChangeID(ctx)
			if err != nil || last != got[0].ID {
				t.Fatalf("LastChangeID while xid %d is open = %d, %v; want %d", xid, last, err, got[0].ID)
			}
			select {
			case ch := <-feed:
				if ch.ID != got[0].ID {
					t.Fatalf("subscriber delivered %d, want %d", ch.ID, got[0].ID)
				}
			case <-ctx.Done():
				t.Fatalf("subscriber delivered nothing while xid %d is open in database %q", xid, cfg.Database)
			}
		})
	}
}
