package tui

import (
	"errors"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/tandem-editor/tandem/store"
)

// TestList_EndedLeaseSaysFree: a record whose last lease expired is free on the list, as
// one whose lease was released; the locks screen still says what became of the lease.
func TestList_EndedLeaseSaysFree(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 2)
	if _, err := s.AcquireLease(actorCtx("bob"), store.LeaseRequest{Kind: store.KindProduct, RecordID: 2,
		Group: store.GroupEditor, TTL: 100e9}); err != nil {
		t.Fatal(err)
	}
	s.Advance(5 * 60e9)
	d := newDriver(t, s, "alice", func(o *Options) { o.Now = s.Now })
	d.waitFor("Product 2")
	var row string
	for _, l := range strings.Split(d.screen(), "\n") {
		if strings.Contains(l, "Product 2") {
			row = l
		}
	}
	if !strings.HasSuffix(strings.TrimSpace(row), "free") || strings.Contains(row, "expired") {
		t.Errorf("row of a record whose lease expired = %q, want it to end in free", row)
	}
	d.key("L")
	d.waitFor("expired")
}

// TestList_FilterBelongsToItsTab: a search applied on one tab stays with it: the next tab
// shows all its records, and the first shows its search again when it comes back.
func TestList_FilterBelongsToItsTab(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 3)
	if _, err := s.CreateRecord(actorCtx("bob"), store.KindDocument, store.Values{"title": "Handbook"}); err != nil {
		t.Fatal(err)
	}
	d := newDriver(t, s, "alice")
	d.key("/")
	d.typeText("Product 2")
	d.key("enter")
	d.waitUntil("the search applied", func() bool { return len(d.app.list.rows) == 1 })
	d.key("tab")
	d.waitFor("Handbook")
	if d.app.list.search != "" || strings.Contains(d.screen(), "matching") {
		t.Fatalf("the products' search %q went to the documents tab:\n%s", d.app.list.search, d.screen())
	}
	d.key("tab")
	d.waitUntil("the products' search back", func() bool {
		return d.app.list.kind == store.KindProduct && d.app.list.loaded && len(d.app.list.rows) == 1
	})
	if !strings.Contains(d.screen(), `matching "Product 2"`) {
		t.Errorf("the products tab came back without its search:\n%s", d.screen())
	}
}

// TestList_TitleNamesOrder: the title line names the order, the id order and a tree's too.
func TestList_TitleNamesOrder(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 2)
	if _, err := s.CreateRecord(actorCtx("bob"), store.KindDocument, store.Values{"title": "Handbook"}); err != nil {
		t.Fatal(err)
	}
	d := newDriver(t, s, "alice")
	title := func() string { return strings.SplitN(d.screen(), "\n", 2)[0] }
	if !strings.HasSuffix(title(), "1 of 2 · by id") {
		t.Errorf("products in id order: title %q does not say so", title())
	}
	d.key("s")
	d.waitFor("by name ▲")
	d.key("tab")
	d.waitFor("Handbook")
	if !strings.HasSuffix(title(), "1 of 1 · as a tree") {
		t.Errorf("documents as a tree: title %q does not say so", title())
	}
	d.key("/")
	d.typeText("hand")
	d.key("enter")
	d.waitFor(`matching "hand"`)
	if !strings.HasSuffix(title(), `matching "hand" · by id`) {
		t.Errorf("a tree kind searched is listed by id: title %q does not say so", title())
	}
}

// TestList_ColumnsGiveWayByPriority: on a narrow terminal the writer and then the version
// go before the title is cut: at 60 columns a title keeps at least 24 characters, and the
// lock column shows a long holder's name whole.
func TestList_ColumnsGiveWayByPriority(t *testing.T) {
	s := newFakeStore(t)
	const name = "A rather long product name, cut late" // 36 characters
	if _, err := s.CreateRecord(actorCtx("seed"), store.KindProduct, store.Values{"sku": "L-1", "name": name}); err != nil {
		t.Fatal(err)
	}
	const holder = "nightly-checksum-worker"
	if _, err := s.AcquireLease(actorCtx(holder), store.LeaseRequest{Kind: store.KindProduct, RecordID: 1,
		Group: store.GroupEditor, TTL: 300e9}); err != nil {
		t.Fatal(err)
	}
	d := newDriver(t, s, "alice", func(o *Options) { o.Now = s.Now })
	d.waitFor(holder)
	for _, tc := range []struct {
		width     int
		ver, writ bool
		title     int // the characters of the title shown at least
	}{
		{140, true, true, len(name)},
		{80, true, false, 24},
		{62, false, false, 24}, // the version would leave 24 cells: 23 characters and "…"
		{60, false, false, 24},
	} {
		d.apply(tea.WindowSizeMsg{Width: tc.width, Height: 15})
		d.settle()
		lines := strings.Split(d.screen(), "\n")
		header, row := lines[1], lines[2]
		if got := strings.Contains(header, "ver"); got != tc.ver {
			t.Errorf("%d columns: version column shown %v, want %v:\n%s", tc.width, got, tc.ver, d.screen())
		}
		if got := strings.Contains(header, "writer"); got != tc.writ {
			t.Errorf("%d columns: writer column shown %v, want %v:\n%s", tc.width, got, tc.writ, d.screen())
		}
		if !strings.Contains(row, name[:tc.title]) {
			t.Errorf("%d columns: the title keeps fewer than %d characters: %q", tc.width, tc.title, row)
		}
		if !strings.HasSuffix(row, holder) && !strings.HasSuffix(row, holder+" since 10:05") {
			t.Errorf("%d columns: the lock column cuts the holder's name: %q", tc.width, row)
		}
	}
}

// TestEditor_BodySaysLineAndColumn: the focused body editor names the cursor's line and
// column and the text's line count, and follows the cursor.
func TestEditor_BodySaysLineAndColumn(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	d := newDriver(t, s, "alice")
	openProduct(t, d, 1, "enter")
	focusField(t, d, "description")
	d.waitFor("line 1, col 1 · 3 lines")
	d.key("down")
	d.typeText("ab")
	d.waitFor("line 2, col 3 · 3 lines")
	d.key("enter")
	d.waitFor("line 3, col 1 · 4 lines")
}

// TestStatus_LongMessagesWrap: a status message longer than the screen is wide wraps onto
// the next lines instead of being cut; the list and the editor give up rows for it, so the
// screen keeps its height and its footer, and the list's cursor stays in sight.
func TestStatus_LongMessagesWrap(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 30)
	d := newDriver(t, s, "alice")
	for range 19 {
		d.key("j") // the cursor on the list's last row
	}
	d.key("R")
	d.settle()
	const says = "nothing deleted here to restore (the history screen restores any deleted record: tandem restore KIND ID)"
	checkWrapped(t, d, says)
	if !strings.Contains(d.screen(), "▸     20 Product 20") {
		t.Errorf("the status's extra line hid the cursor's row:\n%s", d.screen())
	}

	d.key("enter")
	d.waitFor("product 20 · v")
	long := strings.Repeat("the database said something long about this save, ", 3) + "and then it ended"
	d.apply(errMsg{op: "save product 20", err: errors.New(long)})
	d.settle()
	checkWrapped(t, d, "save product 20: "+long)
}

// checkWrapped checks that the screen shows says whole on its lines above the footer, and
// keeps its height.
func checkWrapped(t *testing.T, d *driver, says string) {
	t.Helper()
	lines := strings.Split(d.screen(), "\n")
	if len(lines) != 24 {
		t.Errorf("screen of %d lines, want 24:\n%s", len(lines), d.screen())
	}
	var joined string
	for _, l := range lines[len(lines)-4 : len(lines)-1] {
		joined += strings.TrimRight(l, " ") + " "
	}
	if !strings.Contains(strings.Join(strings.Fields(joined), " "), says) {
		t.Errorf("the status %q is not shown whole above the footer:\n%s", says, d.screen())
	}
}

// TestList_RestoredReturnsToItsPlace: a record deleted from a list sorted by a column and
// restored with R comes back at its place in that order, with the cursor on it.
func TestList_RestoredReturnsToItsPlace(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 5)
	d := newDriver(t, s, "alice")
	d.key("s")
	d.key("s")
	d.waitFor("by price ▲")
	d.key("o")
	d.waitFor("by price ▼") // 5, 4, 3, 2, 1
	d.key("j")
	d.key("j")
	d.key("d")
	d.key("y")
	d.waitFor("deleted product 3")
	d.key("R")
	d.waitFor("restored product 3")
	d.waitUntil("product 3 back in the rows", func() bool { return d.app.list.indexOf(3) >= 0 })
	var got []int64
	for _, r := range d.app.list.rows {
		got = append(got, r.ID)
	}
	if want := []int64{5, 4, 3, 2, 1}; !slices.Equal(got, want) {
		t.Errorf("rows by price ▼ after the restore = %v, want %v", got, want)
	}
	if sel := d.app.list.selected(); sel == nil || sel.ID != 3 {
		t.Errorf("cursor on %v after restoring product 3, want product 3", sel)
	}
}

// TestList_WideShowsMoreFields: a wide terminal shows more of a record's short fields beside
// a title that keeps its room; at 120 columns the product list is as it was.
func TestList_WideShowsMoreFields(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 2)
	d := newDriver(t, s, "alice")
	for _, tc := range []struct {
		width int
		sku   bool
	}{{120, false}, {250, true}} {
		d.apply(tea.WindowSizeMsg{Width: tc.width, Height: 10})
		d.settle()
		lines := strings.Split(d.screen(), "\n")
		if got := strings.Contains(lines[1], " sku ") && strings.Contains(lines[2], "SKU-1"); got != tc.sku {
			t.Errorf("%d columns: sku column shown %v, want %v:\n%s", tc.width, got, tc.sku, d.screen())
		}
	}
}

// TestStatus_LongMessagesWrapOnHistoryAndLocks: the history and locks screens wrap a long
// status too, keeping their height and footer.
func TestStatus_LongMessagesWrapOnHistoryAndLocks(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 2)
	d := newDriver(t, s, "alice")
	long := strings.Repeat("a status that says a good deal more than one line holds, ", 2) + "to the end"
	d.key("h")
	d.waitFor("history")
	d.app.screens[scrHistory].(*historyModel).status.warn(long)
	checkWrapped(t, d, long)
	d.key("esc")
	d.key("L")
	d.waitFor("nobody holds a lease")
	d.app.screens[scrLocks].(*locksModel).status.warn(long)
	checkWrapped(t, d, long)
}
