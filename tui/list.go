package tui

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/store"
)

// pageSize is how many records one keyset page loads. The list loads the next page only when
// the cursor comes near the end of what is loaded, so 100,000 records open like 100.
const pageSize = 200

// maxDocuments bounds the records of a tree kind loaded for the tree view.
const maxDocuments = 20000

// listModel is the record list of one kind of the schema at a time (a tab per kind):
// paged, or as a tree for a tree kind. What it keeps beyond the loaded rows is in parts:
// the filter, the order, the tree's folds, a record to seek and what R restores.
type listModel struct {
	c      *common
	kind   store.Kind
	rows   []*store.Record
	total  int
	more   bool // paged kinds: there may be rows after the last loaded
	paging bool // paged kinds: the next page is on its way
	gen    int  // load generation: results of an older load are dropped
	loaded bool

	cursor, offset int

	leases map[store.Kind]map[int64]store.Lease
	// conflicted marks the records a working copy's sync left a conflict on (! in the row).
	conflicted map[recKey]store.CopyConflict
	status     statusLine

	// titles are the titles of the records the loaded rows' reference columns name.
	titles map[refKey]string

	listFilter
	listOrder
	listTree
	listSeek
	listRestore
}

// listFilter is the list's search: the filter line while it is typed, the search applied.
type listFilter struct {
	filtering bool
	filter    lineField
	search    string
}

// listOrder is the order of a paged kind: sort is the field it is ordered by ("" for id),
// desc its direction; the store orders and pages them (Filter.Sort), so a sort costs one page
// like the id order. views keeps each kind's order (and folds) while another tab is shown.
type listOrder struct {
	sort  string
	desc  bool
	views map[store.Kind]kindView
}

// listTree is a tree kind's view: all is the whole tree in order (rows what folding leaves
// of it), depth each record's depth (0 at the root), folded the records whose subtrees are
// hidden, kids how many children each has.
type listTree struct {
	all    []*store.Record
	depth  map[int64]int
	folded map[int64]bool
	kids   map[int64]int
}

// listSeek is where the cursor goes once rows arrive: pending is a record just created that
// the cursor goes to once it is loaded (pendingPages counts the pages loaded looking for
// it); keep is the record the cursor stays on when a reload comes in (0: none).
// restored is the record R restored, which the cursor goes to once it is back in the rows.
type listSeek struct {
	pending      *store.Record
	pendingPages int
	keep         int64
	restored     int64 // a record R restored: the cursor goes to it when the feed brings it back
}

// listRestore is what R on the list restores (delete.go).
type listRestore struct {
	lastDeleted *store.Tombstone // the record this TUI deleted last
	lastSubtree bool             // lastDeleted was deleted with documents below it: R restores them too
}

// maxSeekPages bounds the pages the list loads to put the cursor on a new record.
const maxSeekPages = 50

// pageMsg is one page of records.
type pageMsg struct {
	kind   store.Kind
	gen    int
	append bool
	recs   []*store.Record
	depth  map[int64]int
	titles map[refKey]string // of the records the reference columns name (refTitles)
	total  int
	more   bool
	err    error
}

// refreshedMsg carries records re-read after a change on the feed.
type refreshedMsg struct {
	kind   store.Kind
	recs   []*store.Record
	titles map[refKey]string
	err    error
}

func newList(c *common) *listModel {
	ti := newLineField()
	ti.Prompt = "/"
	ti.Placeholder = "text to find"
	var first store.Kind
	if ks := c.reg.Kinds(); len(ks) > 0 {
		first = ks[0]
	}
	l := &listModel{c: c, kind: first, leases: map[store.Kind]map[int64]store.Lease{}}
	l.filter, l.folded, l.views = ti, map[int64]bool{}, map[store.Kind]kindView{}
	return l
}

// tree reports whether the kind shown is a tree kind, listed as a tree rather than paged.
func (l *listModel) tree() bool { return l.c.reg.Tree(l.kind) }

// typing reports whether keys go into the filter.
func (l *listModel) typing() bool { return l.filtering }

// Init loads the first page and the leases.
func (l *listModel) Init() tea.Cmd { return tea.Batch(l.load(), l.loadLeases()) }

// visibleRows is how many rows fit on screen.
func (l *listModel) visibleRows() int { return max(l.c.height-4-(len(l.statusRows())-1), 1) }

// statusRows is the status line as drawn: a long one wraps, and takes rows from the list.
func (l *listModel) statusRows() []string {
	if l.filtering || l.status.text == "" {
		return []string{""}
	}
	return l.c.statusLines(l.status, safe.Line(l.status.text))
}

// load starts a fresh load of the current kind and search.
func (l *listModel) load() tea.Cmd { return l.loadN(pageSize) }

// reload loads the list afresh as far as it was loaded, keeping the cursor on the record it
// is on: for changes that come without feed entries (a working copy's sync adds and removes
// records as the source has them), where refreshing the rows on screen would miss new
// records and keep ones that are gone.
func (l *listModel) reload() tea.Cmd {
	l.keep = 0
	if r := l.selected(); r != nil {
		l.keep = r.ID
	}
	return tea.Batch(l.loadN(max(pageSize, len(l.rows))), l.loadLeases())
}

// loadN starts a fresh load of the current kind and search, of up to limit records.
func (l *listModel) loadN(limit int) tea.Cmd {
	l.gen++
	l.paging = false // a page of the old load is dropped when it comes
	c, kind, gen, search, sort, desc := l.c, l.kind, l.gen, l.search, l.sort, l.desc
	c.search = search // the editor marks it too
	if l.tree() {
		return func() tea.Msg {
			recs, err := c.st.FindRecords(c.ctx, store.Filter{Kind: kind, Search: search, Limit: maxDocuments})
			if err != nil {
				return pageMsg{kind: kind, gen: gen, err: err}
			}
			ordered, depth := treeOrder(recs, search == "")
			return pageMsg{kind: kind, gen: gen, recs: ordered, depth: depth, total: len(ordered), titles: refTitles(c, kind, recs)}
		}
	}
	return func() tea.Msg {
		recs, err := c.st.FindRecords(c.ctx, store.Filter{Kind: kind, Search: search, Limit: limit, Sort: sort, Desc: desc})
		if err != nil {
			return pageMsg{kind: kind, gen: gen, err: err}
		}
		total := len(recs)
		if search == "" {
			if n, err := c.st.CountRecords(c.ctx, kind); err == nil {
				total = n
			}
		}
		return pageMsg{kind: kind, gen: gen, recs: recs, total: total, more: len(recs) == limit, titles: refTitles(c, kind, recs)}
	}
}

// loadMore fetches the next keyset page after the last loaded row.
func (l *listModel) loadMore() tea.Cmd {
	if !l.more || len(l.rows) == 0 || l.tree() {
		return nil
	}
	l.more, l.paging = false, true // one page in flight at a time
	last := l.rows[len(l.rows)-1]
	f := store.Filter{Kind: l.kind, Search: l.search, AfterID: last.ID, Limit: pageSize, Sort: l.sort, Desc: l.desc}
	if l.sort != "" {
		f.AfterValue = last.Fields[l.sort]
	}
	c, kind, gen := l.c, l.kind, l.gen
	total := l.total
	return func() tea.Msg {
		recs, err := c.st.FindRecords(c.ctx, f)
		if err != nil {
			return pageMsg{kind: kind, gen: gen, append: true, err: err, more: true}
		}
		return pageMsg{kind: kind, gen: gen, append: true, recs: recs, total: total, more: len(recs) == pageSize,
			titles: refTitles(c, kind, recs)}
	}
}

// loadLeases reads the live and recently ended leases of the current kind.
func (l *listModel) loadLeases() tea.Cmd {
	return findLeases(l.c, l.kind, 0)
}

func findLeases(c *common, kind store.Kind, id int64) tea.Cmd {
	return func() tea.Msg {
		sent := c.opts.Now()
		ls, now, err := c.findLeases(store.LeaseFilter{Kind: kind, RecordID: id, Expired: 10 * time.Minute})
		return leasesMsg{kind: kind, leases: ls, dbNow: now, sent: sent, err: err}
	}
}

// refreshVisible re-reads the rows on screen (after returning from the editor).
func (l *listModel) refreshVisible() tea.Cmd {
	if len(l.rows) == 0 {
		return tea.Batch(l.load(), l.loadLeases())
	}
	end := min(l.offset+l.visibleRows(), len(l.rows))
	ids := make([]int64, 0, end-l.offset)
	for _, r := range l.rows[l.offset:end] {
		ids = append(ids, r.ID)
	}
	return tea.Batch(l.refresh(ids), l.loadLeases())
}

// show puts the cursor on r, a record just created, as soon as it is in the list: a paged
// kind comes in id order, so it is found by loading the pages after what is loaded
// (bounded); a tree kind is reloaded as a tree.
func (l *listModel) show(r *store.Record) tea.Cmd {
	if r.Kind != l.kind {
		return l.refreshVisible()
	}
	l.pending, l.pendingPages = r, 0
	if l.tree() {
		return l.load()
	}
	if l.indexOf(r.ID) < 0 && !l.more {
		return l.refresh([]int64{r.ID})
	}
	return tea.Batch(l.seekPending(), l.refreshVisible())
}

// seekPending moves the cursor to the pending record once loaded, or loads the next page.
func (l *listModel) seekPending() tea.Cmd {
	r := l.pending
	if r == nil {
		return nil
	}
	if i := l.indexOf(r.ID); i >= 0 {
		l.pending = nil
		l.cursor = i
		l.clampOffset()
		return nil
	}
	if l.paging {
		return nil // looked for again when the page comes
	}
	if l.more && l.pendingPages < maxSeekPages {
		l.pendingPages++
		return l.loadMore()
	}
	l.pending = nil
	if l.search != "" {
		l.status.info(fmt.Sprintf("created %s %d: the filter does not show it", r.Kind, r.ID))
	}
	return nil
}

func (l *listModel) refresh(ids []int64) tea.Cmd {
	c, kind := l.c, l.kind
	return func() tea.Msg {
		recs, err := c.st.FindRecords(c.ctx, store.Filter{Kind: kind, IDs: ids})
		return refreshedMsg{kind: kind, recs: recs, titles: refTitles(c, kind, recs), err: err}
	}
}

func (l *listModel) indexOf(id int64) int {
	i, ok := slices.BinarySearchFunc(l.rows, id, func(r *store.Record, id int64) int {
		return int(r.ID - id)
	})
	if ok {
		return i
	}
	// A tree is in tree order and a sorted list in its sort's order, not id order.
	for i, r := range l.rows {
		if r.ID == id {
			return i
		}
	}
	return -1
}

func (l *listModel) selected() *store.Record {
	if l.cursor >= 0 && l.cursor < len(l.rows) {
		return l.rows[l.cursor]
	}
	return nil
}

// Update handles list keys, pages, refreshes and feed changes.
func (l *listModel) Update(msg tea.Msg) tea.Cmd {
	if cmd, ok := l.fromOthers(msg); ok {
		return cmd
	}
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		l.clampOffset()
		return nil
	case pageMsg:
		return l.onPage(msg)
	case refreshedMsg:
		return l.onRefreshed(msg)
	case leasesMsg:
		if msg.err != nil {
			l.status.fail("read leases", msg.err)
			return nil
		}
		l.c.learnClock(msg.dbNow, msg.sent)
		if msg.kind == l.kind {
			l.leases[msg.kind] = leaseIndex(msg.leases, msg.dbNow)
		}
		return nil
	case changeMsg:
		return l.onChange(msg.c)
	case insertRowMsg:
		l.insertRow(msg.rec)
		return nil
	case copyConflictsMsg:
		l.conflicted = msg.byRec
		return nil
	case tea.KeyPressMsg:
		return l.onKey(msg)
	}
	return nil
}

// onPage takes a page of records: a fresh load, or the next page appended.
func (l *listModel) onPage(msg pageMsg) tea.Cmd {
	if msg.kind != l.kind || msg.gen != l.gen {
		return nil
	}
	if msg.append {
		l.paging = false
	}
	if msg.err != nil {
		l.status.fail("load "+tabName(l.c.reg, msg.kind), msg.err)
		l.more = msg.more
		return nil
	}
	l.loaded = true
	l.c.noteItems(msg.recs)
	if !msg.append || l.titles == nil {
		l.titles = map[refKey]string{} // a fresh load: forget the titles of rows gone
	}
	maps.Copy(l.titles, msg.titles)
	switch {
	case msg.append:
		l.rows = append(l.rows, msg.recs...)
	case l.tree():
		l.all, l.depth = msg.recs, msg.depth
		l.unfoldedRows()
		l.cursor = min(l.cursor, max(len(l.rows)-1, 0))
	default:
		l.rows = msg.recs
		l.cursor = min(l.cursor, max(len(l.rows)-1, 0))
	}
	if !msg.append && l.keep != 0 {
		if i := l.indexOf(l.keep); i >= 0 {
			l.cursor = i
		}
		l.keep = 0
	}
	l.total, l.more = max(msg.total, len(l.rows)), msg.more
	l.clampOffset()
	return l.seekPending()
}

// onRefreshed puts records read again after feed changes in place.
func (l *listModel) onRefreshed(msg refreshedMsg) tea.Cmd {
	if msg.err != nil {
		l.status.fail("refresh", msg.err)
		return nil
	}
	if msg.kind != l.kind {
		return nil
	}
	if l.titles == nil {
		l.titles = map[refKey]string{}
	}
	maps.Copy(l.titles, msg.titles)
	for _, r := range msg.recs {
		if i := l.indexOf(r.ID); i >= 0 {
			l.rows[i] = r
		} else if !l.tree() && !l.more && l.search == "" && l.sort == "" &&
			(len(l.rows) == 0 || r.ID > l.rows[len(l.rows)-1].ID) {
			l.rows = append(l.rows, r)
			l.total++
		}
	}
	if l.pending != nil {
		return l.seekPending()
	}
	return nil
}

// fromOthers handles what other parts tell the list: errors and status to show, deletes and
// restores, a return from another screen, a reload after a sync; ok says msg was one.
func (l *listModel) fromOthers(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case errMsg:
		l.status.fail(msg.op, msg.err)
	case statusMsg:
		l.status.apply(msg)
	case deletedMsg:
		return l.onDeleted(msg), true
	case restoredMsg:
		return l.onRestored(msg), true
	case reloadListMsg:
		return l.reload(), true
	case returnedMsg:
		if msg.status != "" {
			l.status.ok(msg.status)
		}
		if msg.created != nil {
			return tea.Batch(l.show(msg.created), l.loadLeases()), true
		}
		return l.refreshVisible(), true
	default:
		return nil, false
	}
	return nil, true
}

// leaseIndex keeps, per record, the lease that matters for the indicator: the live lease of
// the editor group if any, else the newest one.
func leaseIndex(ls []store.Lease, now time.Time) map[int64]store.Lease {
	out := map[int64]store.Lease{}
	for _, x := range ls {
		cur, ok := out[x.RecordID]
		better := !ok ||
			(x.Live(now) && !cur.Live(now)) ||
			(x.Live(now) == cur.Live(now) && x.Group == store.GroupEditor && cur.Group != store.GroupEditor) ||
			(x.Live(now) == cur.Live(now) && x.Group == cur.Group && x.Fence > cur.Fence)
		if better {
			out[x.RecordID] = x
		}
	}
	return out
}

func (l *listModel) onChange(ch store.Change) tea.Cmd { return l.onChanges([]store.Change{ch}) }

// onChanges handles feed changes in order; the records they have read again are read in
// one query.
func (l *listModel) onChanges(cs []store.Change) tea.Cmd {
	var (
		cmds []tea.Cmd
		ids  []int64
	)
	for _, ch := range cs {
		cmd, id := l.changeStep(ch)
		cmds = append(cmds, cmd)
		if id != 0 && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	if len(ids) > 0 {
		cmds = append(cmds, l.refresh(ids))
	}
	return tea.Batch(cmds...)
}

// changeStep handles one feed change: it returns what to do, or the id of a record to read
// again.
func (l *listModel) changeStep(ch store.Change) (tea.Cmd, int64) {
	if ch.Kind != l.kind {
		return nil, 0
	}
	switch ch.Event {
	case store.EventLeaseGranted, store.EventLeaseReleased, store.EventLeaseExpired, store.EventLeaseRenewed:
		return l.loadLeases(), 0
	case store.EventDeleted, store.EventRestored:
		return l.onDeleteEvent(ch), 0
	case store.EventCreated, store.EventMoved, store.EventPulled:
		// A pulled record may be new to the copy or under another parent.
		if l.tree() {
			return l.load(), 0
		}
		return nil, ch.RecordID
	}
	if l.indexOf(ch.RecordID) >= 0 {
		return nil, ch.RecordID
	}
	return nil, 0
}

// onKey handles a key on the list: the filter's while it is typed, else moving, the
// list's own commands and the keys that open other screens.
func (l *listModel) onKey(msg tea.KeyPressMsg) tea.Cmd {
	if l.filtering {
		return l.onFilterKey(msg)
	}
	if cmd, ok := l.deleteKey(msg); ok {
		return cmd
	}
	if cmd, ok := l.openKey(msg); ok {
		return cmd
	}
	k := l.c.keys
	switch {
	case key.Matches(msg, k.Down):
		l.move(1)
	case key.Matches(msg, k.Up):
		l.move(-1)
	case key.Matches(msg, k.PageDown):
		l.move(l.visibleRows())
	case key.Matches(msg, k.PageUp):
		l.move(-l.visibleRows())
	case key.Matches(msg, k.SwitchKind):
		l.switchKind()
		return tea.Batch(l.load(), l.loadLeases())
	case key.Matches(msg, k.Filter):
		return l.startFilter()
	case key.Matches(msg, k.Back) && l.search != "":
		return l.clearSearch()
	case key.Matches(msg, k.SortNext), key.Matches(msg, k.SortReverse):
		return l.cycleSort(key.Matches(msg, k.SortReverse))
	case key.Matches(msg, k.Fold):
		l.toggleFold()
		return nil
	}
	if !l.tree() && l.more && l.cursor >= len(l.rows)-l.visibleRows() {
		return l.loadMore()
	}
	return nil
}

// onFilterKey handles a key while the filter is typed: enter applies it, esc leaves it
// (clearing a search applied before), the rest is text.
func (l *listModel) onFilterKey(msg tea.KeyPressMsg) tea.Cmd {
	k := l.c.keys
	switch {
	case key.Matches(msg, k.Confirm):
		l.filtering = false
		l.filter.Blur()
		l.search = strings.TrimSpace(l.filter.Value())
		// Until its first page comes the rows are the old search's: the header says
		// loading rather than count them as the new one's.
		l.cursor, l.offset, l.loaded = 0, 0, false
		return l.load()
	case key.Matches(msg, k.Back):
		l.filtering = false
		l.filter.Blur()
		if l.search != "" {
			return l.clearSearch()
		}
		return nil
	}
	var cmd tea.Cmd
	l.filter, cmd = l.filter.Update(msg)
	return cmd
}

// startFilter opens the filter line on the search applied.
func (l *listModel) startFilter() tea.Cmd {
	if len(l.c.reg.SearchFields(l.kind)) == 0 {
		// A search would find nothing at all: say why rather than list nothing.
		l.status.warn(safe.Line(tabName(l.c.reg, l.kind)) + " have no field a search looks in (search: true in the schema)")
		return nil
	}
	l.filtering = true
	l.filter.SetValue(l.search)
	l.filter.CursorEnd()
	return l.filter.Focus()
}

// clearSearch drops the search and loads the list from its top.
func (l *listModel) clearSearch() tea.Cmd {
	l.search = ""
	l.filter.SetValue("")
	l.cursor, l.offset, l.loaded = 0, 0, false
	return l.load()
}

// openKey handles the keys that open another screen: the editor, a new record, the
// history, the locks; ok says the key was one.
func (l *listModel) openKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	k := l.c.keys
	switch {
	case key.Matches(msg, k.Open), key.Matches(msg, k.OpenLease):
		if r := l.selected(); r != nil {
			lease := key.Matches(msg, k.OpenLease)
			return func() tea.Msg { return openEditorMsg{kind: r.Kind, id: r.ID, lease: lease} }, true
		}
	case key.Matches(msg, k.New):
		kind := l.kind
		return func() tea.Msg { return openEditorMsg{kind: kind} }, true
	case key.Matches(msg, k.History):
		if r := l.selected(); r != nil {
			return func() tea.Msg { return openHistoryMsg{kind: r.Kind, id: r.ID} }, true
		}
	case key.Matches(msg, k.Locks):
		return func() tea.Msg { return openLocksMsg{} }, true
	default:
		return nil, false
	}
	return nil, false
}

func (l *listModel) move(d int) {
	if len(l.rows) == 0 {
		return
	}
	l.cursor = max(0, min(l.cursor+d, len(l.rows)-1))
	l.clampOffset()
}

func (l *listModel) clampOffset() {
	n := l.visibleRows()
	if l.cursor < l.offset {
		l.offset = l.cursor
	}
	if l.cursor >= l.offset+n {
		l.offset = l.cursor - n + 1
	}
	l.offset = max(0, min(l.offset, max(len(l.rows)-n, 0)))
}

// View draws the title, the visible rows only, the status line and the footer.
func (l *listModel) View() string {
	c, st := l.c, l.c.styles
	var b strings.Builder

	tabs := ""
	for _, k := range l.c.reg.Kinds() {
		name := " " + safe.Line(tabName(l.c.reg, k)) + " "
		if k == l.kind {
			tabs += st.Selected.Render("[" + name + "]")
		} else {
			tabs += st.Dim.Render(" " + name + " ")
		}
	}
	pos := "empty"
	if len(l.rows) > 0 {
		total := thousands(l.total)
		if l.search != "" && l.more {
			// A search is not counted (CountRecords counts a whole kind): say what is known.
			total = thousands(len(l.rows)) + "+"
		}
		pos = thousands(l.cursor+1) + " of " + total
	}
	if !l.loaded {
		pos = "loading…"
	}
	if l.search != "" {
		pos += ` matching "` + safe.Line(l.search) + `"`
	}
	// The order is always named, the id order too: a list that says nothing leaves the
	// reader guessing whether s was pressed.
	switch {
	case l.tree() && l.search == "":
		pos += " · as a tree"
	case l.tree():
		pos += " · by id" // a search lists a tree kind flat (treeOrder)
	default:
		pos += " · by " + l.sortName()
	}
	// On a narrow terminal the user goes first, then the program's name: the tabs, the
	// position and the order stay.
	title := st.Title.Render("tandem") + " " + tabs + "  " + st.Dim.Render(safe.Line(c.user)+c.readOnlyNote()+" · "+pos)
	if ansi.StringWidth(title) > c.width {
		title = st.Title.Render("tandem") + " " + tabs + "  " + st.Dim.Render(pos)
	}
	if ansi.StringWidth(title) > c.width {
		title = tabs + " " + st.Dim.Render(pos)
	}
	b.WriteString(title)
	b.WriteByte('\n')

	// The kind's short fields where there is room for them beside the title.
	n, off := l.visibleRows(), l.offset
	if l.cursor >= off+n {
		off = l.cursor - n + 1 // a status that wrapped took rows: the cursor stays in sight
	}
	end := min(off+n, len(l.rows))
	now := c.dbNow()
	locks, lockW, shortW := make([]lockCell, end-off), 0, 0
	byID := l.rowsByID()
	for i := off; i < end; i++ {
		lc := l.lockCell(l.rows[i], now, byID)
		locks[i-off] = lc
		lockW, shortW = max(lockW, ansi.StringWidth(lc.text)), max(shortW, ansi.StringWidth(lc.short))
	}
	lay := l.layout(c.width, lockW, shortW)
	b.WriteString(st.Header.Render(l.header(lay.cols, lay.titleW) + lay.tail("ver", "writer") + "lock"))
	b.WriteByte('\n')
	for i := off; i < end; i++ {
		b.WriteString(l.rowView(i, lay, locks[i-off]))
		b.WriteByte('\n')
	}
	for i := end - off; i < n; i++ {
		if i == 0 && l.loaded && len(l.rows) == 0 {
			b.WriteString(st.Dim.Render("  nothing here — n creates a record"))
		}
		b.WriteByte('\n')
	}
	switch {
	case l.filtering:
		b.WriteString(l.filter.View())
	case l.status.text != "":
		b.WriteString(strings.Join(l.statusRows(), "\n"))
	}
	b.WriteByte('\n')
	b.WriteString(c.footer(l.footerKeys()))
	return b.String()
}

// lockCell is a row's lock column: who holds the record, and (after it, cut first) who
// has it open.
type lockCell struct {
	text     string // free, "you, 1m40s left", "alice since 10:05"
	short    string // the same without the time a holder took it: "alice"
	held     int
	presence string
}

// lockCell says who holds record r at now on the database clock, or "read only" for a free
// record the user may not write (byID: rowsByID).
func (l *listModel) lockCell(r *store.Record, now time.Time, byID map[int64]*store.Record) lockCell {
	lc := lockCell{text: "free", short: "free", presence: l.presenceNote(r.ID)}
	if l.c.opts.ReadOnly == "" && l.rowDenied(r, byID) != "" {
		lc.text, lc.short = "read only", "read only"
	}
	if ls, ok := l.leases[l.kind][r.ID]; ok && ls.Live(now) {
		// A lease that ended, released or expired, leaves the record free: what happened
		// to the lease is the locks screen's to say.
		lc.text, lc.held = lockIndicator(ls, l.c.user, now)
		lc.short = lc.text
		if lc.held == heldByOther {
			lc.short = safe.Line(ls.Holder)
		}
	}
	return lc
}

// tail is the version and writer cells a layout shows, each with its space after.
func (lay listLayout) tail(ver, writer string) string {
	var s string
	if lay.ver {
		s += fmt.Sprintf("%4s ", ver)
	}
	if lay.writer {
		s += padRight(ansi.Truncate(writer, 10, "…"), 10) + " "
	}
	return s
}

// rowView draws row i of the list as lay cuts it, with its lock cell lk.
func (l *listModel) rowView(i int, lay listLayout, lk lockCell) string {
	c, st, r := l.c, l.c.styles, l.rows[i]
	title := highlight(safe.Line(c.reg.TitleOf(r)), l.search)
	if l.tree() && l.search == "" {
		title = strings.Repeat("  ", l.depth[r.ID]) + l.foldMark(r) + title
	}
	title = searchCell(c.reg, r, title, l.search, lay.titleW)
	_, sample := sampleColumns(c.reg, l.kind)
	line := fmt.Sprintf("%6d %s %s", r.ID, title, columnCells(lay.cols, r, l.titles, sample)) +
		lay.tail("v"+strconv.FormatInt(r.Version, 10), writerName(r.UpdatedBy))
	mark := " "
	if _, ok := l.conflicted[recKey{r.Kind, r.ID}]; ok {
		mark = "!" // a working copy's conflict: its editor opens it
	}
	if i == l.cursor {
		line = "▸" + mark + line
	} else {
		line = " " + mark + line
	}
	text := lk.text
	if lay.shortLock {
		text = lk.short
	}
	text += lk.presence
	rows := &c.rows
	switch {
	case i == l.cursor:
		return rows.styled('s', st.Selected, padRight(line+text, c.width))
	case lk.held == heldByYou:
		return rows.styled('r', st.Row, line) + rows.styled('y', st.LockYou, text)
	case lk.held == heldByOther:
		return rows.styled('r', st.Row, line) + rows.styled('o', st.LockOther, text)
	}
	return rows.styled('r', st.Row, line) + rows.styled('d', st.Dim, text)
}

// wideList is the width from which the product list shows price, stock and availability.
const wideList = 110

// footerKeys are the list's keys for the kind shown: sorting for a paged kind, folding for
// a tree; tab names the tabs it goes through.
func (l *listModel) footerKeys() []key.Binding {
	var out []key.Binding
	for _, k := range l.c.keys.ListKeys() {
		sortKey := k.Help().Key == l.c.keys.SortNext.Help().Key
		foldKey := k.Help().Key == l.c.keys.Fold.Help().Key
		if (sortKey && l.tree()) || (foldKey && !l.tree()) {
			continue
		}
		out = append(out, k)
	}
	return out
}

// kindView is what the list keeps of a kind while another tab is shown: its order, its
// search, and for a tree the records folded.
type kindView struct {
	sort   string
	desc   bool
	folded map[int64]bool
	search string
}

// switchKind shows the next tab, in schema order, with the order and folds it had.
func (l *listModel) switchKind() {
	ks := l.c.reg.Kinds()
	if len(ks) == 0 {
		return
	}
	l.views[l.kind] = kindView{l.sort, l.desc, l.folded, l.search}
	l.kind = ks[(slices.Index(ks, l.kind)+1)%len(ks)]
	v := l.views[l.kind]
	l.sort, l.desc, l.folded, l.search = v.sort, v.desc, v.folded, v.search
	l.filter.SetValue(l.search)
	if l.folded == nil {
		l.folded = map[int64]bool{}
	}
	l.rows, l.all, l.cursor, l.offset, l.loaded, l.status = nil, nil, 0, 0, false, statusLine{}
}

// writerName is who last wrote a record, for the narrow writer column: a worker
// ("worker:checksum@host:4711") by its task with a mark ("⚙checksum"), anyone else by name.
func writerName(s string) string {
	if task, ok := strings.CutPrefix(s, "worker:"); ok {
		task, _, _ = strings.Cut(task, "@")
		return "⚙" + safe.Line(task)
	}
	return safe.Line(s)
}

// Lock indicator states.
const (
	heldByNobody = iota
	heldByYou
	heldByOther
)

// lockIndicator says who holds a record: "free", "you, 1m40s left", "alice since 10:05" or
// "expired", judged at now on the database clock.
func lockIndicator(l store.Lease, user string, now time.Time) (string, int) {
	switch {
	case l.Released:
		return "free", heldByNobody
	case !l.Live(now):
		return "expired", heldByNobody
	case l.Holder == user:
		left := l.ExpiresAt.Sub(now).Round(time.Second)
		return "you, " + left.String() + " left", heldByYou
	}
	return safe.Line(l.Holder) + " since " + l.AcquiredAt.Local().Format("15:04"), heldByOther
}

// treeOrder puts the records of a tree kind in depth-first tree order with their depths;
// orphans (a parent not loaded) are shown at the root. Without tree (a search), the order
// is by id, flat.
func treeOrder(recs []*store.Record, tree bool) ([]*store.Record, map[int64]int) {
	depth := map[int64]int{}
	if !tree {
		return recs, depth
	}
	byID := map[int64]bool{}
	for _, r := range recs {
		byID[r.ID] = true
	}
	children := map[int64][]*store.Record{}
	var roots []*store.Record
	for _, r := range recs {
		p, _ := r.Fields[store.ParentField].(int64)
		if p == 0 || !byID[p] {
			roots = append(roots, r)
			continue
		}
		children[p] = append(children[p], r)
	}
	out := make([]*store.Record, 0, len(recs))
	var walk func(r *store.Record, d int)
	walk = func(r *store.Record, d int) {
		if _, seen := depth[r.ID]; seen {
			return
		}
		depth[r.ID] = d
		out = append(out, r)
		for _, ch := range children[r.ID] {
			walk(ch, d+1)
		}
	}
	for _, r := range roots {
		walk(r, 0)
	}
	return out, depth
}

func padRight(s string, w int) string {
	if n := ansi.StringWidth(s); n < w {
		return s + strings.Repeat(" ", w-n)
	}
	return s
}

func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
