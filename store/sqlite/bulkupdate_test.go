package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/internal/testfs"
	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/sqlite"
)

// TestUpdateRecords_SameRowsAsUpdateRecord: the same saves, made in a batch by
// UpdateRecords (UpdateRecord for each it leaves) and by UpdateRecord one after the other,
// give the same results and leave the same rows: records, search rows (and an FTS5 index
// that agrees with them and finds the same records), history versions as stored (a delta on
// the record's history tail, a text patch made from the pre-image, a snapshot where the
// chain ends), changes in order and keys. Among the saves: long text changed (a patch), a
// title, a save without history, a stale base, one that changes nothing, a lease row, a
// key the store holds already. Both ways run in a batch that a failed save makes run
// again with savepoints, and in one that does not.
func TestUpdateRecords_SameRowsAsUpdateRecord(t *testing.T) {
	const n = 40
	long := strings.Repeat("a body long enough that a history version stores a patch of it\n", 80) // over store.PatchMinBytes
	setUp := func(db *sqlite.DB) {
		ctx := store.WithActor(t.Context(), store.Actor{Name: "alice", Role: store.RoleEditor})
		for i := range n {
			r, err := db.CreateRecord(ctx, store.KindDocument, store.Values{"title": fmt.Sprintf("Doc %d", i), "body": long + fmt.Sprint(i)})
			if err != nil {
				t.Fatal(err)
			}
			for v := range int64(i % 5) {
				c := ctx
				if v%2 == 1 {
					c = store.WithoutHistory(ctx)
				}
				if _, err := db.UpdateRecord(c, store.KindDocument, r.ID, store.Update{BaseVersion: r.Version + v,
					Set: store.Values{"title": fmt.Sprintf("Doc %d v%d", i, v+2)}}); err != nil {
					t.Fatal(err)
				}
			}
		}
		bob := store.WithActor(t.Context(), store.Actor{Name: "bob", Role: store.RoleEditor})
		if _, err := db.AcquireLease(bob, store.LeaseRequest{Kind: store.KindDocument, RecordID: 7, Group: db.Registry().Groups(store.KindDocument)[0], TTL: 60e9}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.UpdateRecord(ctx, store.KindDocument, 9, store.Update{BaseVersion: 4, Set: store.Values{"title": "keyed"}, IdempotencyKey: "k-9"}); err != nil {
			t.Fatal(err)
		}
	}
	saves := func(clean bool) []store.RecordUpdate {
		var ups []store.RecordUpdate
		for i := range n {
			id := int64(i + 1)
			base := 1 + int64(i%5)
			if id == 9 {
				base++
			}
			u := store.Update{BaseVersion: base, IdempotencyKey: fmt.Sprintf("k-%d", id)}
			switch {
			case i%11 == 3 && !clean:
				u.BaseVersion-- // stale
				u.Set = store.Values{"title": "stale"}
			case i%13 == 4:
				u.Set = store.Values{"title": fmt.Sprintf("Doc %d", i)}
				if base > 1 {
					u.Set["title"] = fmt.Sprintf("Doc %d v%d", i, base)
				}
			case i%2 == 0:
				u.Set = store.Values{"body": long + fmt.Sprintf("%d, changed", i)}
			default:
				u.Set = store.Values{"title": fmt.Sprintf("Renamed %d", i), "tags": []string{"t" + fmt.Sprint(i)}}
			}
			if clean && (id == 7 || id == 9) {
				continue // the leased record, and the key held for another request
			}
			ups = append(ups, store.RecordUpdate{Kind: store.KindDocument, ID: id, Update: u})
		}
		return ups
	}
	run := func(bulk, clean bool) (results, rows string, saved int) {
		path := filepath.Join(t.TempDir(), "t.db")
		testfs.CopyFile(t, templatePath(t), path)
		newStoreID(t, path)
		db, err := sqlite.Open(t.Context(), path, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		setUp(db)
		ctx := store.WithActor(t.Context(), store.Actor{Name: "alice", Role: store.RoleEditor})
		var b strings.Builder
		err = db.WriteBatch(ctx, func(bctx context.Context) error {
			b.Reset()
			saved = 0
			ups := saves(clean)
			for len(ups) > 0 {
				if bulk {
					done, err := db.UpdateRecords(bctx, ups)
					if err != nil {
						return err
					}
					for _, r := range done {
						fmt.Fprintf(&b, "v%d %v %v %v\n", r.Version, r.Replayed, r.Unchanged, r.Record.Fields["title"])
					}
					saved += len(done)
					if ups = ups[len(done):]; len(ups) == 0 {
						break
					}
				}
				r, err := db.UpdateRecord(bctx, ups[0].Kind, ups[0].ID, ups[0].Update)
				if err != nil {
					fmt.Fprintf(&b, "%s\n", store.ErrorCode(err))
				} else {
					fmt.Fprintf(&b, "v%d %v %v %v\n", r.Version, r.Replayed, r.Unchanged, r.Record.Fields["title"])
				}
				ups = ups[1:]
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		found, err := db.FindRecords(ctx, store.Filter{Kind: store.KindDocument, Search: "renamed"})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range found {
			fmt.Fprintf(&b, "found %d ", r.ID)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		return b.String(), dumpRows(t, path), saved
	}
	for _, clean := range []bool{false, true} {
		wantResults, wantRows, _ := run(false, clean)
		want := []string{"true", "found"}
		if !clean {
			want = append(want, store.ECONFLICT, store.ELEASE, store.EINVALID)
		}
		for _, w := range want {
			if !strings.Contains(wantResults, w) {
				t.Errorf("no save answered %s:\n%s", w, wantResults)
			}
		}
		results, rows, saved := run(true, clean)
		if results != wantResults {
			t.Errorf("results\n%s\nwant (UpdateRecord)\n%s", results, wantResults)
		}
		if rows != wantRows {
			t.Errorf("rows\n%s\nwant (UpdateRecord)\n%s", rows, wantRows)
		}
		if saved < n/2 {
			t.Errorf("%d of %d saves made in bulk, want most", saved, n)
		}
	}
}

// dumpRows returns the rows of the documents, their search rows, history, changes and
// keys, without their times, from the store at path (closed), after FTS5's check that the
// documents' index agrees with the search rows.
func dumpRows(t *testing.T, path string) string {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("INSERT INTO documents_fts (documents_fts, rank) VALUES ('integrity-check', 1)"); err != nil {
		t.Errorf("documents_fts: %v", err)
	}
	var b strings.Builder
	for _, q := range []string{
		`SELECT id, version, updated_by, title, body, tags FROM documents ORDER BY id`,
		`SELECT key, fold FROM documents_search ORDER BY key`,
		`SELECT kind, record_id, version, actor, fields, coalesce(base, 0), coalesce(snapshot, ''), coalesce(delta, '') FROM history ORDER BY kind, record_id, version`,
		`SELECT event, kind, record_id, version, actor, role, fields, coalesce(deltas, ''), history FROM changes ORDER BY id`,
		`SELECT scope, key, status, request_hash, coalesce(result, ''), owner FROM idempotency ORDER BY scope, key`,
	} {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintln(&b, vals...)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
	}
	return b.String()
}

// TestUpdateRecords_OutsideBatch: a bulk save needs a batch of the store.
func TestUpdateRecords_OutsideBatch(t *testing.T) {
	db := openTemp(t, store.Options{}).(*sqlite.DB)
	t.Cleanup(func() { _ = db.Close() })
	ctx := store.WithActor(t.Context(), store.Actor{Name: "alice", Role: store.RoleEditor})
	_, err := db.UpdateRecords(ctx, []store.RecordUpdate{{Kind: store.KindDocument, ID: 1, Update: store.Update{BaseVersion: 1, Set: store.Values{"title": "x"}}}})
	if store.ErrorCode(err) != store.EINVALID {
		t.Errorf("UpdateRecords outside a batch: %v, want %s", err, store.EINVALID)
	}
}
