package sync_test

import (
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
	tsync "github.com/tandem-editor/tandem/sync"
)

// TestSync_CountsAfterConflicts: what a sync reports counts what it did, also for records
// that come back or go once a person settled a conflict (the copy reads them again from
// the source, outside the change feed), and a move refused because its new parent is gone
// says so, not that the moved document is gone.
func TestSync_CountsAfterConflicts(t *testing.T) {
	for name, open := range sources {
		t.Run(name, func(t *testing.T) {
			src := open(t)
			f := seed(t, src)
			wc := mustClone(t, src, "wc")

			// A move under a document the source deletes meanwhile.
			mustMove(t, wc, "erin", f.x, f.y)
			mustDelete(t, src, store.KindDocument, f.y, false)
			// A local delete of a document the source changes meanwhile.
			mustDelete(t, wc, store.KindDocument, f.text, false)
			mustSet(t, src, "bob", store.KindDocument, f.text, store.Values{"title": "text 2"})

			rep := mustSync(t, src, wc)
			if len(rep.Conflicts) != 2 {
				t.Fatalf("conflicts %v, want the move of %d and the delete of %d", describe(rep.Conflicts), f.x, f.text)
			}
			var move *store.CopyConflict
			for i := range rep.Conflicts {
				if c := &rep.Conflicts[i]; c.ID == f.x {
					move = c
				}
			}
			if move == nil {
				t.Fatalf("no conflict for the move of %d: %v", f.x, describe(rep.Conflicts))
			}
			if move.Gone() || strings.Contains(move.Reason, "not on the source any more") ||
				!strings.Contains(move.Reason, "new parent") || !strings.Contains(move.Reason, "parent "+itoa(f.y)+" not found") {
				t.Errorf("move conflict of document %d (on the source, its new parent %d is not): gone %v, reason %q",
					f.x, f.y, move.Gone(), move.Reason)
			}
			if absent(t, wc, store.KindDocument, f.y) {
				t.Fatalf("document %d left the copy while %d still sits under it there", f.y, f.x)
			}

			// theirs for both: the source's text comes back, x goes back under root, and y,
			// which nothing holds in the copy any more, goes.
			if err := tsync.ResolveDelete(as("erin"), wc, store.KindDocument, f.text, "theirs"); err != nil {
				t.Fatal(err)
			}
			if _, err := tsync.Resolve(as("erin"), wc, store.KindDocument, f.x, tsync.Picks{store.ParentField: "theirs"}); err != nil {
				t.Fatal(err)
			}
			rep = mustSync(t, src, wc)
			if !rep.InSync() {
				t.Fatalf("not in sync after the resolutions: %v, pending %d", describe(rep.Conflicts), rep.Pending)
			}
			if r := mustGet(t, wc, store.KindDocument, f.text); r.Fields["title"] != "text 2" {
				t.Errorf("document %d in the copy: title %v, want the source's", f.text, r.Fields["title"])
			}
			if !absent(t, wc, store.KindDocument, f.y) {
				t.Errorf("document %d, deleted on the source, is still in the copy", f.y)
			}
			if rep.Pulled < 1 {
				t.Errorf("the sync that brought document %d back reports %d records pulled", f.text, rep.Pulled)
			}
			if rep.Removed != 1 {
				t.Errorf("the sync that removed document %d reports %d records removed, want 1", f.y, rep.Removed)
			}
			assertConverged(t, src, wc, nil)
		})
	}
}
