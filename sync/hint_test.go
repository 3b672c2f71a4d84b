package sync_test

import (
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
	tsync "github.com/tandem-editor/tandem/sync"
)

// TestSync_HintsNameTheLocalVersion: the hints of a create's conflict that send the person
// to tandem delete give the local record's version, which --expect-version needs, and not a
// placeholder to look up; a conflict whose record the copy does not hold says where N comes
// from.
func TestSync_HintsNameTheLocalVersion(t *testing.T) {
	for name, open := range sources {
		t.Run(name, func(t *testing.T) {
			a, mine, _, _ := mustCreateConflict(t, open(t))
			// A local save after the sync: the hint gives the version the copy has now.
			if _, err := a.UpdateRecord(as("alice"), store.KindProduct, mine.ID, store.Update{BaseVersion: 1, Set: store.Values{"name": "copy 2"}}); err != nil {
				t.Fatal(err)
			}
			cs, err := a.Conflicts(as("alice"))
			if err != nil || len(cs) != 1 {
				t.Fatalf("conflicts %v (%v), want the create's", describe(cs), err)
			}
			c := cs[0]
			want := "tandem delete product " + itoa(mine.ID) + " --expect-version 2"
			if h := tsync.Hint(&c); !strings.Contains(h, want+" ") {
				t.Errorf("hint %q, want %q", h, want)
			}
			_, err = tsync.Resolve(as("alice"), a, store.KindProduct, mine.ID, tsync.Picks{"sku": "theirs"})
			if err == nil || !strings.Contains(err.Error(), want+")") {
				t.Errorf("refusal of theirs: %v, want %q", err, want)
			}

			c.LocalVersion = 0 // a record the copy does not hold: no version to give
			if h := tsync.Hint(&c); strings.Contains(h, "--expect-version N ") || !strings.Contains(h, "tandem get product "+itoa(mine.ID)) {
				t.Errorf("hint without the local version %q, want it to say tandem get product %d gives N", h, mine.ID)
			}
		})
	}
}
