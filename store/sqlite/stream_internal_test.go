package sqlite

import (
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
)

// streamAll streams f with every field and returns copies of the records.
func streamAll(t *testing.T, db *DB, f store.Filter) []*store.Record {
	t.Helper()
	var out []*store.Record
	err := db.StreamRecords(t.Context(), f, nil, func(r *store.Record) error {
		c := *r
		c.Fields = maps.Clone(r.Fields)
		out = append(out, &c)
		return nil
	})
	if err != nil {
		t.Fatalf("stream %+v: %v", f, err)
	}
	return out
}

// sameAsFind fails t unless streaming f gives what FindRecords finds, value for value.
func sameAsFind(t *testing.T, db *DB, f store.Filter) {
	t.Helper()
	want, err := db.FindRecords(t.Context(), f)
	if err != nil {
		t.Fatal(err)
	}
	got := streamAll(t, db, f)
	if len(got) != len(want) {
		t.Fatalf("%+v: streamed %d records, FindRecords finds %d", f, len(got), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("%+v: record %d streamed as\n%+v\nFindRecords finds\n%+v", f, i, got[i], want[i])
		}
	}
}

// TestStreamRecords_PackedValues: the packed row (one concat() of length-prefixed columns)
// gives back every value as FindRecords reads it, whatever the value holds: the packing's
// own separators (colons, commas, digits after a length), NUL and other bytes the API
// refuses but another program may have written, multi-byte text, empty strings, NULL refs
// and times, large integers; and whatever the number of columns one concat() packs.
func TestStreamRecords_PackedValues(t *testing.T) {
	db, err := Open(t.Context(), filepath.Join(t.TempDir(), "t.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := store.WithActor(t.Context(), store.Actor{Name: "a:1,2", Role: store.RoleEditor})
	texts := []string{"", ":", ",", "12:ab", "3:,", "Ψυχή: σοφία, 42", "line one\nline two\n", `quote " and \ back`}
	for i, s := range texts {
		if _, err := db.CreateRecord(ctx, store.KindProduct, store.Values{"sku": fmt.Sprintf("P-%d", i), "name": strings.ReplaceAll(s, "\n", " ") + "n",
			"description": s, "categories": store.NormalizeSet([]string{fmt.Sprintf("%d:c", i), `q"uote`, "Ψ:"}),
			"price": int64(i) * 1_000_000_007, "stock": int64(-i)}); err != nil {
			t.Fatalf("create %q: %v", s, err)
		}
	}
	parent, err := db.CreateRecord(ctx, store.KindDocument, store.Values{"title": "1:2,3", "body": "b"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateRecord(ctx, store.KindDocument, store.Values{"title": "child", "parent_id": parent.ID, "tags": []string{"a", "b"}}); err != nil {
		t.Fatal(err)
	}
	// What the API refuses (a NUL, a control character, the largest integers) written by
	// another program.
	if _, err := db.write.ExecContext(t.Context(), "UPDATE products SET name = 'a' || char(0) || 'b:' || char(1), stock = -9223372036854775808, price = 9223372036854775807, last_sync_at = '2026-01-02T03:04:05.123456789Z' WHERE sku = 'P-1'"); err != nil {
		t.Fatal(err)
	}
	for _, group := range []int{1, 2, 3, 40} {
		old := packGroup
		packGroup = group
		for _, kind := range sampleSchema.Kinds() {
			sameAsFind(t, db, store.Filter{Kind: kind})
		}
		packGroup = old
	}
	got := streamAll(t, db, store.Filter{Kind: store.KindProduct})
	if name := got[1].Fields["name"]; name != "a\x00b:\x01" {
		t.Errorf("name with a NUL streamed as %q", name)
	}
	if got[1].Fields["last_sync_at"] == nil || got[0].Fields["last_sync_at"] != nil {
		t.Errorf("last_sync_at streamed as %v and %v, want a time and nil", got[1].Fields["last_sync_at"], got[0].Fields["last_sync_at"])
	}
}

// TestStreamRecords_SearchPlans: a streamed search that matches at least 1/scanShare of
// the rows reads the table with instr() and a rarer one goes through the trigram index,
// and both find what FindRecords finds (the contract, run with each plan forced).
func TestStreamRecords_SearchPlans(t *testing.T) {
	db, err := Open(t.Context(), filepath.Join(t.TempDir(), "t.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := store.WithActor(t.Context(), store.Actor{Name: "alice", Role: store.RoleEditor})
	var ids []int64
	for i := range 40 {
		name := "Common part"
		if i%10 == 3 {
			name = "Rare lamp"
		}
		r, err := db.CreateRecord(ctx, store.KindProduct, store.Values{"sku": fmt.Sprintf("RUN-%d", i), "name": name})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	plan := func(f store.Filter) string {
		t.Helper()
		cond, _, err := db.streamSearchCondition(t.Context(), f)
		if err != nil {
			t.Fatal(err)
		}
		return cond
	}
	// 1/4 of the rows by default: 40 of 40 and 36 of 40 match, 4 of 40 do not reach 10.
	for q, scan := range map[string]bool{"run-": true, "common": true, "rare lamp": false, "nowhere": false} {
		f := store.Filter{Kind: store.KindProduct, Search: q}
		cond := plan(f)
		if got := isScan(cond); got != scan {
			t.Errorf("search %q: condition %s, want a scan: %v", q, cond, scan)
		}
		sameAsFind(t, db, f)
	}
	// Above an id, the share is of the rows above it: of the last 10, 1 matches "rare lamp"
	// (the index) and 9 "common" (a scan).
	if cond := plan(store.Filter{Kind: store.KindProduct, Search: "rare lamp", AfterID: ids[29]}); isScan(cond) {
		t.Errorf("rare search above an id: condition %s, want the index", cond)
	}
	if cond := plan(store.Filter{Kind: store.KindProduct, Search: "common", AfterID: ids[29]}); !isScan(cond) {
		t.Errorf("common search above an id: condition %s, want a scan", cond)
	}
	for _, f := range []store.Filter{{Search: "rare lamp", AfterID: ids[5]}, {Search: "common", AfterID: ids[29]}} {
		f.Kind = store.KindProduct
		sameAsFind(t, db, f)
	}
	// A short query never reaches the index: instr() on the side tables.
	if cond := plan(store.Filter{Kind: store.KindProduct, Search: "ra"}); !isScan(cond) {
		t.Errorf("a two-letter search: condition %s, want instr()", cond)
	}
}

// isScan reports whether a search condition is the scan of the side tables (instr() on
// their folds), not a lookup in the trigram indexes.
func isScan(cond string) bool {
	return strings.Contains(cond, "instr(fold, ?)") && !strings.Contains(cond, "MATCH")
}
