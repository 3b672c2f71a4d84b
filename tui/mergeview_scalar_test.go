package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/tandem-editor/tandem/merge"
	"github.com/tandem-editor/tandem/store"
)

// TestMergeView_TextKeysOnScalar: the footer offers b (both), n/p, M/T and w; on a price
// both sides changed they do nothing a field of one value can take, so each says so instead
// of being silently ignored, and the conflict stays open.
func TestMergeView_TextKeysOnScalar(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	d := newDriver(t, s, "alice")
	base := mustRecord(t, s, 1)
	cur := base.Clone()
	cur.Version, cur.UpdatedBy = 2, "bob"
	cur.Fields["price"] = int64(9500)
	mv := base.Fields.Clone()
	mv["price"] = int64(9200)
	cs := &conflictState{
		ce:   &store.ConflictError{Kind: store.KindProduct, ID: 1, BaseVersion: 1, Current: cur},
		u:    store.Update{BaseVersion: 1, Set: store.Values{"price": int64(9200)}},
		rm:   merge.Records(d.app.c.reg, store.KindProduct, base.Fields, mv, cur.Fields),
		base: base, mine: mv,
	}
	m := newMergeView(d.app.c, cs)
	if m.rm.Conflicts() != 1 || m.rm.Fields[m.cursor].Field.Name != "price" {
		t.Fatalf("the merge view does not open on the price conflict: %d conflicts", m.rm.Conflicts())
	}
	for _, k := range []string{"b", "n", "M", "w"} {
		m.Update(keyMsg(k))
		if got := ansi.Strip(m.View()); !strings.Contains(got, "only in text fields") {
			t.Errorf("%s on the price says nothing:\n%s", k, got)
		}
		if m.rm.Conflicts() != 1 {
			t.Fatalf("%s resolved the price", k)
		}
	}
}
