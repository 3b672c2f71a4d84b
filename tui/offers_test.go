package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/tandem-editor/tandem/merge"
	"github.com/tandem-editor/tandem/store"
)

// TestConflict_DialogOffersOnlyWhatApplies: a save with an absolute change meets the dialog
// without a retry in it (retrying would write over theirs); a save of relative changes only
// (as after the automatic retries gave up) is offered the retry.
func TestConflict_DialogOffersOnlyWhatApplies(t *testing.T) {
	_, alice, bob := conflictSetup(t)
	bobSaves(t, bob, "price", "12.00")
	focusField(t, alice, "price")
	replaceField(alice, "11.00")
	alice.key("ctrl+s")
	alice.waitFor("collide:")
	if scr := alice.screen(); strings.Contains(scr, "retry") {
		t.Errorf("the dialog of an absolute save offers a retry:\n%s", scr)
	}

	s := newFakeStore(t)
	mustSeed(t, s, 1)
	d := newDriver(t, s, "alice")
	base := mustRecord(t, s, 1)
	cur := base.Clone()
	cur.Version, cur.UpdatedBy = 2, "bob"
	mine := base.Fields.Clone()
	mine["stock"] = int64(17)
	deltas := map[string]int64{"stock": -3}
	cs := &conflictState{
		ce:   &store.ConflictError{Kind: store.KindProduct, ID: 1, BaseVersion: 1, Current: cur},
		u:    store.Update{BaseVersion: 1, Add: deltas},
		rm:   merge.Records(d.app.c.reg, store.KindProduct, base.Fields, mine, cur.Fields),
		base: base, mine: mine, deltas: deltas,
	}
	if got := ansi.Strip(newConflict(d.app.c, cs).View()); !strings.Contains(got, "a  retry: apply stock -3 to v2") {
		t.Errorf("the dialog of a relative save does not offer the retry:\n%s", got)
	}
}

// TestMergeView_TakeOtherSideOfCleanField: a field only one side changed merges cleanly, yet
// the person may keep the other side's value: 1 takes mine, 2 theirs, 3 the base, each as a
// step u takes back, and the result saved is what was taken.
func TestMergeView_TakeOtherSideOfCleanField(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	d := newDriver(t, s, "alice")
	base := mustRecord(t, s, 1)
	cur := base.Clone()
	cur.Version, cur.UpdatedBy = 2, "bob"
	cur.Fields["name"], cur.Fields["price"] = "Theirs", int64(1200)
	mine := base.Fields.Clone()
	mine["name"] = "Mine"
	cs := &conflictState{
		ce:   &store.ConflictError{Kind: store.KindProduct, ID: 1, BaseVersion: 1, Current: cur},
		u:    store.Update{BaseVersion: 1, Set: store.Values{"name": "Mine"}},
		rm:   merge.Records(d.app.c.reg, store.KindProduct, base.Fields, mine, cur.Fields),
		base: base, mine: mine,
	}
	m := newMergeView(d.app.c, cs)
	m.Update(keyMsg("1")) // the name: mine
	for m.rm.Fields[m.cursor].Field.Name != "price" {
		m.Update(keyMsg("j"))
	}
	price := func() any {
		v, _ := m.rm.Field("price").Value()
		return v
	}
	if got := price(); got != int64(1200) {
		t.Fatalf("price merged to %v, want theirs 1200", got)
	}
	m.Update(keyMsg("1"))
	if got, want := price(), base.Fields["price"]; got != want {
		t.Errorf("1 on the cleanly merged price: %v, want mine %v", got, want)
	}
	if v := ansi.Strip(m.View()); !strings.Contains(v, "price: mine taken") {
		t.Errorf("the view does not say what 1 took:\n%s", v)
	}
	m.Update(keyMsg("u"))
	if got := price(); got != int64(1200) {
		t.Errorf("u after 1: price %v, want theirs 1200 again", got)
	}
	m.Update(keyMsg("1"))
	vals, err := m.rm.Values()
	if err != nil || vals["price"] != base.Fields["price"] || vals["name"] != "Mine" {
		t.Errorf("result %v (%v), want mine price %v and name Mine", vals, err, base.Fields["price"])
	}
}
