package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/store"
)

// jsonFeedChange is one line of tandem watch --json. ID is the change-log cursor (what
// --from takes); RecordID is the record's id.
type jsonFeedChange struct {
	ID       int64            `json:"id"`
	Event    store.Event      `json:"event"`
	Kind     store.Kind       `json:"kind"`
	RecordID int64            `json:"record_id"`
	Version  int64            `json:"version,omitempty"`
	Actor    string           `json:"actor"`
	Role     store.Role       `json:"role,omitempty"`
	Fields   []string         `json:"fields,omitempty"`
	Deltas   map[string]int64 `json:"deltas,omitempty"`
	History  bool             `json:"history,omitempty"`
	Group    string           `json:"group,omitempty"`
	Fence    int64            `json:"fence,omitempty"`
	At       string           `json:"at"`
}

func newWatchCmd(a *app) *cobra.Command {
	var (
		asJSON bool
		from   int64
	)
	cmd := &cobra.Command{
		Use:   "watch [--json] [--from ID]",
		Short: "Print the live change feed until interrupted",
		Long: `Watch prints every change as it is committed, one line each, until Ctrl-C: record
saves ("v8 product 42 saved by bob (price, stock)"), creations and moves, and lease
events ("product 42 editor lease granted to alice (fence 3)"). It starts at the current
end of the change log; --from ID starts at change ID instead (the "id" of --json
lines), so a watcher that stopped can pick up where it left off; an ID past the end
of the log (beyond the last change plus one) is refused. --json prints one JSON
object per line.`,
		Example: `  tandem watch
  tandem watch --json --from 1200`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("from") && from < 1 {
				return usagef("--from %d is not a change id (ids start at 1)", from)
			}
			ctx := cmd.Context()
			st, err := a.store(ctx)
			if err != nil {
				return err
			}
			last, err := st.LastChangeID(ctx)
			if err != nil {
				return err
			}
			after := last
			if cmd.Flags().Changed("from") {
				// Past the end, watch would wait silently for changes that may never come
				// (a cursor of another store, a typo); the change after the last is fine:
				// a watcher that saw the last change resumes there.
				if from > last+1 {
					return usagef("--from %d is past the end of the change log: the last change is %d (--from %d waits for the next)", from, last, last+1)
				}
				after = from - 1
			}
			ch, err := st.Subscribe(ctx, after)
			if err != nil {
				return err
			}
			for c := range ch {
				if asJSON {
					err = writeJSONLine(a.stdout, exportChange(c))
				} else {
					_, err = fmt.Fprintln(a.stdout, feedLine(c))
				}
				if err == nil {
					err = a.flush() // a reader waits for each change
				}
				if err != nil {
					return fmt.Errorf("watch: write: %w", err) // the reader went away
				}
			}
			if ctx.Err() == nil {
				// The feed says no why: a store that lost its connection (a team server
				// that ended the session, and said why) says it on the next call.
				if _, err := st.LastChangeID(ctx); err != nil {
					return store.Errorf(store.EUNAVAILABLE, "watch: the change feed ended unexpectedly: %v", err)
				}
				return store.Errorf(store.EUNAVAILABLE, "watch: the change feed ended unexpectedly")
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object per change")
	cmd.Flags().Int64Var(&from, "from", 0, "start at this change id instead of the current end")
	return cmd
}

func exportChange(c store.Change) jsonFeedChange {
	return jsonFeedChange{ID: c.ID, Event: c.Event, Kind: c.Kind, RecordID: c.RecordID, Version: c.Version,
		Actor: c.Actor, Role: c.Role, Fields: c.Fields, Deltas: c.Deltas, History: c.History,
		Group: c.Group, Fence: c.Fence, At: formatTime(c.At)}
}

// feedLine is one line for people; every string from the database goes through safe.
func feedLine(c store.Change) string {
	who := safe.Line(c.Actor)
	rec := fmt.Sprintf("%s %d", safe.Line(string(c.Kind)), c.RecordID)
	at := c.At.Local().Format("15:04:05")
	var s string
	switch c.Event {
	case store.EventSaved, store.EventCreated, store.EventMoved:
		s = fmt.Sprintf("v%d %s %s by %s", c.Version, rec, safe.Line(string(c.Event)), who)
		if len(c.Fields) > 0 {
			s += " (" + feedFields(c) + ")"
		}
	case store.EventDeleted, store.EventRestored:
		s = fmt.Sprintf("v%d %s %s by %s", c.Version, rec, safe.Line(string(c.Event)), who)
	case store.EventPulled:
		s = fmt.Sprintf("v%d %s pulled from the source (saved there by %s)", c.Version, rec, who)
	case store.EventLeaseGranted:
		s = fmt.Sprintf("%s %s lease granted to %s (fence %d)", rec, safe.Line(c.Group), who, c.Fence)
	case store.EventLeaseRenewed:
		s = fmt.Sprintf("%s %s lease renewed by %s (fence %d)", rec, safe.Line(c.Group), who, c.Fence)
	case store.EventLeaseReleased:
		s = fmt.Sprintf("%s %s lease released by %s (fence %d)", rec, safe.Line(c.Group), who, c.Fence)
	case store.EventLeaseExpired:
		s = fmt.Sprintf("%s %s lease of %s expired (fence %d)", rec, safe.Line(c.Group), who, c.Fence)
	default:
		s = fmt.Sprintf("%s %s by %s", rec, safe.Line(string(c.Event)), who)
	}
	return at + " " + s
}

// feedFields lists the written fields, relative changes with their delta: "price, stock -3".
func feedFields(c store.Change) string {
	parts := make([]string, 0, len(c.Fields))
	for _, f := range c.Fields {
		if d, ok := c.Deltas[f]; ok {
			parts = append(parts, fmt.Sprintf("%s %+d", safe.Line(f), d))
			continue
		}
		parts = append(parts, safe.Line(f))
	}
	return strings.Join(parts, ", ")
}
