package cli

import (
	"fmt"
	"sort"
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

func newHistoryCmd(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "history KIND ID",
		Short: "Show a record's history versions and its operation log",
		Long: `History prints, newest first, the history versions of a record (every editor save:
who, when, which fields, with every field of the version in --json) and, separately,
its operation log: the writes that add no history version, such as the workers' system
writes and relative adjusts made inside a no-history scope. History stores only what
each save changed, with a full snapshot now and then; every version is rebuilt
exactly (tandem get KIND ID --version N shows one).`,
		Example: `  tandem history product 42
  tandem history document 3 --json`,
		Args: exactArgs(2, "KIND ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			kind, id, err := parseRecordRef(args[0], args[1])
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
			vs, err := st.FindHistory(ctx, kind, id)
			if err != nil {
				return err
			}
			if findErr != nil && (len(vs) == 0 || vs[0].Event != store.EventDeleted) {
				return findErr
			}
			ops, err := st.FindOps(ctx, kind, id)
			if err != nil {
				return err
			}
			reg := st.Registry()
			if asJSON {
				return writeJSON(a.stdout, exportHistory(reg, kind, vs, ops))
			}
			fmt.Fprintf(a.stdout, "History versions of %s %d (%d):\n", kind, id, len(vs))
			if len(vs) == 0 {
				fmt.Fprintln(a.stdout, "  none")
			}
			for _, v := range vs {
				what := strings.Join(v.Fields, ", ")
				switch v.Event {
				case store.EventDeleted:
					what = fmt.Sprintf("deleted (tandem restore %s %d brings it back)", kind, id)
				case store.EventRestored:
					what = "restored"
				}
				fmt.Fprintf(a.stdout, "  v%-4d %s  %-12s %s\n", v.Version, v.At.Local().Format("2006-01-02 15:04:05"),
					safe.Line(v.Actor), safe.Line(what))
			}
			fmt.Fprintf(a.stdout, "Operation log of %s %d (%d):\n", kind, id, len(ops))
			if len(ops) == 0 {
				fmt.Fprintln(a.stdout, "  none")
			}
			for _, c := range ops {
				fmt.Fprintf(a.stdout, "  v%-4d %s  %-12s %-8s %-8s %s\n", c.Version, c.At.Local().Format("2006-01-02 15:04:05"),
					safe.Line(c.Actor), safe.Line(string(c.Role)), safe.Line(string(c.Event)), safe.Line(describeChange(c)))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"versions":[...],"operations":[...]} as JSON`)
	return cmd
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

// exportHistory returns the JSON form of a record's history and operation log.
func exportHistory(reg *store.Registry, kind store.Kind, vs []store.Version, ops []store.Change) any {
	out := struct {
		Versions   []jsonVersion `json:"versions"`
		Operations []jsonChange  `json:"operations"`
	}{Versions: []jsonVersion{}, Operations: []jsonChange{}}
	for _, v := range vs {
		snap := make(map[string]any, len(v.Snapshot))
		for name, val := range v.Snapshot {
			if f, err := reg.Field(kind, name); err == nil {
				snap[name] = f.Export(val)
			}
		}
		out.Versions = append(out.Versions, jsonVersion{
			Version: v.Version, Actor: v.Actor, At: formatTime(v.At), Fields: nonNil(v.Fields), Snapshot: snap,
			Event: v.Event,
		})
	}
	for _, c := range ops {
		out.Operations = append(out.Operations, jsonChange{
			ID: c.ID, Event: c.Event, Version: c.Version, Actor: c.Actor, Role: c.Role,
			Fields: nonNil(c.Fields), Deltas: c.Deltas, At: formatTime(c.At),
		})
	}
	return out
}

// nonNil returns a sorted copy of ss that encodes as [] rather than null when empty.
func nonNil(ss []string) []string {
	out := append([]string{}, ss...)
	sort.Strings(out)
	return out
}
