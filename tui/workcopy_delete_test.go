package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/memory"
	tsync "github.com/tandem-editor/tandem/sync"
)

// copySetup is a source with n products, a working copy cloned from it, and a TUI on the
// copy whose S syncs with the source, as tandem tui does. Both stores are in memory: the
// TUI sees nothing of a store but its contract.
type copySetup struct {
	ctx context.Context
	src *memory.DB
	wc  *memory.DB
	d   *driver
}

func newCopySetup(t *testing.T, n int) *copySetup {
	t.Helper()
	return newCopySetupWith(t, n, tsync.CloneOptions{})
}

// newCopySetupWith is newCopySetup with the clone's options (its Source is set here).
func newCopySetupWith(t *testing.T, n int, o tsync.CloneOptions) *copySetup {
	t.Helper()
	ctx := store.WithActor(context.Background(), store.Actor{Name: "erin", Role: store.RoleEditor})
	cs := &copySetup{ctx: ctx, src: memory.New(store.Options{}), wc: memory.New(store.Options{})}
	t.Cleanup(func() { cs.wc.Close(); cs.src.Close() })
	mustSeed(t, cs.src, n)
	o.Source = "/data/src.db"
	if _, err := tsync.Clone(ctx, cs.src, cs.wc, o); err != nil {
		t.Fatal(err)
	}
	cs.d = newDriver(t, cs.wc, "erin", func(o *Options) {
		o.OpenSource = func(context.Context) (store.Store, error) { return unclosed{cs.src}, nil }
	})
	cs.d.waitFor("offline copy of src.db")
	return cs
}

// unclosed is a store whose Close leaves it open: the TUI closes the source it opened for a
// sync, and the test's source lives on.
type unclosed struct{ store.Store }

func (unclosed) Close() error { return nil }

// syncElsewhere syncs the copy as another tandem would, outside the TUI: the TUI hears of
// it only from the copy. It returns the sync's report.
func (cs *copySetup) syncElsewhere(t *testing.T) *tsync.Report {
	t.Helper()
	rep, err := tsync.Sync(cs.ctx, cs.src, cs.wc)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// listNames returns the titles of the list's rows.
func listNames(l *listModel) []string {
	var out []string
	for _, r := range l.rows {
		out = append(out, r.Title())
	}
	return out
}

// mustList checks the list's rows and count.
func mustList(t *testing.T, d *driver, want ...string) {
	t.Helper()
	l := d.app.list
	if got := listNames(l); strings.Join(got, "|") != strings.Join(want, "|") || l.total != len(want) {
		t.Fatalf("list rows %q (count %d), want %q:\n%s", got, l.total, want, d.screen())
	}
}

// TestWorkCopy_SyncShowsAddedAndRemovedRows: after S, the list shows the records the sync
// brought and drops those it removed, with the count right, and the status says how many it
// removed; a sync by another process (seen when the copy's state is read again) does the
// same.
func TestWorkCopy_SyncShowsAddedAndRemovedRows(t *testing.T) {
	cs := newCopySetup(t, 3)
	d := cs.d
	mustList(t, d, "Product 1", "Product 2", "Product 3")
	d.key("j")
	d.key("j") // on Product 3: the cursor stays on it
	if _, err := cs.src.DeleteRecord(cs.ctx, store.KindProduct, 2, store.Delete{ExpectVersion: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.src.CreateRecord(cs.ctx, store.KindProduct, store.Values{"sku": "NEW-1", "name": "Fresh lamp"}); err != nil {
		t.Fatal(err)
	}
	d.key("S")
	d.waitFor("in sync")
	mustList(t, d, "Product 1", "Product 3", "Fresh lamp")
	if st := d.app.list.status.text; !strings.Contains(st, "removed 1 record the source deleted") || !strings.Contains(st, "pulled 1 record") {
		t.Fatalf("sync status %q does not say what it pulled and removed", st)
	}
	if r := d.app.list.selected(); r == nil || r.Title() != "Product 3" {
		t.Fatalf("the cursor left Product 3 for %v", r)
	}
	if scr := d.screen(); !strings.Contains(scr, "2 of 3") || strings.Contains(scr, "Product 2") {
		t.Fatalf("the list does not show the sync's result:\n%s", scr)
	}

	// Another tandem syncs the same copy.
	if _, err := cs.src.DeleteRecord(cs.ctx, store.KindProduct, 1, store.Delete{ExpectVersion: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.src.CreateRecord(cs.ctx, store.KindProduct, store.Values{"sku": "NEW-2", "name": "Second lamp"}); err != nil {
		t.Fatal(err)
	}
	cs.syncElsewhere(t)
	d.apply(copyPollMsg{}) // what the header's poll delivers every copyPoll
	d.settle()
	mustList(t, d, "Product 3", "Fresh lamp", "Second lamp")
}

// TestWorkCopy_DeleteConflictBothAnswers: the conflict of a delete made in the copy says so
// and takes both answers: theirs brings the source's record back at the next sync (and the
// list shows it), mine deletes it on the source too.
func TestWorkCopy_DeleteConflictBothAnswers(t *testing.T) {
	cs := newCopySetup(t, 3)
	d := cs.d
	for _, id := range []int64{1, 2} {
		if _, err := cs.wc.DeleteRecord(cs.ctx, store.KindProduct, id, store.Delete{ExpectVersion: 1}); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.src.UpdateRecord(cs.ctx, store.KindProduct, id, store.Update{BaseVersion: 1, Set: store.Values{"price": int64(5000)}}); err != nil {
			t.Fatal(err)
		}
	}
	d.waitUntil("the local deletes leave the list", func() bool { return len(d.app.list.rows) == 1 })

	d.key("S")
	d.waitFor("you deleted product 1 here (at v1); the source changed it to v2.")
	scr := d.screen()
	for _, want := range []string{"conflict · product 1 \"Product 1\" · deleted here", "price", "10.01 → 50.00",
		"1    mine: delete it on the source too", "2    theirs: keep the source's record", "esc  decide later",
		"1 mine: delete there too", "2 theirs: keep it"} {
		if !strings.Contains(scr, want) {
			t.Fatalf("the delete conflict does not show %q:\n%s", want, scr)
		}
	}
	if strings.Contains(scr, "0 of 0 conflicts") {
		t.Fatalf("a delete's conflict shown as a field merge:\n%s", scr)
	}
	d.golden("copy_delete_conflict")
	d.key("2")
	d.waitFor("product 1: delete dropped; S brings the source's record back")

	d.key("S") // brings product 1 back; product 2's conflict opens
	d.waitFor("you deleted product 2 here")
	d.key("1")
	d.waitFor("product 2: S deletes it on the source too (if still at v2 there)")
	mustList(t, d, "Product 1", "Product 3")
	d.key("S")
	d.waitFor("in sync")
	if _, err := cs.src.FindRecord(cs.ctx, store.KindProduct, 2); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("product 2 on the source after mine: %v, want deleted", err)
	}
	if r, err := cs.src.FindRecord(cs.ctx, store.KindProduct, 1); err != nil || r.Fields["price"] != int64(5000) {
		t.Fatalf("product 1 on the source after theirs: %v, %v; want the source's record", r, err)
	}
	mustList(t, d, "Product 1", "Product 3")
	if r := d.app.list.rows[0]; r.Fields["price"] != int64(5000) || r.Version != 2 {
		t.Fatalf("product 1 in the copy: %+v, want the source's v2", r)
	}
}

// TestWorkCopy_DeleteConflictEscLeavesIt: esc leaves a delete's conflict queued, and the
// header keeps counting it.
func TestWorkCopy_DeleteConflictEscLeavesIt(t *testing.T) {
	cs := newCopySetup(t, 2)
	d := cs.d
	if _, err := cs.wc.DeleteRecord(cs.ctx, store.KindProduct, 1, store.Delete{ExpectVersion: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.src.UpdateRecord(cs.ctx, store.KindProduct, 1, store.Update{BaseVersion: 1, Set: store.Values{"name": "lamp, new"}}); err != nil {
		t.Fatal(err)
	}
	d.key("S")
	d.waitFor("you deleted product 1 here")
	d.key("esc")
	d.waitFor("the conflict stays in the copy")
	if got, err := cs.wc.Conflicts(cs.ctx); err != nil || len(got) != 1 || got[0].Op != store.CopyDelete {
		t.Fatalf("conflicts after esc: %+v, %v; want the delete's, still open", got, err)
	}
	d.waitFor("1 conflict")
}

// TestWorkCopy_RestoreSubtree: R after a subtree delete in a copy brings back every
// document deleted with the top, and each restore cancels its pending delete, so the next
// sync deletes nothing on the source; a second R has nothing left to do.
func TestWorkCopy_RestoreSubtree(t *testing.T) {
	cs := newCopySetup(t, 1)
	d := cs.d
	mk := func(title string, parent int64) int64 {
		vals := store.Values{"title": title}
		if parent != 0 {
			vals["parent_id"] = parent
		}
		r, err := cs.src.CreateRecord(cs.ctx, store.KindDocument, vals)
		if err != nil {
			t.Fatal(err)
		}
		return r.ID
	}
	mk("Other", 0)
	top := mk("Handbook", 0)
	ch := mk("Chapter", top)
	mk("Section", ch)
	mk("Appendix", top)
	d.key("S")
	d.waitFor("in sync")
	d.key("tab")
	d.waitFor("Appendix")
	for d.app.list.selected().ID != top {
		d.key("j")
	}
	d.key("d")
	d.waitFor(`delete document 2 "Handbook"`)
	d.key("s")
	d.waitFor(`deleted document 2 "Handbook" (tombstone v2) and 3 below it · R restores all`)
	if ob, err := cs.wc.Outbox(cs.ctx, 0); err != nil || len(ob) != 4 {
		t.Fatalf("outbox after the subtree delete: %d entries, %v; want 4 deletes", len(ob), err)
	}
	d.key("R")
	d.waitFor("restored document 2 as v3 and the 3 documents deleted with it")
	if ob, err := cs.wc.Outbox(cs.ctx, 0); err != nil || len(ob) != 0 {
		t.Fatalf("outbox after R: %+v, %v; want every pending delete cancelled", ob, err)
	}
	d.waitFor("Handbook")
	d.key("R")
	d.waitFor("nothing deleted here to restore")
	d.key("S")
	d.waitFor("in sync")
	recs, err := cs.src.FindRecords(cs.ctx, store.Filter{Kind: store.KindDocument})
	if err != nil || len(recs) != 5 {
		t.Fatalf("documents on the source after the sync: %d, %v; want all 5", len(recs), err)
	}
}

// TestWorkCopy_DeleteConflictRefused: when the source refused a copy's delete (a document
// that has a child there), the screen offers theirs only, in the body, the footer and the
// esc line alike, and the refusal's reason is wrapped, not cut, so the child's id shows.
func TestWorkCopy_DeleteConflictRefused(t *testing.T) {
	cs := newCopySetup(t, 1)
	d := cs.d
	top, err := cs.src.CreateRecord(cs.ctx, store.KindDocument, store.Values{"title": "Handbook"})
	if err != nil {
		t.Fatal(err)
	}
	d.key("S")
	d.waitFor("in sync")
	if _, err := cs.wc.DeleteRecord(cs.ctx, store.KindDocument, top.ID, store.Delete{ExpectVersion: 1}); err != nil {
		t.Fatal(err)
	}
	child, err := cs.src.CreateRecord(cs.ctx, store.KindDocument, store.Values{"title": "Late chapter", "parent_id": top.ID})
	if err != nil {
		t.Fatal(err)
	}
	d.apply(tea.WindowSizeMsg{Width: 100, Height: 24})
	d.settle()
	d.key("S")
	d.waitFor("the source refused the delete")
	scr := d.screen()
	for _, want := range []string{"mine: not offered", "2 theirs: keep it",
		fmt.Sprintf("tandem resolve document %d theirs)", top.ID), fmt.Sprint(child.ID)} {
		if !strings.Contains(scr, want) {
			t.Fatalf("the refused delete's conflict does not show %q:\n%s", want, scr)
		}
	}
	for _, bad := range []string{"mine: delete there too", "mine|theirs", "…"} {
		if strings.Contains(scr, bad) {
			t.Fatalf("the refused delete's conflict shows %q:\n%s", bad, scr)
		}
	}
	for _, l := range strings.Split(scr, "\n") {
		if w := ansi.StringWidth(l); w > 100 {
			t.Fatalf("line %q is %d cells wide, more than the screen's 100", l, w)
		}
	}
	d.key("1")
	d.waitFor("the source refused this delete")
	d.key("2")
	d.waitFor(fmt.Sprintf("document %d: delete dropped", top.ID))
}

// TestWorkCopy_BusySyncFailureGoes: S refused because another sync holds the copy says so,
// and once that other sync has ended (seen at the next read of the copy's state) the status
// line no longer claims one is running.
func TestWorkCopy_BusySyncFailureGoes(t *testing.T) {
	cs := newCopySetup(t, 2)
	d := cs.d
	open := d.app.c.opts.OpenSource
	d.app.c.opts.OpenSource = func(ctx context.Context) (store.Store, error) {
		return nil, store.Errorf(store.EINVALID, "another tandem sync of wc.db is running; nothing was done")
	}
	d.key("S")
	d.waitFor("another tandem sync of wc.db is running")
	d.apply(copyPollMsg{}) // nothing ended yet: the failure stays
	d.settle()
	if !strings.Contains(d.screen(), "another tandem sync of wc.db is running") {
		t.Fatalf("the failure went before any sync ended:\n%s", d.screen())
	}

	cs.syncElsewhere(t)
	d.apply(copyPollMsg{})
	d.settle()
	if scr := d.screen(); strings.Contains(scr, "is running") || !strings.Contains(scr, "another sync of this copy ended at") {
		t.Fatalf("the status line still says a sync is running after it ended:\n%s", scr)
	}
	d.app.c.opts.OpenSource = open
	d.key("S")
	d.waitFor("in sync")
}

// TestWorkCopy_EditorHearsPulledChange: an editor open on a working copy's record hears of
// the source's newer version when another tandem's sync pulls it, as it hears of a local
// save: the live banner names the source's writer and version.
func TestWorkCopy_EditorHearsPulledChange(t *testing.T) {
	cs := newCopySetup(t, 2)
	d := cs.d
	d.key("enter")
	d.waitFor("product 1 · v1")
	bob := store.WithActor(context.Background(), store.Actor{Name: "bob", Role: store.RoleEditor})
	if _, err := cs.src.UpdateRecord(bob, store.KindProduct, 1, store.Update{BaseVersion: 1, Set: store.Values{"price": int64(777)}}); err != nil {
		t.Fatal(err)
	}
	cs.syncElsewhere(t)
	d.waitFor("bob saved v2; you are editing v1")
}
