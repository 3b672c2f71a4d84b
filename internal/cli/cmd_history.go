package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/store"
)

// jsonVersion is the JSON form of a history version.
type jsonVersion struct {
	Version  int64          `json:"version"`
	Actor    string         `json:"actor"`
	At       string         `json:"at"`
	Fields   []string       `json:"fields"`
	Snapshot map[string]any `json:"snapshot"`
	Event    store.Event    `json:"event,omitempty"` // deleted (a tombstone) or restored
}

// jsonChange is the JSON form of an operation-log entry.
type jsonChange struct {
	ID      int64            `json:"id"`
	Event   store.Event      `json:"event"`
	Version int64            `json:"version"`
	Actor   string           `json:"actor"`
	Role    store.Role       `json:"role"`
	Fields  []string         `json:"fields"`
	Deltas  map[string]int64 `json:"deltas,omitempty"`
	At      string           `json:"at"`
}

// historyLimit is how many versions, and how many operation-log entries, history prints
// unless --limit or --all says otherwise.
const historyLimit = 50

// Page sizes when history streams: one read of versions without their snapshots, and one
// read of versions with them (a page holds that many snapshots and the chain under them).
const (
	historyStreamHeads     = 500
	historyStreamSnapshots = 16
)

// historyFlags are the history command's flags.
type historyFlags struct {
	asJSON        bool
	all           bool
	limit         int
	before, since int64
}

// check refuses flags that select nothing or contradict each other.
func (f historyFlags) check(cmd *cobra.Command) error {
	switch {
	case f.limit < 1:
		return usagef("--limit %d: a page shows at least one version (--all shows every one)", f.limit)
	case f.all && cmd.Flags().Changed("limit"):
		return usagef("--all and --limit: give one of them")
	case cmd.Flags().Changed("before") && f.before < 1:
		return usagef("--before %d: versions start at 1", f.before)
	case f.since < 0:
		return usagef("--since %d is below 0 (--since 0, the default, shows every version)", f.since)
	case f.before > 0 && f.since >= f.before:
		return usagef("--since %d is not below --before %d: no version is both", f.since, f.before)
	}
	return nil
}

func newHistoryCmd(a *app) *cobra.Command {
	var f historyFlags
	cmd := &cobra.Command{
		Use:   "history KIND ID",
		Short: "Show a record's history versions and its operation log",
		Long: `History prints, newest first, the history versions of a record (every editor save:
who, when, which fields, with every field of the version in --json) and, separately,
its operation log: the writes that add no history version, such as the workers' system
writes and relative adjusts made inside a no-history scope. History stores only what
each save changed, with a full snapshot now and then; every version is rebuilt
exactly (tandem get KIND ID --version N shows one).

It prints the newest 50 of each (--limit N) and a line with the command that shows the
older ones (--before V, the oldest version printed); --since V stops at version V, and
--all prints everything. History streams: it holds one page in memory whatever the
history's length, also for --all --json.`,
		Example: `  tandem history product 42
  tandem history document 3 --json
  tandem history document 3 --before 9952
  tandem history document 3 --since 120 --all`,
		Args: exactArgs(2, "KIND ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.check(cmd); err != nil {
				return err
			}
			kind, id, err := a.parseRecordRef(cmd.Context(), args[0], args[1])
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			st, err := a.store(ctx)
			if err != nil {
				return err
			}
			// Not-found first, so a missing record is exit 5 and not an empty history; a
			// deleted one still has its history, tombstone first.
			_, findErr := st.FindRecord(ctx, kind, id)
			if findErr != nil && store.ErrorCode(findErr) != store.ENOTFOUND {
				return findErr
			}
			if findErr != nil {
				newest, err := st.FindHistoryPage(ctx, kind, id, store.HistoryQuery{Limit: 1})
				if err != nil {
					return err
				}
				if len(newest) == 0 || newest[0].Event != store.EventDeleted {
					return findErr
				}
			}
			rng := store.HistoryQuery{Before: f.before, Since: f.since}
			var more int64
			if !f.all {
				if rng, more, err = historyPage(ctx, st, kind, id, rng, f.limit); err != nil {
					return err
				}
			}
			var w historyWriter = &historyText{a: a, kind: kind, id: id, reg: st.Registry(), more: more}
			if f.asJSON {
				w = &historyJSON{w: a.stdout, kind: kind, reg: st.Registry()}
			}
			if err := w.versions(); err != nil {
				return err
			}
			q, step := rng, historyStreamHeads
			if f.asJSON {
				q.Snapshots, step = true, historyStreamSnapshots
			}
			read := func(q store.HistoryQuery) ([]store.Version, error) { return st.FindHistoryPage(ctx, kind, id, q) }
			if err := eachInPages(q, step, read, func(v store.Version) int64 { return v.Version }, w.version); err != nil {
				return err
			}
			if err := w.ops(); err != nil {
				return err
			}
			readOps := func(q store.HistoryQuery) ([]store.Change, error) { return st.FindOpsPage(ctx, kind, id, q) }
			if err := eachInPages(rng, historyStreamHeads, readOps, func(c store.Change) int64 { return c.Version }, w.op); err != nil {
				return err
			}
			return w.end(more, f)
		},
	}
	cmd.Flags().BoolVar(&f.asJSON, "json", false, `print {"versions":[...],"operations":[...]} as JSON ("more_before": V when older ones are left out)`)
	cmd.Flags().IntVar(&f.limit, "limit", historyLimit, "at most this many versions and this many operation-log entries")
	cmd.Flags().Int64Var(&f.before, "before", 0, "only versions below this one (the next page: the oldest version printed)")
	cmd.Flags().Int64Var(&f.since, "since", 0, "only versions above this one")
	cmd.Flags().BoolVar(&f.all, "all", false, "every version and operation-log entry in the range, streamed")
	return cmd
}

// historyPage narrows rng to one page: the newest limit versions and the newest limit
// operation-log entries in it, cut at the same version so that the page is every write
// between its bounds and the next page (--before more) starts where it ends. more is 0
// when nothing older is left out. It reads no snapshot.
func historyPage(ctx context.Context, st store.Store, kind store.Kind, id int64, rng store.HistoryQuery, limit int) (page store.HistoryQuery, more int64, err error) {
	q := rng
	q.Limit = limit + 1 // one more tells whether something is left out
	vs, err := st.FindHistoryPage(ctx, kind, id, q)
	if err != nil {
		return rng, 0, err
	}
	ops, err := st.FindOpsPage(ctx, kind, id, q)
	if err != nil {
		return rng, 0, err
	}
	if rng.Before == 0 && (len(vs) > 0 || len(ops) > 0) {
		// Versions saved from now on belong to no page already printed.
		top := int64(0)
		if len(vs) > 0 {
			top = vs[0].Version
		}
		if len(ops) > 0 {
			top = max(top, ops[0].Version)
		}
		rng.Before = top + 1
	}
	if len(vs) > limit {
		more = vs[limit-1].Version
	}
	if len(ops) > limit {
		more = max(more, ops[limit-1].Version)
	}
	if more > 0 {
		rng.Since = more - 1
	}
	return rng, more, nil
}

// eachInPages calls fn for every entry q selects, newest first, reading step entries at a
// time (keyset by version): memory holds one page, whatever the history's length.
func eachInPages[T any](q store.HistoryQuery, step int, read func(store.HistoryQuery) ([]T, error), version func(T) int64, fn func(T) error) error {
	q.Limit = step
	for {
		page, err := read(q)
		if err != nil {
			return err
		}
		for _, e := range page {
			if err := fn(e); err != nil {
				return err
			}
		}
		if len(page) < step {
			return nil
		}
		q.Before = version(page[len(page)-1])
	}
}

// historyWriter prints a history as it streams: the versions, then the operation log.
type historyWriter interface {
	versions() error
	version(store.Version) error
	ops() error
	op(store.Change) error
	end(more int64, f historyFlags) error
}

// historyText prints the history as two tables.
type historyText struct {
	a     *app
	kind  store.Kind
	id    int64
	reg   *store.Registry
	n     int   // rows of the current table
	width int   // of the current table's version column, set by its first (newest) row
	more  int64 // the page's oldest version when older ones are left out, else 0
}

func (h *historyText) versions() error {
	_, err := fmt.Fprintf(h.a.stdout, "History versions of %s %d:\n", h.kind, h.id)
	return err
}

func (h *historyText) version(v store.Version) error {
	what := strings.Join(v.Fields, ", ")
	switch v.Event {
	case store.EventDeleted:
		what = fmt.Sprintf("deleted (tandem restore %s %d brings it back)", h.kind, h.id)
	case store.EventRestored:
		what = "restored"
	}
	_, err := fmt.Fprintf(h.a.stdout, "  %s %s  %-12s %s\n", h.ver(v.Version), v.At.Local().Format("2006-01-02 15:04:05"),
		safe.Line(v.Actor), safe.Line(what))
	return err
}

func (h *historyText) ops() error {
	if err := h.none(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(h.a.stdout, "Operation log of %s %d:\n", h.kind, h.id)
	return err
}

func (h *historyText) op(c store.Change) error {
	_, err := fmt.Fprintf(h.a.stdout, "  %s %s  %-12s %-8s %-8s %s\n", h.ver(c.Version), c.At.Local().Format("2006-01-02 15:04:05"),
		safe.Line(c.Actor), safe.Line(string(c.Role)), safe.Line(string(c.Event)), safe.Line(describeChange(c)))
	return err
}

func (h *historyText) end(more int64, f historyFlags) error {
	if err := h.none(); err != nil {
		return err
	}
	if more == 0 {
		return nil
	}
	next := fmt.Sprintf("tandem history %s %d --before %d", h.kind, h.id, more)
	if f.since > 0 {
		next += fmt.Sprintf(" --since %d", f.since)
	}
	if f.limit != historyLimit {
		next += fmt.Sprintf(" --limit %d", f.limit)
	}
	_, err := fmt.Fprintf(h.a.stdout, "Older versions: %s (--all for every one)\n", next)
	return err
}

// ver is the version column: "v" and the number, padded to the width of the table's newest
// version (the tables are newest first, so every later row fits).
func (h *historyText) ver(v int64) string {
	if h.n == 0 {
		h.width = max(4, len(strconv.FormatInt(v, 10)))
	}
	h.n++
	return fmt.Sprintf("v%-*d", h.width, v)
}

// none ends a table: "none" when it had no row; on a page that leaves older versions out,
// "none at vN or later", since the table may have rows on the next page.
func (h *historyText) none() error {
	n := h.n
	h.n = 0
	if n > 0 {
		return nil
	}
	if h.more > 0 {
		_, err := fmt.Fprintf(h.a.stdout, "  none at v%d or later (older ones: the command below)\n", h.more)
		return err
	}
	_, err := fmt.Fprintln(h.a.stdout, "  none")
	return err
}

// historyJSON prints the history as one JSON object, written a version at a time in
// writeJSON's layout.
type historyJSON struct {
	w    io.Writer
	kind store.Kind
	reg  *store.Registry
	n    int // entries of the current array
}

func (h *historyJSON) write(s string) error {
	_, err := h.w.Write(safe.JSON([]byte(s)))
	return err
}

// entry writes one element of the current array.
func (h *historyJSON) entry(v any) error {
	b, err := json.MarshalIndent(v, "    ", "  ")
	if err != nil {
		return fmt.Errorf("encode JSON: %w", err)
	}
	sep := ",\n    "
	if h.n == 0 {
		sep = "\n    "
	}
	h.n++
	return h.write(sep + string(b))
}

// close ends the current array.
func (h *historyJSON) close() string {
	n := h.n
	h.n = 0
	if n == 0 {
		return "]"
	}
	return "\n  ]"
}

func (h *historyJSON) versions() error { return h.write("{\n  \"versions\": [") }

func (h *historyJSON) version(v store.Version) error { return h.entry(exportVersion(h.reg, h.kind, v)) }

func (h *historyJSON) ops() error { return h.write(h.close() + ",\n  \"operations\": [") }

func (h *historyJSON) op(c store.Change) error { return h.entry(exportOp(c)) }

func (h *historyJSON) end(more int64, _ historyFlags) error {
	s := h.close()
	if more > 0 {
		s += fmt.Sprintf(",\n  \"more_before\": %d", more)
	}
	return h.write(s + "\n}\n")
}

// describeChange lists a change's fields, with the deltas of relative changes (stock -1).
func describeChange(c store.Change) string {
	parts := make([]string, 0, len(c.Fields))
	for _, f := range c.Fields {
		if d, ok := c.Deltas[f]; ok {
			parts = append(parts, fmt.Sprintf("%s %+d", f, d))
			continue
		}
		parts = append(parts, f)
	}
	return strings.Join(parts, ", ")
}

// exportVersion returns the JSON form of a history version.
func exportVersion(reg *store.Registry, kind store.Kind, v store.Version) jsonVersion {
	snap := make(map[string]any, len(v.Snapshot))
	for name, val := range v.Snapshot {
		if f, err := reg.Field(kind, name); err == nil {
			snap[name] = f.Export(val)
		}
	}
	return jsonVersion{Version: v.Version, Actor: v.Actor, At: formatTime(v.At), Fields: nonNil(v.Fields),
		Snapshot: snap, Event: v.Event}
}

// exportOp returns the JSON form of an operation-log entry.
func exportOp(c store.Change) jsonChange {
	return jsonChange{ID: c.ID, Event: c.Event, Version: c.Version, Actor: c.Actor, Role: c.Role,
		Fields: nonNil(c.Fields), Deltas: c.Deltas, At: formatTime(c.At)}
}

// nonNil returns a sorted copy of ss that encodes as [] rather than null when empty.
func nonNil(ss []string) []string {
	out := append([]string{}, ss...)
	sort.Strings(out)
	return out
}
