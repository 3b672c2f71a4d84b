package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
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
	// ReadOnly, when set, says the user may read but not write, and why ("role viewer"):
	// every field shows read-only from the start, and the store refuses any write.
	ReadOnly string
	// Perms, when set, are what the user may write (a team server's user): records they may
	// not write show read-only from the start, and the store refuses their writes.
	Perms *store.Permissions
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
	// NoEditor, when set, is why ctrl+e runs no external editor (a session of tandem serve:
	// an editor on the server would be a shell there); ctrl+e shows it.
	NoEditor string
	// ProgramOptions are added to the program's own (a served session: its input, output,
	// environment, colour profile and window size).
	ProgramOptions []tea.ProgramOption
	// FeedLinger is how long the change feed waits after a change for more to draw with it
	// (a team server sets it: every save reaches every session, and a session that draws
	// ten saves at once draws once). Zero draws the changes that came as soon as they come.
	FeedLinger time.Duration
	// FeedSpread adds up to this much to FeedLinger, at random for each wait: the sessions
	// of a team server all hear a save at the same moment, and spread they draw it one
	// after another instead of all at once, so a key pressed meanwhile waits behind few of
	// them.
	FeedSpread time.Duration
	// Started, when set, is given the program before it runs (a served session sends it
	// its window changes).
	Started func(p *tea.Program)
	// OpenSource opens the source of a working copy for S (sync); nil when there is none.
	OpenSource func(ctx context.Context) (store.Store, error)
	// Live is the background sync of a --local copy (live.go); nil otherwise.
	Live LiveSync
	// KeyFile is the key map file (keyfile.go); empty means DefaultKeyFile(), "-" none.
	KeyFile string
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
	popts = append(popts, app.c.opts.ProgramOptions...)
	p := tea.NewProgram(app, popts...)
	if app.c.opts.Started != nil {
		app.c.opts.Started(p)
	}
	_, err = p.Run()
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
	// baseKeys are the keys before the schema named its kinds in them: the defaults with
	// the key map file's rebindings.
	baseKeys KeyMap
	help     help.Model
	width    int
	height   int
	skew     time.Duration // database clock minus local clock, learnt from FindLeases
	drafts   *draftStore
	// presence is who has which record open in an editor (presence.go).
	presence *presenceState
	// seen holds the items of set fields (categories, tags) in the records the list loaded,
	// by field name: what one-line fields suggest, next to the registry's enum values.
	seen   map[string]map[string]bool
	search string // the list's search, which the editor marks in the record's text
	marks  matchLineMemo
	// footers, fits and rows keep what the View drew before (memo.go).
	footers footerMemo
	fits    fitMemo
	rows    memo
	// out holds the messages a component sent the others while it handled one; the root
	// routes them as soon as that Update returns, in order (App.Update).
	out []tea.Msg
}

// send hands msg to the root, which routes it to the screen or part it is for once the
// current Update returns. It is how a component talks to another: never by their fields.
func (c *common) send(msg tea.Msg) { c.out = append(c.out, msg) }

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
	return c.footers.footer(c, bindings)
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
	// scrCopyMerge answers a working copy's conflict: the merge view, or a local delete's
	// screen (workcopy.go, workcopy_delete.go).
	scrCopyMerge
)

var (
	_ screen = (*listModel)(nil)
	_ screen = (*editorModel)(nil)
	_ screen = (*historyModel)(nil)
	_ screen = (*locksModel)(nil)
)

// screenOrder is the order broadcasts reach the open screens in.
var screenOrder = []screenID{scrList, scrEditor, scrHistory, scrLocks, scrCopyMerge}

// screen is what every screen implements. The app keeps the open ones in a map by id and
// routes messages, broadcasts and drawing through it.
type screen interface {
	Init() tea.Cmd
	Update(tea.Msg) tea.Cmd
	View() string
	// typing reports whether keys go into a text field now (so ? and q are text).
	typing() bool
}

// App is the root model: it routes messages to the screens, owns the live feed, the
// one-second tick and the window size, and handles the global keys. The help and the delete
// confirmation are overlays: while one is up it takes the keys.
type App struct {
	c        *common
	screen   screenID // the screen shown
	screens  map[screenID]screen
	showHelp bool          // the help overlay is up (help.go)
	help     *helpModel    // the help overlay's model, while it is up
	confirm  *confirmModel // a delete waiting for its confirmation (delete.go)
	list     *listModel    // always open: the app reports errors and returns to it
	editor   *editorModel  // the open editor, if any: quitting saves its draft
	editorOf screenID      // the screen the editor was opened from, where leaving it returns
	winW     int           // the terminal's size; the screens get c.width×c.height
	winH     int
	feedCh   <-chan store.Change
	cursor   int64 // the last change seen, where a resubscription continues
	quitting bool
	wc       *workCopy // a working copy's header, sync and conflicts (workcopy.go); nil otherwise
}

// New returns the root model without starting a program (tests drive it directly).
func New(ctx context.Context, s store.Store, opts Options) (*App, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if opts.KeyFile == "" {
		opts.KeyFile = DefaultKeyFile()
	}
	base, kerr := LoadKeyMap(strings.TrimPrefix(opts.KeyFile, "-"))
	c := &common{
		ctx:      store.WithActor(ctx, store.Actor{Name: opts.User, Role: opts.Role, ReadOnly: opts.ReadOnly, Perms: opts.Perms}),
		st:       s,
		reg:      s.Registry(),
		opts:     opts,
		user:     opts.User,
		styles:   NewStyles(),
		baseKeys: base,
		keys:     schemaKeys(base, s.Registry()),
		help:     help.New(),
		width:    80,
		height:   24,
		drafts:   newDraftStore(opts.DraftDir, opts.User, opts.StoreID),
		seen:     map[string]map[string]bool{},
		presence: newPresenceState(),
	}
	l := newList(c)
	if kerr != nil {
		l.status.warn(kerr.Error()) // the defaults are in use
	}
	return &App{c: c, list: l, screens: map[screenID]screen{scrList: l}, wc: newWorkCopy(c), winW: 80, winH: 24}, nil
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

// feedLinger is how long the next wait for changes lingers: FeedLinger and up to FeedSpread.
func (a *App) feedLinger() time.Duration {
	d := a.c.opts.FeedLinger
	if s := a.c.opts.FeedSpread; s > 0 {
		d += rand.N(s)
	}
	return d
}

// waitChange waits for the next change on the feed, and takes with it those already waiting
// behind it and those that come within linger of it (up to maxChangeBatch): they come as
// one changesMsg, handled in one Update and drawn once. The app re-arms it after each
// message.
func waitChange(ch <-chan store.Change, linger time.Duration) tea.Cmd {
	return func() tea.Msg {
		first, ok := <-ch
		if !ok {
			return feedClosedMsg{}
		}
		var (
			more []store.Change
			wait <-chan time.Time // nil: only what is already waiting
		)
		if linger > 0 {
			t := time.NewTimer(linger)
			defer t.Stop()
			wait = t.C
		}
	drain:
		for len(more) < maxChangeBatch-1 {
			select {
			case c, ok := <-ch:
				if !ok {
					break drain // the next wait reports the close
				}
				more = append(more, c)
				continue
			default:
			}
			if wait == nil {
				break
			}
			select {
			case c, ok := <-ch:
				if !ok {
					break drain
				}
				more = append(more, c)
			case <-wait:
				break drain
			}
		}
		if len(more) == 0 {
			return changeMsg{c: first}
		}
		return changesMsg{cs: append([]store.Change{first}, more...)}
	}
}

// maxChangeBatch bounds the changes one changesMsg carries.
const maxChangeBatch = 64

// maxRouted bounds the messages the components may send each other while one message is
// handled: a loop between two of them ends instead of hanging the program.
const maxRouted = 64

// Update routes msg, then the messages the components sent each other meanwhile (in the
// order they were sent), then keeps the editor's presence in step (presence.go).
func (a *App) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	cmds := []tea.Cmd{a.update(msg)}
	for i := 0; i < maxRouted && len(a.c.out) > 0; i++ {
		next := a.c.out[0]
		a.c.out = a.c.out[1:]
		cmds = append(cmds, a.update(next))
	}
	a.c.out = nil
	if a.editor != nil {
		// A new schema waits while a save or a dialog is up (schema_reload.go).
		cmds = append(cmds, a.editor.retrySchema())
	}
	cmds = append(cmds, a.presenceCmd(msg))
	return a, tea.Batch(cmds...)
}

// update routes one message: to the working copy's part, the feed, the screens' navigation,
// the global keys, or else the current screen.
func (a *App) update(msg tea.Msg) tea.Cmd {
	if cmd, done := a.wc.update(msg); done {
		return cmd
	}
	if cmd, done := a.onFeed(msg); done {
		return cmd
	}
	if cmd, done := a.onNavigate(msg); done {
		return cmd
	}
	if cmd, done := a.onAnswer(msg); done {
		return cmd
	}
	switch msg := msg.(type) {
	case presenceMsg:
		a.c.presence.onPresence(msg)
		return nil
	case tea.WindowSizeMsg:
		a.winW, a.winH = msg.Width, msg.Height
		return a.layout()
	case layoutMsg:
		return a.layout()
	case tea.KeyPressMsg:
		if cmd, done := a.onKey(msg); done {
			return cmd
		}
	}
	return a.route(msg)
}

// onAnswer delivers a message meant for one screen to that screen (dropped when it was
// closed meanwhile); done says msg was one.
func (a *App) onAnswer(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case leaseAcquiredMsg:
		if a.editor == nil || msg.ed != a.editor || a.screens[scrEditor] == nil {
			// The editor that asked was left while the lease was being taken: give it
			// back now, or it would keep the record read-only to others until it expires.
			if msg.held != nil {
				return releaseCmd(a.c, msg.held, nil), true
			}
			return nil, true
		}
		return a.editor.Update(msg), true
	case pageMsg, refreshedMsg, leasesMsg, insertRowMsg, reloadListMsg:
		return a.list.Update(msg), true
	case copyCheckMsg, copyGoneMsg:
		return a.deliver(scrEditor, msg), true
	case statusMsg:
		return a.deliver(msg.to, msg), true
	case livePushedMsg:
		cmd := a.deliver(scrEditor, msg)
		if a.screen == scrList {
			return tea.Batch(cmd, a.deliver(scrList, statusMsg{to: scrList, line: pushedLine(msg)})), true
		}
		return cmd, true
	case liveLeaseMsg:
		return a.deliver(scrEditor, msg), true
	case historyMsg:
		return a.deliver(scrHistory, msg), true
	case locksMsg:
		return a.deliver(scrLocks, msg), true
	case errMsg:
		if a.editor != nil && a.screen == scrEditor {
			return a.deliver(scrEditor, msg), true
		}
		return a.list.Update(msg), true
	}
	return nil, false
}

// layout gives the screens the window less the working copy's header.
func (a *App) layout() tea.Cmd {
	a.c.width, a.c.height = a.winW, a.winH
	if n := a.wc.lines(); n > 0 {
		a.c.height = max(a.winH-n, 1)
	}
	return a.broadcast(tea.WindowSizeMsg{Width: a.c.width, Height: a.c.height})
}

// onFeed handles the change feed and the tick; done says msg was one of theirs.
func (a *App) onFeed(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case feedReadyMsg:
		if msg.err != nil {
			cmd := a.list.Update(errMsg{op: "live updates", err: msg.err})
			return tea.Batch(cmd, tea.Tick(3*time.Second, func(time.Time) tea.Msg { return resubscribeMsg{} })), true
		}
		a.feedCh = msg.ch
		a.cursor = max(a.cursor, msg.after)
		return waitChange(msg.ch, a.feedLinger()), true
	case resubscribeMsg:
		if a.c.ctx.Err() != nil {
			return nil, true
		}
		return a.subscribe(), true
	case feedClosedMsg:
		a.feedCh = nil
		if a.c.ctx.Err() != nil {
			return nil, true
		}
		return tea.Tick(time.Second, func(time.Time) tea.Msg { return resubscribeMsg{} }), true
	case changeMsg:
		if msg.c.ID > a.cursor {
			a.cursor = msg.c.ID
		}
		cmds := []tea.Cmd{a.broadcast(msg), a.onSchemaChange(msg.c)}
		if a.feedCh != nil {
			cmds = append(cmds, waitChange(a.feedCh, a.feedLinger()))
		}
		return tea.Batch(cmds...), true
	case changesMsg:
		return a.onChanges(msg.cs), true
	case tickMsg:
		return tea.Batch(tick(), a.broadcast(msg)), true
	case schemaReloadedMsg:
		return a.onSchemaReloaded(msg), true
	case editorSchemaMsg:
		if msg.ed != a.editor {
			return nil, true
		}
		return a.editor.applySchema(msg), true
	}
	return nil, false
}

// onChanges handles changes that came from the feed together: each screen hears each
// change in order, as from one changeMsg each, but the list reads the records they touch
// again in one query (listModel.onChanges), and the screen is drawn once for them all.
func (a *App) onChanges(cs []store.Change) tea.Cmd {
	var cmds []tea.Cmd
	for _, id := range screenOrder {
		if l, ok := a.screens[id].(*listModel); ok {
			cmds = append(cmds, l.onChanges(cs))
			continue
		}
		for _, c := range cs {
			cmds = append(cmds, a.deliver(id, changeMsg{c: c}))
		}
	}
	for _, c := range cs {
		a.cursor = max(a.cursor, c.ID)
		cmds = append(cmds, a.onSchemaChange(c))
	}
	if a.feedCh != nil {
		cmds = append(cmds, waitChange(a.feedCh, a.feedLinger()))
	}
	return tea.Batch(cmds...)
}

// onNavigate opens and closes screens and overlays; done says msg was one of theirs.
func (a *App) onNavigate(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case openEditorMsg:
		return a.openEditor(msg), true
	case openHistoryMsg:
		return a.open(scrHistory, newHistory(a.c, msg.kind, msg.id)), true
	case openLocksMsg:
		return a.open(scrLocks, newLocks(a.c)), true
	case openScreenMsg:
		return a.open(msg.id, msg.s), true
	case closeScreenMsg:
		a.close(msg.id)
		a.screen = scrList
		if _, ok := a.screens[msg.to]; ok {
			a.screen = msg.to
		}
		return nil, true
	case copyConflictsMsg:
		return a.broadcast(msg), true
	case backMsg:
		return a.back(msg), true
	case askDeleteMsg:
		a.confirm = newConfirm(a.c, msg.ask)
		return nil, true
	case closeConfirmMsg:
		a.confirm = nil
		return nil, true
	case closeHelpMsg:
		a.showHelp, a.help = false, nil
		return nil, true
	case deletedMsg:
		msg.to = a.deleteReporter(msg)
		return a.broadcast(msg), true
	case restoredMsg:
		msg.to = a.reporter(msg.from)
		return a.broadcast(msg), true
	}
	return nil, false
}

// openEditor opens the editor asked for, unless a working copy refuses a new record of
// its kind.
func (a *App) openEditor(msg openEditorMsg) tea.Cmd {
	if msg.id == 0 {
		if err := a.wc.refuseCreate(msg.kind); err != nil {
			return a.list.Update(errMsg{op: "new " + string(msg.kind), err: err})
		}
	}
	a.editor = newEditor(a.c, msg.kind, msg.id, msg.lease, msg.revert)
	a.editorOf = msg.from
	if a.wc.active() {
		a.c.send(a.wc.conflictsMsg()) // the new editor hears whether its record has one
	}
	return a.open(scrEditor, a.editor)
}

// back leaves the current screen for the one it was opened from: the locks screen for an
// editor opened there, else the list. The screen shown again hears what to say.
func (a *App) back(msg backMsg) tea.Cmd {
	to := scrList
	if _, ok := a.screens[scrLocks]; ok && a.screen == scrEditor && a.editorOf == scrLocks {
		to = scrLocks
		a.close(scrEditor)
	} else {
		for _, id := range []screenID{scrEditor, scrHistory, scrLocks} {
			a.close(id)
		}
	}
	a.screen = to
	return a.deliver(to, returnedMsg(msg))
}

// reporter is the screen that reports the answer to something screen from asked: that
// screen if it is still open and has a status line of its own, else the list.
func (a *App) reporter(from screenID) screenID {
	if _, ok := a.screens[from]; ok && (from == scrEditor || from == scrHistory) {
		return from
	}
	return scrList
}

// deleteReporter is the screen that reports a delete: a failure where it was asked, a
// record deleted from its open editor in the editor (which then closes), else the list.
func (a *App) deleteReporter(msg deletedMsg) screenID {
	d := msg.ask
	if msg.err != nil {
		return a.reporter(d.from)
	}
	if d.from == scrEditor && a.editor != nil && a.editor.id == d.id && a.editor.kind == d.kind {
		return scrEditor
	}
	return scrList
}

// onKey handles the global keys and the overlays; done says the key went no further.
func (a *App) onKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	k := a.c.keys
	switch {
	case key.Matches(msg, k.ForceQuit):
		return a.quit(), true
	case a.confirm != nil:
		return a.confirm.Update(msg), true
	case a.showHelp:
		return a.help.Update(msg), true
	case key.Matches(msg, k.HelpAnywhere):
		a.openHelp()
		return nil, true
	case !a.acceptsGlobalKeys():
		return nil, false
	case key.Matches(msg, k.Help):
		a.openHelp()
		return nil, true
	case a.screen == scrList && key.Matches(msg, k.Quit):
		return a.quit(), true
	case a.screen == scrList && a.wc.active() && key.Matches(msg, k.Sync):
		return a.wc.startSync(), true
	}
	return nil, false
}

// openHelp shows the help overlay from its top.
func (a *App) openHelp() {
	a.showHelp, a.help = true, newHelp(a.c)
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
		body = a.help.View()
	case ok:
		body = s.View()
	default:
		body = a.list.View()
	}
	return a.confirm.over(a.c.fits.fit(a.wc.decorate(body), a.c.width, a.c.height+a.wc.lines()))
}

// fitScreen cuts body to width×height so that no line wraps and nothing scrolls. Every
// screen ends with its status line and its footer: on a screen too short for the rest,
// those two stay and the middle is cut.
func fitScreen(body string, width, height int) string {
	return fitLines(body, width, height, func(l string) string { return fitLine(l, width) })
}

// fitLines is fitScreen with fit cutting each line to the width.
func fitLines(body string, width, height int, fit func(string) string) string {
	lines := strings.Split(body, "\n")
	if height > 0 && len(lines) > height {
		if height > 2 {
			lines = append(lines[:height-2:height-2], lines[len(lines)-2:]...)
		} else {
			lines = lines[len(lines)-height:]
		}
	}
	for i, l := range lines {
		lines[i] = fit(l)
	}
	return strings.Join(lines, "\n")
}

// readOnlyNote is what the list's header says after the user's name when they may only
// read: " (read only)", else nothing.
func (c *common) readOnlyNote() string {
	if c.opts.ReadOnly == "" {
		return ""
	}
	return " (read only)"
}
