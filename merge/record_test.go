package merge

import (
	"errors"
	"slices"
	"testing"

	"github.com/tandem-editor/tandem/store"
)

func TestRecords(t *testing.T) {
	reg := store.DefaultRegistry()
	base := store.Values{
		"name": "Lamp", "price": int64(2999), "stock": int64(10),
		"categories":  []string{"home", "light"},
		"description": "one\ntwo\nthree\nfour\nfive\n",
		"sku":         "L-1",
	}
	mine := base.Clone()
	mine["price"] = int64(3499)                            // scalar, only mine
	mine["stock"] = int64(7)                               // counter -3
	mine["categories"] = []string{"home", "light", "sale"} // set: add sale
	mine["description"] = "ONE\ntwo\nthree\nfour\nfive\n"  // text: first line
	mine["sku"] = "L-2"                                    // scalar, both
	theirs := base.Clone()
	theirs["stock"] = int64(15)                             // counter +5
	theirs["categories"] = []string{"home"}                 // set: remove light
	theirs["description"] = "one\ntwo\nthree\nfour\nFIVE\n" // text: last line
	theirs["sku"] = "L-3"
	theirs["name"] = "Desk lamp" // scalar, only theirs

	r := Records(reg, store.KindProduct, base, mine, theirs)
	want := map[string]struct {
		state FieldState
		value any
	}{
		"name":        {FieldClean, "Desk lamp"},
		"price":       {FieldClean, int64(3499)},
		"stock":       {FieldMerged, int64(12)},
		"categories":  {FieldMerged, []string{"home", "sale"}},
		"description": {FieldMerged, "ONE\ntwo\nthree\nfour\nFIVE\n"},
		"sku":         {FieldConflict, nil},
	}
	for name, w := range want {
		f := r.Field(name)
		if f == nil {
			t.Fatalf("no field %s", name)
		}
		if f.State != w.state {
			t.Errorf("%s: state %v, want %v", name, f.State, w.state)
		}
		if v, ok := f.Value(); w.state != FieldConflict && (!ok || !store.Equal(v, w.value)) {
			t.Errorf("%s: value %#v, want %#v", name, v, w.value)
		}
	}
	if got := r.Conflicts(); got != 1 {
		t.Fatalf("conflicts = %d, want 1", got)
	}
	if _, err := r.Values(); err == nil {
		t.Fatal("Values with an open conflict: no error")
	} else if se := (*store.Error)(nil); !errors.As(err, &se) || se.Code != store.ECONFLICT {
		t.Errorf("Values error = %v, want ECONFLICT", err)
	}
	if err := r.Resolve("sku", PickBoth); err == nil {
		t.Error("PickBoth on a string field: no error")
	}
	if err := r.Resolve("sku", PickOurs); err != nil {
		t.Fatal(err)
	}
	ch, err := r.Changes()
	if err != nil {
		t.Fatal(err)
	}
	wantChanges := []string{"categories", "description", "price", "sku", "stock"}
	var got []string
	for k := range ch {
		got = append(got, k)
	}
	slices.Sort(got)
	if !slices.Equal(got, wantChanges) {
		t.Errorf("changes = %v, want %v", got, wantChanges)
	}
	if _, ok := r.Undo(); !ok || r.Conflicts() != 1 {
		t.Error("undo did not reopen the conflict")
	}
	if err := r.ResolveValue("sku", int64(5)); err == nil {
		t.Error("ResolveValue with the wrong type: no error")
	}
	if err := r.ResolveValue("sku", "L-9"); err != nil {
		t.Fatal(err)
	}
	if v, _ := r.Values(); v["sku"] != "L-9" {
		t.Errorf("sku = %v, want L-9", v["sku"])
	}
}

func TestRecords_TextConflictPerHunk(t *testing.T) {
	reg := store.DefaultRegistry()
	base := store.Values{"title": "T", "body": "a\nb\nc\n"}
	mine := store.Values{"title": "T", "body": "a\nmine\nc\n"}
	theirs := store.Values{"title": "T", "body": "a\ntheirs\nc\n"}
	r := Records(reg, store.KindDocument, base, mine, theirs)
	f := r.Field("body")
	if f.State != FieldConflict || f.Text == nil {
		t.Fatalf("body: state %v, text %v; want a text conflict", f.State, f.Text)
	}
	if r.Field("tags") != nil {
		t.Error("field absent from all three versions was merged")
	}
	if err := f.Text.Pick(0, PickTheirs); err != nil {
		t.Fatal(err)
	}
	vals, err := r.Values()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := vals["body"], "a\ntheirs\nc\n"; got != want {
		t.Errorf("body = %q, want %q", got, want)
	}
	ch, _ := r.Changes()
	if len(ch) != 0 {
		t.Errorf("changes = %v, want none (the result equals theirs)", ch)
	}
}

func TestRecords_Rules(t *testing.T) {
	reg := store.DefaultRegistry()
	tests := []struct {
		name             string
		field            string
		base, mine, thrs any
		state            FieldState
		want             any
	}{
		{"same value both sides", "price", int64(1), int64(2), int64(2), FieldMerged, int64(2)},
		{"scalar conflict", "price", int64(1), int64(2), int64(3), FieldConflict, nil},
		{"counter", "stock", int64(10), int64(7), int64(15), FieldMerged, int64(12)},
		{"counter overflow conflicts", "stock", int64(0), int64(1), int64(1<<63 - 1), FieldConflict, nil},
		{"set add both", "categories", []string{"a"}, []string{"a", "b"}, []string{"a", "c"}, FieldMerged, []string{"a", "b", "c"}},
		{"set remove and add", "categories", []string{"a", "b"}, []string{"b"}, []string{"a", "b", "c"}, FieldMerged, []string{"b", "c"}},
		{"set wrong type conflicts", "categories", []string{"a"}, "x", []string{"b"}, FieldConflict, nil},
		{"unchanged", "name", "x", "x", "x", FieldUnchanged, "x"},
		{"enum scalar one side", "availability", "in_stock", "in_stock", "backorder", FieldClean, "backorder"},
		{"text overlapping", "description", "a\n", "b\n", "c\n", FieldConflict, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Records(reg, store.KindProduct,
				store.Values{tt.field: tt.base}, store.Values{tt.field: tt.mine}, store.Values{tt.field: tt.thrs})
			f := r.Field(tt.field)
			if f.State != tt.state {
				t.Fatalf("state %v, want %v", f.State, tt.state)
			}
			if v, ok := f.Value(); ok != (tt.state != FieldConflict) || (ok && !store.Equal(v, tt.want)) {
				t.Errorf("value %#v (%v), want %#v", v, ok, tt.want)
			}
		})
	}
}

// TestRecords_PickHunkUndo checks that hunk picks and whole-field resolutions
// share one undo stack, undone in the order they were made.
func TestRecords_PickHunkUndo(t *testing.T) {
	reg := store.DefaultRegistry()
	base := store.Values{"title": "T", "body": "a\nb\nc\nd\ne\nx\nf\ng\n"}
	mine := store.Values{"title": "M", "body": "a\nB1\nc\nd\ne\nx\nF1\ng\n"}
	theirs := store.Values{"title": "H", "body": "a\nB2\nc\nd\ne\nx\nF2\ng\n"}
	r := Records(reg, store.KindDocument, base, mine, theirs)
	body := r.Field("body")
	if body.Text == nil || body.Text.Hunks() != 2 {
		t.Fatalf("body: want a text conflict with 2 hunks, got %+v", body)
	}
	value := func() any {
		t.Helper()
		v, _ := body.Value()
		return v
	}
	if err := r.PickHunk("title", 0, PickOurs); err == nil {
		t.Error("PickHunk on a field without hunks: no error")
	}
	if err := r.PickHunk("body", 2, PickOurs); err == nil {
		t.Error("PickHunk out of range: no error")
	}
	if err := r.PickHunk("body", 0, PickTheirs); err != nil {
		t.Fatal(err)
	}
	if err := r.Resolve("title", PickOurs); err != nil {
		t.Fatal(err)
	}
	if n, err := r.PickRemaining("body", PickOurs); err != nil || n != 1 {
		t.Fatalf("PickRemaining = %d, %v; want 1", n, err)
	}
	if got, want := value(), "a\nB2\nc\nd\ne\nx\nF1\ng\n"; got != want {
		t.Fatalf("body = %q, want %q", got, want)
	}
	// An edit of the whole field, then a hunk pick: the field goes back to its hunks.
	if err := r.ResolveValue("body", "edited\n"); err != nil {
		t.Fatal(err)
	}
	if got := value(); got != "edited\n" {
		t.Fatalf("body = %q after ResolveValue", got)
	}
	if err := r.PickHunk("body", 1, PickBase); err != nil {
		t.Fatal(err)
	}
	if got, want := value(), "a\nB2\nc\nd\ne\nx\nf\ng\n"; got != want {
		t.Fatalf("body = %q after a hunk pick over an edit, want %q", got, want)
	}
	steps := []struct {
		body      any
		conflicts int
		undone    string // what Undo says it reverted
	}{
		{"edited\n", 0, "undid hunk 2: base in body"},                    // the hunk pick: the edit is back
		{"a\nB2\nc\nd\ne\nx\nF1\ng\n", 0, "undid value: edited in body"}, // the edit
		{nil, 1, "undid 1 remaining hunks: mine in body"},                // pick remaining: body open again
		{nil, 2, "undid value: mine in title"},                           // title
		{nil, 2, "undid hunk 1: theirs in body"},                         // the first hunk pick
	}
	for i, s := range steps {
		u, ok := r.Undo()
		if !ok {
			t.Fatalf("undo %d: nothing to undo", i+1)
		}
		if u.String() != s.undone {
			t.Errorf("undo %d says %q, want %q", i+1, u.String(), s.undone)
		}
		if got := value(); !store.Equal(got, s.body) {
			t.Errorf("undo %d: body = %q, want %q", i+1, got, s.body)
		}
		if got := r.Conflicts(); got != s.conflicts {
			t.Errorf("undo %d: conflicts = %d, want %d", i+1, got, s.conflicts)
		}
	}
	if c, _ := body.Text.Choice(0); c.Pick != PickNone {
		t.Errorf("hunk 0 after undoing everything: %v", c.Pick)
	}
	if _, ok := r.Undo(); ok {
		t.Error("undo past the first step reported true")
	}
}
