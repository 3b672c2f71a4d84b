package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/store"
	tsync "github.com/tandem-editor/tandem/sync"
)

// jsonTombstone is the JSON form of one deleted record.
type jsonTombstone struct {
	Kind    store.Kind `json:"kind"`
	ID      int64      `json:"id"`
	Version int64      `json:"version"`
	Title   string     `json:"title,omitempty"`
}

func newDeleteCmd(a *app) *cobra.Command {
	var (
		asJSON  bool
		expect  int64
		key     string
		leaseTk string
		subtree bool
	)
	cmd := &cobra.Command{
		Use:   "delete KIND ID --expect-version N",
		Short: "Delete a record, if nobody changed it since version N (tandem restore brings it back)",
		Long: `Delete removes a record, but only while it is still at the version given with
--expect-version (required), like set: if someone saved in between, nothing is deleted
and delete exits 3. History keeps a tombstone (every field as it was), which
"tandem history" shows and "tandem restore" brings back. A document with child
documents is refused unless --subtree deletes it with everything below it.

Deleting is an editor's act: --as system is refused (exit 6). A lease on any part of
the record blocks the delete unless --lease presents its token (exit 4). --key makes
the delete idempotent: the same delete with the same key again reports the first
result.

On a working copy the delete is done in the copy and waits in its outbox: the next
tandem sync deletes the record on the source, if the source has not changed it since
the copy last synced it (else a conflict: tandem resolve KIND ID mine|theirs). Until
then tandem restore cancels it.`,
		Example: `  tandem delete product 42 --expect-version 3
  tandem delete document 7 --expect-version 2 --subtree`,
		Args: exactArgs(2, "KIND ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkExpectVersion(cmd, expect, args); err != nil {
				return err
			}
			w, err := a.writeTarget(cmd, args[0], args[1])
			if err != nil {
				return err
			}
			ctx, kind, id, reg := w.ctx, w.kind, w.id, w.reg
			actor, err := store.ActorFrom(ctx)
			if err != nil {
				return err
			}
			d := store.Delete{ExpectVersion: expect, LeaseToken: leaseTk, Subtree: subtree, IdempotencyKey: key}
			if _, err := a.store(ctx); err != nil {
				return err
			}
			d.LeaseToken = a.localLease(kind, id, d.LeaseToken)
			if err := reg.CheckDelete(kind, actor, d); err != nil {
				return err
			}
			st, err := a.store(ctx)
			if err != nil {
				return err
			}
			res, err := st.DeleteRecord(ctx, kind, id, d)
			if err != nil {
				return err
			}
			if asJSON {
				out := struct {
					Deleted []jsonTombstone `json:"deleted"`
					jsonReplay
				}{Deleted: []jsonTombstone{}, jsonReplay: replayJSON(res.Replayed, res.AppliedBy, res.AppliedAt)}
				for _, t := range res.Deleted {
					out.Deleted = append(out.Deleted, jsonTombstone(t))
				}
				return writeJSON(a.stdout, out)
			}
			first := res.Deleted[0]
			if res.Replayed {
				fmt.Fprintf(a.stdout, "%s: %s %d was deleted as version %d\n",
					appliedBy(key, res.AppliedBy, res.AppliedAt), first.Kind, first.ID, first.Version)
				return nil
			}
			if len(res.Deleted) > 1 {
				fmt.Fprintf(a.stdout, "deleted %s %d %q and %d below it (tombstone version %d; tandem restore %s %d --subtree brings them all back)\n",
					first.Kind, first.ID, safe.Line(first.Title), len(res.Deleted)-1, first.Version, first.Kind, first.ID)
			} else {
				fmt.Fprintf(a.stdout, "deleted %s %d %q (tombstone version %d; tandem restore %s %d brings it back)\n",
					first.Kind, first.ID, safe.Line(first.Title), first.Version, first.Kind, first.ID)
			}
			for _, t := range res.Deleted[1:] {
				fmt.Fprintf(a.stdout, "  and %s %d \"%s\" below it\n", t.Kind, t.ID, safe.Line(t.Title))
			}
			if wc, ok := st.(store.WorkingCopy); ok {
				if _, err := wc.CopyState(ctx); err == nil {
					return a.copyDeleteNote(ctx, wc, res.Deleted)
				}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.Int64Var(&expect, "expect-version", 0, "the version the delete was decided on (required)")
	f.BoolVar(&subtree, "subtree", false, "delete a document with every document below it")
	f.StringVar(&key, "key", "", "idempotency key: the same key deletes at most once")
	f.StringVar(&leaseTk, "lease", "", "lease token, when you hold a lease on the record")
	f.BoolVar(&asJSON, "json", false, `print {"deleted":[{kind,id,version,title}...]} as JSON`)
	return cmd
}

// copyDeleteNote says what a delete in a working copy does on the source: a record the
// source has is deleted there at the next sync; one created in the copy and never synced
// simply leaves the copy, and the source never sees it.
func (a *app) copyDeleteNote(ctx context.Context, wc store.WorkingCopy, deleted []store.Tombstone) error {
	pending, err := tsync.PendingDeletes(ctx, wc)
	if err != nil {
		return fmt.Errorf("read the copy's pending deletes: %w", err)
	}
	queued := map[tsync.Ref]bool{}
	for _, r := range pending {
		queued[r] = true
	}
	var local []string
	for _, t := range deleted {
		if !queued[tsync.Ref{Kind: t.Kind, ID: t.ID}] {
			local = append(local, fmt.Sprintf("%s %d", t.Kind, t.ID))
		}
	}
	switch {
	case len(local) == 0 && len(deleted) > 1:
		fmt.Fprintln(a.stdout, "in this working copy only: tandem sync deletes them on the source")
	case len(local) == 0:
		fmt.Fprintln(a.stdout, "in this working copy only: tandem sync deletes it on the source")
	case len(local) == len(deleted):
		fmt.Fprintln(a.stdout, "created in this working copy and never synced: it is gone from the copy, and the source never sees it")
	default:
		verb := "never reach it"
		if len(local) == 1 {
			verb = "never reaches it"
		}
		fmt.Fprintf(a.stdout, "in this working copy only: tandem sync deletes on the source what it has; %s, created here and never synced, %s\n",
			strings.Join(local, ", "), verb)
	}
	return nil
}
