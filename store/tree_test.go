package store

import "testing"

func TestCheckMoveCycle(t *testing.T) {
	for _, tt := range []struct {
		name       string
		id, parent int64
		up         []int64
		code, msg  string
	}{
		{"OK", 5, 9, []int64{9, 7, 1}, "", ""},
		{"ErrCycle", 5, 9, []int64{9, 7, 5, 1}, EINVALID, "moving 5 under 9 would create a cycle: 9 → 7 → 5"},
		{"ErrSelf", 5, 5, []int64{5, 1}, EINVALID, "moving 5 under 5 would create a cycle: 5 → 5"},
		{"ErrNoParent", 5, 9, nil, ENOTFOUND, "parent 9 not found"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckMoveCycle(tt.id, tt.parent, tt.up)
			if got := ErrorCode(err); got != tt.code {
				t.Fatalf("code = %q, want %q (%v)", got, tt.code, err)
			}
			if err != nil && err.Error() != tt.msg {
				t.Errorf("message = %q, want %q", err.Error(), tt.msg)
			}
		})
	}
}

func TestCheckMoveDepth(t *testing.T) {
	up := []int64{4, 3, 2, 1} // parent 4 at depth 4
	if err := CheckMoveDepth(10, 4, up, []int64{10, 11, 12, 13}); err != nil {
		t.Fatalf("depth 8: %v", err)
	}
	err := CheckMoveDepth(10, 4, up, []int64{10, 11, 12, 13, 14})
	want := "moving 10 under 4 would be 9 levels deep (max 8): 1 → 2 → 3 → 4 → 10 → 11 → 12 → 13 → 14"
	if ErrorCode(err) != EINVALID || err.Error() != want {
		t.Fatalf("depth 9: got %v, want %q", err, want)
	}
}

func TestCheckNewChild(t *testing.T) {
	if err := CheckNewChild(7, []int64{7, 6, 5, 4, 3, 2, 1}); err != nil {
		t.Fatalf("child at depth 8: %v", err)
	}
	err := CheckNewChild(8, []int64{8, 7, 6, 5, 4, 3, 2, 1})
	if ErrorCode(err) != EINVALID {
		t.Fatalf("child at depth 9: got %v, want EINVALID", err)
	}
	if ErrorCode(CheckNewChild(8, nil)) != ENOTFOUND {
		t.Fatal("missing parent: want ENOTFOUND")
	}
}

// TestCheckNewChild_AnyKind: a create too deep is refused in words that fit any tree kind
// (an area, say), not a document's.
func TestCheckNewChild_AnyKind(t *testing.T) {
	up := []int64{8, 7, 6, 5, 4, 3, 2, 1}
	err := CheckNewChild(8, up)
	if want := "a record under 8 would be 9 levels deep (max 8): 1 → 2 → 3 → 4 → 5 → 6 → 7 → 8 → new"; err == nil || err.Error() != want {
		t.Fatalf("CheckNewChild = %v, want %q", err, want)
	}
}
