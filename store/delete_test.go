package store

import (
	"slices"
	"testing"
)

func TestDeleteOrder(t *testing.T) {
	// 1 ─ 2 ─ 4 ─ 5
	//   └ 3
	tree := map[int64]int64{2: 1, 3: 1, 4: 2, 5: 4}
	if got, want := DeleteOrder(1, tree), []int64{5, 4, 2, 3, 1}; !slices.Equal(got, want) {
		t.Errorf("DeleteOrder = %v, want %v (deepest first, the root last)", got, want)
	}
	if got := DeleteOrder(7, nil); !slices.Equal(got, []int64{7}) {
		t.Errorf("DeleteOrder without children = %v, want [7]", got)
	}
}

func TestPlanDelete(t *testing.T) {
	doc := &Record{Kind: KindDocument, ID: 1, Version: 3}
	if stale, err := PlanDelete(doc, Delete{ExpectVersion: 2}, nil); !stale || err != nil {
		t.Errorf("stale version: stale=%v err=%v, want stale", stale, err)
	}
	_, err := PlanDelete(doc, Delete{ExpectVersion: 3}, []int64{4, 5, 6, 7})
	if ErrorCode(err) != EINVALID || err.Error() != "document 1 has 4 child document(s) (4, 5, 6, …): delete them first, or delete the subtree with it" {
		t.Errorf("children without subtree: %v", err)
	}
	// A tree kind of a schema of one's own names its children by its own kind.
	area := &Record{Kind: "area", ID: 1, Version: 1}
	if _, err := PlanDelete(area, Delete{ExpectVersion: 1}, []int64{2}); err == nil ||
		err.Error() != "area 1 has 1 child area(s) (2): delete them first, or delete the subtree with it" {
		t.Errorf("an area with a child: %v", err)
	}
	if stale, err := PlanDelete(doc, Delete{ExpectVersion: 3, Subtree: true}, []int64{4}); stale || err != nil {
		t.Errorf("subtree: stale=%v err=%v, want a go", stale, err)
	}
}

func TestPlanRestore(t *testing.T) {
	reg := DefaultRegistry()
	cur := &Record{Kind: KindDocument, ID: 9, Version: 4, Fields: Values{"title": "T", "parent_id": int64(2)}}
	full, err := reg.CheckCreate(KindDocument, RoleEditor, cur.Fields)
	if err != nil {
		t.Fatal(err)
	}
	cur.Fields = full
	tomb, err := reg.NewTombstone(cur, "alice", cur.UpdatedAt)
	if err != nil {
		t.Fatal(err)
	}
	if tomb.Version != 5 || tomb.Event != EventDeleted || !tomb.IsSnapshot() {
		t.Fatalf("tombstone = %+v, want a v5 snapshot of event deleted", tomb)
	}
	gone := func(int64) (bool, error) { return false, nil }
	there := func(int64) (bool, error) { return true, nil }
	p, err := reg.PlanRestore(KindDocument, 9, Actor{Name: "alice"}, false, &tomb, there)
	if err != nil || p.Version != 6 || p.Parent != 2 || p.Note != "" || p.Values["title"] != "T" {
		t.Errorf("restore under an existing parent = %+v, %v", p, err)
	}
	p, err = reg.PlanRestore(KindDocument, 9, Actor{Name: "alice"}, false, &tomb, gone)
	if err != nil || p.Parent != 0 || p.Values["parent_id"] != nil || p.Note == "" {
		t.Errorf("restore with the parent gone = %+v, %v; want the root and a note", p, err)
	}
	if _, err := reg.PlanRestore(KindDocument, 9, Actor{Name: "alice"}, true, &tomb, there); ErrorCode(err) != EINVALID {
		t.Errorf("restore of a record that exists: %v, want EINVALID", err)
	}
	saved := HistoryRow{Version: 4, Snapshot: tomb.Snapshot}
	if _, err := reg.PlanRestore(KindDocument, 9, Actor{Name: "alice"}, false, &saved, there); ErrorCode(err) != ENOTFOUND {
		t.Errorf("restore without a tombstone: %v, want ENOTFOUND", err)
	}
	if _, err := reg.PlanRestore(KindDocument, 9, Actor{Name: "alice"}, false, nil, there); ErrorCode(err) != ENOTFOUND {
		t.Errorf("restore of a record with no history: %v, want ENOTFOUND", err)
	}
}
