// Package tui is tandem's terminal user interface: the record list, the editor with its
// conflict dialog and three-way merge view, history, the locks overview and help. It talks to
// the database only through store.Store, and only inside tea.Cmds; the live change feed
// arrives as messages from a command that waits on the feed channel and is re-armed.
package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/store"
)

// Conflict policies for Options.OnConflict.
const (
	OnConflictAsk    = "ask"
	OnConflictReload = "reload"
	OnConflictRetry  = "retry"
	OnConflictMerge  = "merge"
)

// DefaultLeaseTTL is how long a lease taken by the editor lasts between renewals.
const DefaultLeaseTTL = 2 * time.Minute

// Options configure the TUI.
type Options struct {
	// User is who edits; required.
	User string
	// Role is the writer's role; empty means editor.
	Role store.Role
	// Lease makes every open take a lease (--lease), as if opened with `e`.
	Lease bool
	// LeaseOnEdit defers the lease to the first edit (--lease-on-edit): a record opened with
	// enter is optimistic until something in the form changes, then takes the lease, so
	// merely looking at a record never blocks anyone. It overrides Lease; `e` still takes
	// the lease on open.
	LeaseOnEdit bool
	// LeaseTTL is the lease lifetime; renewed at half of it. Zero means DefaultLeaseTTL.
	LeaseTTL time.Duration
	// OnConflict decides a conflicting save without asking: ask (default), reload, retry or merge.
	OnConflict string
	// DraftDir is where unsaved edits are kept; empty means os.UserCacheDir()/tandem/drafts.
	DraftDir string
	// StoreID identifies the store being edited (the id kept in the store's own metadata,
	// not its path or DSN, so a moved file keeps its drafts). Drafts are kept per store and
	// offered only on the store they were made on; see draftStore.
	StoreID string
	// NoColor draws without colour, as NO_COLOR does.
	NoColor bool
	// ColorProfile forces a colour profile (tests, --color=always); Unknown (the zero
	// value) means detect it from the terminal and the environment.
	ColorProfile colorprofile.Profile
	// Input and Output replace the terminal (tests); nil means stdin/stdout.
	Input  io.Reader
	Output io.Writer
	// Width and Height are the window size when Output is set and is not a terminal that
	// reports one; zero means 80x24.
	Width, Height int
	// Editor is the external editor command for ctrl+e; empty means $VISUAL, $EDITOR, vi.
	Editor string
	// OpenSource opens the source of a working copy for S (sync); nil when there is none.
	OpenSource func(ctx context.Context) (store.Store, error)
	// Live is the background sync of a --local copy (live.go); nil otherwise.
	Live LiveSync
	// Now is the local clock; nil means time.Now. Lease times shown are corrected to the
	// database clock.
	Now func() time.Time
}

func (o Options) withDefaults() (Options, error) {
	if o.User == "" {
		return o, store.Errorf(store.EINVALID, "no user: set --user, $TANDEM_USER or $USER")
	}
	if o.Role == "" {
		o.Role = store.RoleEditor
	}
	switch o.OnConflict {
	case "":
		o.OnConflict = OnConflictAsk
	case OnConflictAsk, OnConflictReload, OnConflictRetry, OnConflictMerge:
	default:
		return o, store.Errorf(store.EINVALID, "--on-conflict %q: want ask, reload, retry or merge", o.OnConflict)
	}
	if o.LeaseTTL == 0 {
		o.LeaseTTL = DefaultLeaseTTL
	}
	if o.DraftDir == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			dir = os.TempDir()
		}
		o.DraftDir = filepath.Join(dir, "tandem", "drafts")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Editor == "" {
		o.Editor = os.Getenv("VISUAL")
	}
	if o.Editor == "" {
		o.Editor = os.Getenv("EDITOR")
	}
	if o.Editor == "" {
		o.Editor = "vi"
	}
	return o, nil
}

// Run opens the TUI on s and returns when the user quits or ctx ends.
func Run(ctx context.Context, s store.Store, opts Options) error {
	app, err := New(ctx, s, opts)
	if err != nil {
		return err
	}
	popts := []tea.ProgramOption{tea.WithContext(ctx)}
	if app.c.opts.Input != nil {
		popts = append(popts, tea.WithInput(app.c.opts.Input))
	}
	if o := app.c.opts; o.Output != nil {
		w, h := o.Width, o.Height
		if w <= 0 || h <= 0 {
			w, h = 80, 24
		}
		popts = append(popts, tea.WithOutput(o.Output), tea.WithWindowSize(w, h))
	}
	switch {
	case app.c.opts.NoColor || os.Getenv("NO_COLOR") != "":
		popts = append(popts, tea.WithColorProfile(colorprofile.Ascii))
	case app.c.opts.ColorProfile != colorprofile.Unknown:
		popts = append(popts, tea.WithColorProfile(app.c.opts.ColorProfile))
	}
	_, err = tea.NewProgram(app, popts...).Run()
	// A program stopped by a signal or a closed terminal never ran the quit key's steps:
	// do them now, before the store closes, so that nobody waits for a lease's expiry.
	serr := app.shutdown()
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		err = nil
	}
	if err != nil {
		return fmt.Errorf("tui: %w", err)
	}
	return serr
}

// shutdown does what quitting does for a program that ended without the quit key (SIGTERM,
// SIGHUP, a terminal that went away): the open editor's unsaved edits go to its draft, its
// lease is released and its presence ended. It runs after the program, with the model no
// longer updated, and returns what failed.
func (a *App) shutdown() error {
	if a.quitting || a.editor == nil {
		return nil
	}
	a.quitting = true
	err := a.editor.shutdown()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(a.c.ctx), 5*time.Second)
	defer cancel()
	_ = a.c.st.Leave(ctx, a.c.presence.session) // presence expires by itself too
	return err
}

// common is what every screen shares: the store, who is editing, sizes, styles and keys.
type common struct {
	ctx    context.Context // carries the actor
	st     store.Store
	reg    *store.Registry // swapped in Update by a schema change: a command reads c.st.Registry()
	opts   Options
	user   string
	styles Styles
	keys   KeyMap
	help   help.Model
	width  int
	height int
	skew   time.Duration // database clock minus local clock, learnt from FindLeases
	drafts *draftStore
	// presence is who has which record open in an editor (presence.go).
	presence *presenceState
	// seen holds the items of set fields (categories, tags) in the records the list loaded,
	// by field name: what one-line fields suggest, next to the registry's enum values.
	seen   map[string]map[string]bool
	search string // the list's search, which the editor marks in the record's text
	marks  matchLineMemo
}

// noteItems remembers the items of the set fields of recs, for suggestions.
func (c *common) noteItems(recs []*store.Record) {
	for _, r := range recs {
		for _, f := range c.reg.Fields(r.Kind) {
			items, ok := r.Fields[f.Name].([]string)
			if f.Type != store.TypeSet || !ok {
				continue
			}
			if c.seen[f.Name] == nil {
				c.seen[f.Name] = map[string]bool{}
			}
			for _, it := range items {
				// An item with characters safe.Line would escape is never suggested: the
				// input draws its suggestions as they are.
				if len(c.seen[f.Name]) < maxSuggestions && safe.Line(it) == it {
					c.seen[f.Name][it] = true
				}
			}
		}
	}
}

// maxSuggestions bounds the items a set field remembers for suggestions.
const maxSuggestions = 500

// suggestions returns what field f suggests: an enum's values, or the items of a set seen in
// loaded records, sorted.
func (c *common) suggestions(f *store.Field) []string {
	switch f.Type {
	case store.TypeEnum:
		return f.Values
	case store.TypeSet:
		return slices.Sorted(maps.Keys(c.seen[f.Name]))
	}
	return nil
}

// dbNow is the current time on the database clock, as well as the TUI knows it.
func (c *common) dbNow() time.Time { return c.opts.Now().Add(c.skew) }

// learnClock notes the database clock: db is the database's now read by a query that the
// local clock started at sent. Both are taken in the command, so an answer applied late (the
// program was busy) does not make the database look behind.
func (c *common) learnClock(db, sent time.Time) { c.skew = db.Sub(sent) }

// footer renders the key help for bindings on one line.
func (c *common) footer(bindings []key.Binding) string {
	c.help.SetWidth(c.width)
	return c.help.ShortHelpView(bindings)
}

// clip cuts s to the screen width.
func (c *common) clip(s string) string { return ansi.Truncate(s, max(c.width, 1), "…") }

// errText says a store error in words, with what was being done.
func errText(op string, err error) string {
	msg := err.Error()
	switch store.ErrorCode(err) {
	case store.EUNAVAILABLE:
		msg = "the database cannot be reached: " + msg
	case store.EBUSY:
		msg = "the database is busy, try again: " + msg
	}
	return op + ": " + msg
}

type screenID int

const (
	scrList screenID = iota
	scrEditor
	scrHistory
	scrLocks
)

var (
	_ screen = (*listModel)(nil)
	_ screen = (*editorModel)(nil)
	_ screen = (*historyModel)(nil)
	_ screen = (*locksModel)(nil)
)

// screenOrder is the order broadcasts reach the open screens in.
var screenOrder = []screenID{scrList, scrEditor, scrHistory, scrLocks}

// screen is what every screen implements. The app keeps the open ones in a map by id and
// routes messages, broadcasts and drawing through it.
type screen interface {
	Init() tea.Cmd
	Update(tea.Msg) tea.Cmd
	View() string
	// typing reports whether keys go into a text field now (so ? and q are text).
	typing() bool
}

// App is the root model: it routes messages to the current screen, owns the live feed and
// the one-second tick, and handles the global keys.
type App struct {
	c        *common
	screen   screenID // the screen shown
	screens  map[screenID]screen
	showHelp bool
	helpTop  int          // the first line of keys the help screen shows (help.go)
	list     *listModel   // always open: the app reports errors and returns to it
	editor   *editorModel // the open editor, if any: quitting saves its draft
	editorOf screenID     // the screen the editor was opened from, where leaving it returns
	feedCh   <-chan store.Change
	cursor   int64 // the last change seen, where a resubscription continues
	quitting bool
	asking   *deleteAsk // a delete waiting for its confirmation (delete.go)
	wc       *workCopy  // a working copy's header, sync and conflicts (workcopy.go); nil otherwise
}

// New returns the root model without starting a program (tests drive it directly).
func New(ctx context.Context, s store.Store, opts Options) (*App, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	c := &common{
		ctx:      store.WithActor(ctx, store.Actor{Name: opts.User, Role: opts.Role}),
		st:       s,
		reg:      s.Registry(),
		opts:     opts,
		user:     opts.User,
		styles:   NewStyles(),
		keys:     schemaKeys(DefaultKeyMap(), s.Registry()),
		help:     help.New(),
		width:    80,
		height:   24,
		drafts:   newDraftStore(opts.DraftDir, opts.User, opts.StoreID),
		seen:     map[string]map[string]bool{},
		presence: newPresenceState(),
	}
	l := newList(c)
	return &App{c: c, list: l, screens: map[screenID]screen{scrList: l}, wc: newWorkCopy(c)}, nil
}

// Init starts the list, the feed and the tick.
func (a *App) Init() tea.Cmd {
	return tea.Batch(a.list.Init(), a.subscribe(), tick(), a.wc.Init())
}

func tick() tea.Cmd {
	return tea.Tick(time.Second, func(t time.Time) tea.Msg { return tickMsg(t) })
}

// subscribe starts the change feed from the newest change (or from the cursor after a loss).
func (a *App) subscribe() tea.Cmd {
	c, after := a.c, a.cursor
	return func() tea.Msg {
		if after == 0 {
			last, err := c.st.LastChangeID(c.ctx)
			if err != nil {
				return feedReadyMsg{err: err}
			}
			after = last
		}
		ch, err := c.st.Subscribe(c.ctx, after)
		return feedReadyMsg{ch: ch, after: after, err: err}
	}
}

// waitChange waits for the next change on the feed; the app re-arms it after each one.
func waitChange(ch <-chan store.Change) tea.Cmd {
	return func() tea.Msg {
		ch2, ok := <-ch
		if !ok {
			return feedClosedMsg{}
		}
		return changeMsg{c: ch2}
	}
}

// Update routes msg, then keeps the editor's presence in step (presence.go).
func (a *App) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	m, cmd := a.update(msg)
	if a.editor != nil {
		if r := a.editor.retrySchema(); r != nil {
			cmd = tea.Batch(cmd, r)
		}
	}
	if p := a.presenceCmd(msg); p != nil {
		cmd = tea.Batch(cmd, p)
	}
	return m, cmd
}

func (a *App) update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if cmd, done := a.wc.update(a, msg); done {
		return a, cmd
	}
	switch msg := msg.(type) {
	case leaseAcquiredMsg:
		if a.editor == nil || msg.ed != a.editor || a.screens[scrEditor] == nil {
			// The editor that asked was left while the lease was being taken: give it
			// back now, or it would keep the record read-only to others until it expires.
			if msg.held != nil {
				return a, releaseCmd(a.c, msg.held, nil)
			}
			return a, nil
		}
		return a, a.editor.Update(msg)
	case presenceMsg:
		a.c.presence.onPresence(msg)
		return a, nil
	case tea.WindowSizeMsg:
		a.c.width, a.c.height = msg.Width, msg.Height
		return a, a.broadcast(msg)
	case feedReadyMsg:
		if msg.err != nil {
			a.list.status.fail("live updates", msg.err)
			return a, tea.Tick(3*time.Second, func(time.Time) tea.Msg { return resubscribeMsg{} })
		}
		a.feedCh = msg.ch
		a.cursor = max(a.cursor, msg.after)
		return a, waitChange(msg.ch)
	case resubscribeMsg:
		if a.c.ctx.Err() != nil {
			return a, nil
		}
		return a, a.subscribe()
	case feedClosedMsg:
		a.feedCh = nil
		if a.c.ctx.Err() != nil {
			return a, nil
		}
		return a, tea.Tick(time.Second, func(time.Time) tea.Msg { return resubscribeMsg{} })
	case changeMsg:
		if msg.c.ID > a.cursor {
			a.cursor = msg.c.ID
		}
		cmds := []tea.Cmd{a.broadcast(msg), a.onSchemaChange(msg.c)}
		if a.feedCh != nil {
			cmds = append(cmds, waitChange(a.feedCh))
		}
		return a, tea.Batch(cmds...)
	case tickMsg:
		return a, tea.Batch(tick(), a.broadcast(msg))
	case schemaReloadedMsg:
		return a, a.onSchemaReloaded(msg)
	case editorSchemaMsg:
		if msg.ed != a.editor {
			return a, nil
		}
		return a, a.editor.applySchema(msg)
	case pageMsg, refreshedMsg, leasesMsg, insertRowMsg:
		return a, a.list.Update(msg)
	case askDeleteMsg:
		a.asking = &msg.ask
		return a, nil
	case deletedMsg:
		return a, a.onDeleted(msg)
	case restoredMsg:
		return a, a.onRestored(msg)
	case historyMsg:
		return a, a.deliver(scrHistory, msg)
	case locksMsg:
		return a, a.deliver(scrLocks, msg)
	case errMsg:
		if a.editor != nil && a.screen == scrEditor {
			a.editor.status.fail(msg.op, msg.err)
		} else {
			a.list.status.fail(msg.op, msg.err)
		}
		return a, nil
	case openEditorMsg:
		if msg.id == 0 {
			if err := a.wc.refuseCreate(msg.kind); err != nil {
				a.list.status.fail("new "+string(msg.kind), err)
				return a, nil
			}
		}
		a.editor = newEditor(a.c, msg.kind, msg.id, msg.lease)
		a.editor.revert = msg.revert
		a.editorOf = msg.from
		return a, a.open(scrEditor, a.editor)
	case openHistoryMsg:
		return a, a.open(scrHistory, newHistory(a.c, msg.kind, msg.id))
	case openLocksMsg:
		return a, a.open(scrLocks, newLocks(a.c))
	case backMsg:
		if locks, ok := a.screens[scrLocks].(*locksModel); ok && a.screen == scrEditor && a.editorOf == scrLocks {
			a.close(scrEditor)
			a.screen = scrLocks
			locks.status = statusLine{}
			if msg.status != "" {
				locks.status.ok(msg.status)
			}
			return a, locks.Init()
		}
		for _, id := range []screenID{scrEditor, scrHistory, scrLocks} {
			a.close(id)
		}
		a.screen = scrList
		if msg.status != "" {
			a.list.status.ok(msg.status)
		}
		if msg.created != nil {
			return a, tea.Batch(a.list.show(msg.created), a.list.loadLeases())
		}
		return a, a.list.refreshVisible()
	case tea.KeyPressMsg:
		if key.Matches(msg, a.c.keys.ForceQuit) {
			return a, a.quit()
		}
		if a.asking != nil {
			return a, a.onDeleteKey(msg)
		}
		if a.showHelp {
			a.onHelpKey(msg)
			return a, nil
		}
		if key.Matches(msg, a.c.keys.HelpAnywhere) {
			a.openHelp()
			return a, nil
		}
		if a.acceptsGlobalKeys() {
			switch {
			case key.Matches(msg, a.c.keys.Help):
				a.openHelp()
				return a, nil
			case a.screen == scrList && key.Matches(msg, a.c.keys.Quit):
				return a, a.quit()
			}
		}
	}
	return a, a.route(msg)
}

// acceptsGlobalKeys reports whether ? and q mean help and quit now, rather than text typed
// into a field or the filter.
func (a *App) acceptsGlobalKeys() bool {
	s, ok := a.screens[a.screen]
	return !ok || !s.typing()
}

// open shows screen s as id and starts it.
func (a *App) open(id screenID, s screen) tea.Cmd {
	a.screens[id] = s
	a.screen = id
	return s.Init()
}

// close forgets screen id (never the list).
func (a *App) close(id screenID) {
	if id == scrList {
		return
	}
	delete(a.screens, id)
	if id == scrEditor {
		a.editor = nil
	}
}

// deliver gives msg to screen id if it is open: an answer to a screen that was closed
// meanwhile is dropped.
func (a *App) deliver(id screenID, msg tea.Msg) tea.Cmd {
	if s, ok := a.screens[id]; ok {
		return s.Update(msg)
	}
	return nil
}

func (a *App) quit() tea.Cmd {
	a.quitting = true
	if a.editor != nil {
		return tea.Sequence(a.editor.leaveCmd(), leavePresence(a.c, a.c.presence.session), tea.Quit)
	}
	return tea.Quit
}

// route sends msg to the current screen.
func (a *App) route(msg tea.Msg) tea.Cmd {
	if s, ok := a.screens[a.screen]; ok {
		return s.Update(msg)
	}
	return a.list.Update(msg)
}

// broadcast sends msg to every open screen: sizes, ticks and feed changes concern them all.
func (a *App) broadcast(msg tea.Msg) tea.Cmd {
	var cmds []tea.Cmd
	for _, id := range screenOrder {
		cmds = append(cmds, a.deliver(id, msg))
	}
	return tea.Batch(cmds...)
}

// View draws the current screen.
func (a *App) View() tea.View {
	v := tea.NewView(a.Render())
	v.AltScreen = true
	v.WindowTitle = "tandem"
	return v
}

// Render returns the screen as text (the View's content), for tests and golden files.
func (a *App) Render() string {
	var body string
	s, ok := a.screens[a.screen]
	switch {
	case a.showHelp:
		body = a.helpView()
	case ok:
		body = s.View()
	default:
		body = a.list.View()
	}
	return a.renderAsking(fitScreen(a.wc.decorate(body), a.c.width, a.c.height+a.wc.lines()))
}

// fitScreen cuts body to width×height so that no line wraps and nothing scrolls. Every
// screen ends with its status line and its footer: on a screen too short for the rest,
// those two stay and the middle is cut.
func fitScreen(body string, width, height int) string {
	lines := strings.Split(body, "\n")
	if height > 0 && len(lines) > height {
		if height > 2 {
			lines = append(lines[:height-2:height-2], lines[len(lines)-2:]...)
		} else {
			lines = lines[len(lines)-height:]
		}
	}
	for i, l := range lines {
		if ansi.StringWidth(l) > width {
			lines[i] = ansi.Truncate(l, width, "…")
		}
	}
	return strings.Join(lines, "\n")
}
