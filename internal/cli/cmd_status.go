package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tandem-editor/tandem/internal/safe"
	tsync "github.com/tandem-editor/tandem/sync"
)

func newStatusCmd(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show a working copy's source, pending changes and conflicts",
		Long: `Status describes the working copy named by --db: its source, how far it has read the
source's changes, the local changes not yet synced, the conflicts waiting for you and
when it last synced: the last sync that reached the source and ran its pull and push to
the end, whatever it left (conflicts, lease waits). It reads only the copy: no server is
needed.`,
		Example: `  tandem status --db catalogue.db
  tandem status --db catalogue.db --json`,
		Args: exactArgs(0, ""),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			wc, st, err := a.workingCopy(ctx)
			if err != nil {
				return err
			}
			cs, err := wc.Conflicts(ctx)
			if err != nil {
				return err
			}
			deletes, err := tsync.PendingDeletes(ctx, wc)
			if err != nil {
				return err
			}
			if deletes == nil {
				deletes = []tsync.Ref{}
			}
			// The source's records the copy is to read again (store.WorkingCopy.Stale): those
			// the last sync could not take, and those a local change gave back to the
			// source's values (a local delete restored, a delete conflict answered theirs),
			// which nothing holds. The copy shows them as they were, or not at all. Whether
			// something holds one, and what, only a sync can say, since it needs the source.
			stale, err := wc.Stale(ctx)
			if err != nil {
				return err
			}
			held := []tsync.Ref{}
			for _, kind := range wc.Registry().Kinds() {
				for _, id := range stale[kind] {
					held = append(held, tsync.Ref{Kind: kind, ID: id})
				}
			}
			unfit, err := tsync.Unfits(ctx, wc)
			if err != nil {
				return err
			}
			if unfit == nil {
				unfit = []tsync.Unfit{}
			}
			if asJSON {
				kinds := make([]string, len(st.Kinds))
				for i, k := range st.Kinds {
					kinds[i] = string(k)
				}
				synced := ""
				if !st.SyncedAt.IsZero() {
					synced = formatTime(st.SyncedAt)
				}
				return writeJSON(a.stdout, struct {
					Source    string         `json:"source"`
					SourceID  string         `json:"source_id"`
					Kinds     []string       `json:"kinds"`
					Subtree   int64          `json:"subtree,omitempty"`
					Position  int64          `json:"position"`
					Pending   int            `json:"pending"`
					Deletes   []tsync.Ref    `json:"pending_deletes"`
					Conflicts []jsonConflict `json:"conflicts"`
					ClonedAt  string         `json:"cloned_at"`
					SyncedAt  string         `json:"synced_at"`
					Held      []tsync.Ref    `json:"held_back"`
					Schema    int64          `json:"schema_version"`
					Unfit     []tsync.Unfit  `json:"unfit"`
				}{st.Source, st.SourceID, kinds, st.Subtree, st.Position, st.Pending, deletes,
					exportConflicts(wc.Registry(), cs), formatTime(st.ClonedAt), synced, held, wc.Registry().Version(), unfit})
			}
			now := time.Now()
			pending := fmt.Sprintf("%d pending", st.Pending)
			if st.Deletes > 0 {
				pending += fmt.Sprintf(" (%s)", plural(st.Deletes, "delete"))
			}
			fmt.Fprintf(a.stdout, "offline copy of %s · %s · %s · synced %s\n", safe.Line(st.Source), pending,
				plural(len(cs), "conflict"), ago(st.SyncedAt, now))
			fmt.Fprintf(a.stdout, "source store %s, read up to change %d; cloned %s\n", st.SourceID, st.Position, ago(st.ClonedAt, now))
			for _, d := range deletes {
				fmt.Fprintf(a.stdout, "pending delete: %s %d\n", d.Kind, d.ID)
			}
			for i := range cs {
				fmt.Fprintf(a.stdout, "conflict: %s\n", safe.Line(tsync.Describe(&cs[i])))
			}
			for _, h := range held {
				fmt.Fprintf(a.stdout, "held back: the source's %s %d is read again at the next sync, which takes it or says what still holds it\n", h.Kind, h.ID)
			}
			for _, u := range unfit {
				fmt.Fprintf(a.stdout, "no longer fits the schema (version %d): your %s of %s %d: %s\n", wc.Registry().Version(), u.Op, u.Kind, u.ID,
					safe.Line(strings.Join(u.Why, "; ")))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the state as JSON")
	return cmd
}
