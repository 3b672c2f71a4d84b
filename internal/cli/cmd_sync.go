package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/store"
	tsync "github.com/tandem-editor/tandem/sync"
)

func newSyncCmd(a *app) *cobra.Command {
	var (
		asJSON bool
		source string
		repush bool
		// dropUnfit drops the local changes that no longer fit the source's schema first.
		dropUnfit bool
		follow    bool
	)
	cmd := &cobra.Command{
		Use:   "sync",
		Short: "Bring a working copy and its source together",
		Long: `Sync pulls the source's changes into the working copy named by --db and pushes the
copy's local changes to the source, until nothing moves. Relative changes (stock) are
replayed exactly once; other fields are saved on the version they were edited from, or
merged field by field when the source moved on. What both sides changed differently
waits in the copy's conflict queue (tandem status, tandem resolve), with your value
kept; a record someone holds a lease on waits until the lease ends.

The copy remembers where its source is, without a password: sync takes it from
PGPASSWORD or the password file (~/.pgpass, PGPASSFILE), or asks for it when run in a
terminal. --source names a new place
(the store moved); after a sync that found the same store there (same store id), the copy
remembers the new place.

The copy runs its source's schema. When the source's schema changed since the last
sync, the copy takes it first (listed), then pulls records. A local change that no
longer fits it (a field dropped, an enum value removed, a kind gone) stays in the copy,
not pushed, and the sync lists it with its values: enter what you still need in fields
the schema has, then --drop-unfit drops those changes (the copy takes the source's
values of those records).

Deletes and restores on the source reach the copy too. A record you edited that the
source deleted stays with your edit, as a conflict: resolve it with theirs to let it go,
or restore it on the source and sync.

A source put back from an older backup is noticed: the copy keeps, with its position,
what the last change it read was, and a sync that does not find that change on the
source as it was stops before anything moves. The ways on: --repush puts the copy's
values to the source again as changes (your edits on values the source still has are
pushed; every other difference, a write the source lost or one made there since the
restore, waits as a conflict with your value kept), or clone the source afresh
(tandem clone SOURCE NEW-FILE) and keep this file to copy your work from.

--follow keeps the copy in step until interrupted (Ctrl-C): each local save is pushed
as soon as the source answers, the source's changes are pulled as its change feed tells
of them, and an outage only makes it wait and reconnect; it prints a line when its state
changes (--json: one object per line). tandem --local runs the same in the TUI.

Exit codes: 0 in sync; 3 conflicts remain, or changes that no longer fit the schema
(listed; --json prints them as records);
4 only lease waits remain; 1 the source cannot be reached (nothing is lost locally);
2 the source is another store, or it went back in time (put back from an older
backup), or another sync of the copy is running, or the copy cannot be written (its
file or its directory), and nothing moved.`,
		Example: `  tandem sync --db catalogue.db
  PGPASSWORD=… tandem sync --db catalogue.db --json`,
		Args: exactArgs(0, ""),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if follow {
				return a.followSync(ctx, source, repush, asJSON) // cmd_sync_follow.go
			}
			wc, st, unlock, err := a.copyToSync(ctx, 0)
			if err != nil {
				return err
			}
			defer unlock()
			moved := source != ""
			if !moved {
				source = st.Source
			}
			src, err := a.openSource(ctx, source, st)
			if err != nil {
				return err
			}
			defer src.Close()
			var dropped []tsync.Unfit
			if dropUnfit {
				if dropped, err = tsync.DropUnfit(ctx, src, wc); err != nil {
					return err
				}
				for _, u := range dropped {
					fmt.Fprintf(a.stderr, "dropped your %s of %s %d, which no longer fit the source's schema\n", u.Op, u.Kind, u.ID)
				}
			}
			var rep *tsync.Report
			if repush {
				// The copy's values are queued again as this person's edits.
				actx, aerr := a.actor(ctx)
				if aerr != nil {
					return aerr
				}
				rep, err = tsync.Repush(actx, src, wc)
			} else {
				rep, err = tsync.Sync(ctx, src, wc)
			}
			var rw *tsync.RewoundError
			if errors.As(err, &rw) {
				return fmt.Errorf("sync refused: %w.\nWays on (docs/offline.md, \"A source restored from a backup\"):\n"+
					"- tandem sync --repush: put this copy's values to the source again as changes; your edits on values the source "+
					"still has are pushed, every other difference waits as a conflict with your value kept (tandem status, tandem resolve)\n"+
					"- or clone the source afresh (tandem clone %s NEW-FILE) and keep this file to copy your work from", err, safe.Line(source))
			}
			if tsync.Refused(err) {
				return fmt.Errorf("sync refused: %w", err)
			}
			if err != nil {
				return fmt.Errorf("sync stopped; what was done stays done and the next sync continues: %w", err)
			}
			if moved {
				// The same store (Sync checked its id) at a new place: the next sync goes
				// there without --source.
				loc, err := sourceLocation(source)
				if err != nil {
					return err
				}
				if loc != st.Source {
					if err := wc.SetSource(ctx, loc); err != nil {
						return err
					}
					fmt.Fprintf(a.stderr, "the copy now remembers its source at %s\n", safe.Line(loc))
				}
			}
			if asJSON {
				if err := writeJSON(a.stdout, syncJSON(wc.Registry(), rep)); err != nil {
					return err
				}
			} else {
				printSync(a.stdout, rep)
			}
			switch {
			case len(rep.Conflicts) > 0, len(rep.Unfit) > 0:
				return &exitCodeError{code: exitConflict}
			case len(rep.Waits) > 0:
				return &exitCodeError{code: exitLease}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	cmd.Flags().BoolVar(&dropUnfit, "drop-unfit", false, "first drop the local changes that no longer fit the source's schema (sync lists them); the copy takes the source's values of those records")
	cmd.Flags().BoolVar(&follow, "follow", false, "keep syncing until interrupted: push each local save at once, pull the source's changes as they come, reconnect after an outage")
	cmd.Flags().BoolVar(&repush, "repush", false, "after the source went back in time: put this copy's values to it again as changes (conflicts queued), then sync")
	cmd.Flags().StringVar(&source, "source", "", "the source's DSN or path, when it moved from where the copy remembers it (remembered after the sync)")
	return cmd
}

// tuiSyncWait bounds how long the TUI's S waits for another sync of its copy to end: a
// --local TUI's background syncer holds the sync lock for a round at a time, and the person
// who pressed S wants the sync, not a refusal because a round was running.
const tuiSyncWait = 15 * time.Second

// copySource opens the source of the working copy named by --db, where the copy remembers
// it (the TUI's S), waiting up to tuiSyncWait for another sync of the copy to end.
// EINVALID when the store is not a working copy.
func (a *app) copySource(ctx context.Context) (store.Store, error) {
	_, st, unlock, err := a.copyToSync(ctx, tuiSyncWait)
	if err != nil {
		return nil, err
	}
	src, err := a.openSource(ctx, st.Source, st)
	if err != nil {
		unlock()
		return nil, err
	}
	return &lockedSource{Store: src, unlock: unlock}, nil
}

// copyToSync opens the working copy --db names for a sync (the sync command's, the TUI's):
// it returns the copy, its state and the unlock of its sync lock (lockSync; waiting up to
// wait while another sync holds it, refused at once when wait is 0). A copy that
// cannot be written (its file or its directory) is refused (exit 2) before the lock and
// before anything moves: a sync writes what it pulls into the copy and marks there what it
// pushed, and a push it could not mark would be pushed again by the next sync.
func (a *app) copyToSync(ctx context.Context, wait time.Duration) (store.WorkingCopy, *store.CopyState, func(), error) {
	wc, st, err := a.workingCopy(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	if ro, ok := wc.(interface{ ReadOnly() string }); ok && ro.ReadOnly() != "" {
		return nil, nil, nil, usagef("%s is read-only (%s): a sync writes the source's changes into the copy and marks there what it pushed; "+
			"nothing was pulled or pushed: make it writable, then sync again", safe.Line(a.dsn), ro.ReadOnly())
	}
	if wait > 0 {
		unlock, ok, err := a.waitSyncLock(ctx, wait)
		if err != nil {
			return nil, nil, nil, err
		}
		if ok {
			return wc, st, unlock, nil
		}
	}
	unlock, err := a.lockSync()
	if err != nil {
		return nil, nil, nil, err
	}
	return wc, st, unlock, nil
}

// lockedSource is a working copy's source opened for one sync: closing it lets the
// copy's sync lock go.
type lockedSource struct {
	store.Store
	unlock func()
}

// Close closes the source and lets the sync lock go.
func (l *lockedSource) Close() error {
	err := l.Store.Close()
	l.unlock()
	return err
}

// lockSync takes the sync lock of the working copy --db names, a file next to the database
// file, without waiting: two syncs of one copy at once would push the same outbox entries
// twice, and the second is refused (exit 2) rather than stopped halfway. The lock is named
// after the file the path leads to, symlinks resolved (as SQLite resolves them for its own
// journal), so two names of one copy share one lock. The system lets the lock go when the
// process holding it dies.
func (a *app) lockSync() (unlock func(), err error) {
	real, err := filepath.EvalSymlinks(a.dsn)
	if err != nil {
		return nil, fmt.Errorf("sync lock: find the working copy's file: %w", err)
	}
	dir, base := filepath.Split(real)
	if dir == "" {
		dir = "."
	}
	path := filepath.Join(dir, "."+base+".sync.lock")
	unlock, ok, err := lockFile(path, "sync")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, usagef("another tandem sync of %s is running; nothing was done: sync again when it ends%s",
			safe.Line(a.dsn), syncLockNote(path))
	}
	return unlock, nil
}

// openSource opens a working copy's source. A source that is not there (a file moved away,
// a server down) is unavailable (exit 1), whatever the store says: the copy is fine, and
// its changes wait.
func (a *app) openSource(ctx context.Context, source string, st *store.CopyState) (store.Store, error) {
	if err := checkDSNAs("--source", source); err != nil {
		return nil, err
	}
	if isFileDSN(source) {
		if _, err := os.Stat(source); errors.Is(err, fs.ErrNotExist) {
			// Not "tandem seed creates one": a new store would be another store, which
			// this copy refuses. The source moved, or its disk is not there.
			return nil, store.Errorf(store.EUNAVAILABLE, "the source cannot be reached; %s in the copy: no store at %s "+
				"(moved? tandem sync --source NEW-PATH names where it is now)", staying(st.Pending), safe.Line(source))
		}
	}
	// The source runs the schema it keeps, which may be newer than the copy's: the sync
	// takes it (tsync.Sync).
	src, err := a.openAskingPassword(ctx, source, store.Options{})
	switch store.ErrorCode(err) {
	case "":
		return src, nil
	case store.ENOTFOUND, store.EUNAVAILABLE, store.EBUSY, store.EINTERNAL:
		return nil, store.Errorf(store.EUNAVAILABLE, "the source cannot be reached; %s in the copy: %v", staying(st.Pending), err)
	}
	return nil, fmt.Errorf("open the source: %w", err)
}

// localIDNote is what a message about a record created in st adds when st is a working
// copy: the id is the copy's own, and the source gives the record its id at the next sync.
func localIDNote(ctx context.Context, st store.Store) string {
	if wc, ok := st.(store.WorkingCopy); ok {
		if _, err := wc.CopyState(ctx); err == nil {
			return "; a local id: the source gives the record its own id at the next sync"
		}
	}
	return ""
}

// workingCopy returns the store of --db as a working copy, and its state.
func (a *app) workingCopy(ctx context.Context) (store.WorkingCopy, *store.CopyState, error) {
	st, err := a.store(ctx)
	if err != nil {
		return nil, nil, err
	}
	wc, ok := st.(store.WorkingCopy)
	if !ok {
		return nil, nil, usagef("%s is not a working copy (tandem clone makes one from a shared store)", safe.Line(dsnWhere(a.dsn)))
	}
	s, err := wc.CopyState(ctx)
	if store.ErrorCode(err) == store.ENOTFOUND {
		return nil, nil, usageErr(err)
	}
	return wc, s, err
}

func printSync(w io.Writer, rep *tsync.Report) {
	if t := rep.Schema; t != nil {
		fmt.Fprintf(w, "took the source's schema version %d (the copy had version %d):\n", t.To, t.From)
		for _, c := range t.Changes {
			fmt.Fprintf(w, "  %s\n", safe.Line(c))
		}
	}
	if rep.Repushed > 0 {
		fmt.Fprintf(w, "repushed %s as changes on the source as it is now\n", plural(rep.Repushed, "record"))
	}
	fmt.Fprintf(w, "pulled %s, pushed %s (%d merged with the source's)\n", plural(rep.Pulled, "record"), plural(rep.Pushed, "change"), rep.Merged)
	if rep.Removed > 0 {
		fmt.Fprintf(w, "removed %s the source deleted\n", plural(rep.Removed, "record"))
	}
	for i := range rep.Conflicts {
		c := &rep.Conflicts[i]
		fmt.Fprintf(w, "conflict: %s\n", safe.Line(tsync.Describe(c)))
		fmt.Fprintf(w, "  %s\n", safe.Line(tsync.Hint(c)))
	}
	for _, d := range rep.Deletes {
		fmt.Fprintf(w, "pending delete: %s %d\n", d.Kind, d.ID)
	}
	for _, h := range rep.Held {
		fmt.Fprintf(w, "held back: the source's %s %d: %s\n", h.Kind, h.ID, safe.Line(h.Reason))
	}
	for _, u := range rep.Unfit {
		fmt.Fprintf(w, "kept, not pushed: your %s of %s %d no longer fits the source's schema:\n", u.Op, u.Kind, u.ID)
		for _, why := range u.Why {
			fmt.Fprintf(w, "  %s\n", safe.Line(why))
		}
	}
	for _, wt := range rep.Waits {
		fmt.Fprintf(w, "waiting: %s %d is leased by %s until %s (%s fields)\n", wt.Kind, wt.ID,
			safe.Line(wt.Holder), wt.Until.Local().Format("15:04:05"), safe.Line(wt.Group))
	}
	switch {
	case len(rep.Conflicts) > 0:
		fmt.Fprintln(w, "answer each conflict as its line says, then sync again")
	case len(rep.Waits) > 0:
		fmt.Fprintln(w, "the waiting changes go out at a sync after the lease ends")
	case len(rep.Unfit) > 0:
		fmt.Fprintln(w, unfitHint)
	case len(rep.Held) > 0:
		fmt.Fprintln(w, "the held-back records come in at a sync after what holds them is settled")
	default:
		fmt.Fprintln(w, "in sync")
	}
}

// jsonConflict is a conflict in the JSON of sync and status.
type jsonConflict struct {
	Kind          store.Kind     `json:"kind"`
	ID            int64          `json:"id"`
	Op            store.CopyOp   `json:"op"`
	Reason        string         `json:"reason"`
	Fields        []string       `json:"fields"`
	Base          map[string]any `json:"base"`
	Mine          map[string]any `json:"mine"`
	Theirs        map[string]any `json:"theirs"`
	TheirsVersion int64          `json:"theirs_version"`
	Author        string         `json:"author"`
	EditedAt      string         `json:"edited_at"`
}

func exportValues(reg *store.Registry, kind store.Kind, vals store.Values) map[string]any {
	if vals == nil {
		return nil
	}
	out := map[string]any{}
	for _, f := range reg.Fields(kind) {
		if v, ok := vals[f.Name]; ok {
			out[f.Name] = f.Export(v)
		}
	}
	return out
}

func exportConflicts(reg *store.Registry, cs []store.CopyConflict) []jsonConflict {
	out := []jsonConflict{}
	for _, c := range cs {
		fields := c.Fields
		if fields == nil {
			fields = []string{}
		}
		out = append(out, jsonConflict{Kind: c.Kind, ID: c.ID, Op: c.Op, Reason: c.Reason, Fields: fields,
			Base: exportValues(reg, c.Kind, c.Base), Mine: exportValues(reg, c.Kind, c.Mine),
			Theirs: exportValues(reg, c.Kind, c.Theirs), TheirsVersion: c.TheirsVersion,
			Author: c.Actor, EditedAt: formatTime(c.At)})
	}
	return out
}

func syncJSON(reg *store.Registry, rep *tsync.Report) any {
	waits := rep.Waits
	if waits == nil {
		waits = []tsync.Wait{}
	}
	deletes := rep.Deletes
	if deletes == nil {
		deletes = []tsync.Ref{}
	}
	held := rep.Held
	if held == nil {
		held = []tsync.Held{}
	}
	unfit := rep.Unfit
	if unfit == nil {
		unfit = []tsync.Unfit{}
	}
	return struct {
		InSync    bool           `json:"in_sync"`
		Repushed  int            `json:"repushed"`
		Pulled    int            `json:"pulled"`
		Removed   int            `json:"removed"`
		Pushed    int            `json:"pushed"`
		Merged    int            `json:"merged"`
		Position  int64          `json:"position"`
		Pending   int            `json:"pending"`
		Deletes   []tsync.Ref    `json:"pending_deletes"`
		Conflicts []jsonConflict `json:"conflicts"`
		Waits     []tsync.Wait   `json:"waits"`
		Held      []tsync.Held   `json:"held_back"`
		Schema    any            `json:"schema_taken"`
		Unfit     []tsync.Unfit  `json:"unfit"`
		UnfitHint string         `json:"unfit_hint,omitempty"`
	}{rep.InSync(), rep.Repushed, rep.Pulled, rep.Removed, rep.Pushed, rep.Merged, rep.Position, rep.Pending, deletes,
		exportConflicts(reg, rep.Conflicts), waits, held, schemaTaken(rep.Schema), unfit, hintIf(len(unfit) > 0, unfitHint)}
}

// schemaTaken is the schema change a sync took, as its JSON shows it (null: none).
func schemaTaken(t *tsync.SchemaTaken) any {
	if t == nil {
		return nil
	}
	return t
}

// hintIf returns hint when on, and "" otherwise.
func hintIf(on bool, hint string) string {
	if on {
		return hint
	}
	return ""
}

// unfitHint says what to do with local changes that no longer fit the source's schema.
const unfitHint = "changes that no longer fit the source's schema stay in the copy, not pushed (their values are above): " +
	"enter what you still need in fields the schema has (tandem set --db COPY ...), then drop them with " +
	"tandem sync --drop-unfit; or ask for the schema change to be undone on the source"

// ago says how long ago t was, for people.
func ago(t, now time.Time) string {
	if t.IsZero() {
		return "never"
	}
	d := now.Sub(t).Round(time.Second)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h ago", int(d.Hours()))
	}
	return fmt.Sprintf("%d days ago", int(d.Hours()/24))
}

// staying says how many local changes stay in the copy, in a sentence.
func staying(n int) string {
	if n == 1 {
		return "1 local change stays"
	}
	return plural(n, "local change") + " stay"
}

// plural says "1 record", "2 records".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
