package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/store"
)

func newSetCmd(a *app) *cobra.Command {
	var (
		asJSON  bool
		expect  int64
		key     string
		leaseTk string
	)
	cmd := &cobra.Command{
		Use:   "set KIND ID field=value... --expect-version N",
		Short: "Change fields of a record, if nobody changed it since version N",
		Long: `Set writes the given fields only, and only if the record is still at the version
given with --expect-version (required): the version you read with "tandem get". If
someone saved in between, nothing is written and set exits 3, naming who changed the
record, to which version, and which fields. Values are written as for create; a text
field given as field=@path is read from the file at path.

--key makes the save idempotent: running the same set with the same key again
changes nothing and reports the first result; the same key with another request is
refused (exit 2). --lease presents your lease token when the record is leased
(without it a record leased by someone else is refused with exit 4).`,
		Example: `  tandem set product 42 price=31.50 --expect-version 3
  tandem set product 42 name="Desk lamp, brass" categories=lamps,office --expect-version 4 --json
  tandem set document 7 body=@handbook.md --expect-version 2`,
		Args: minArgs(3, "KIND ID and at least one field=value"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkExpectVersion(cmd, expect, args); err != nil {
				return err
			}
			w, err := a.writeTarget(cmd, args[0], args[1])
			if err != nil {
				return err
			}
			ctx, kind, id, reg := w.ctx, w.kind, w.id, w.reg
			vals, err := parseAssignments(reg, kind, args[2:], a.served == nil)
			if err != nil {
				return err
			}
			u := store.Update{BaseVersion: expect, Set: vals, IdempotencyKey: key, LeaseToken: leaseTk}
			return a.save(ctx, reg, kind, id, u, asJSON)
		},
	}
	f := cmd.Flags()
	f.Int64Var(&expect, "expect-version", 0, "the version the change was made from (required)")
	f.StringVar(&key, "key", "", "idempotency key: the same key applies the change at most once")
	f.StringVar(&leaseTk, "lease", "", "lease token, when you hold a lease on the record")
	f.BoolVar(&asJSON, "json", false, "print the saved record as JSON")
	return cmd
}

// roleOf returns the role of ctx's actor (editor when none is set).
func roleOf(ctx context.Context) store.Role {
	if act, err := store.ActorFrom(ctx); err == nil {
		return act.Role
	}
	return store.RoleEditor
}

// save checks u against the registry before the store is even opened (bad input must not
// create a database file), sends it, and reports the result.
func (a *app) save(ctx context.Context, reg *store.Registry, kind store.Kind, id int64, u store.Update, asJSON bool) error {
	if err := reg.CheckUpdate(kind, roleOf(ctx), u); err != nil {
		return err
	}
	st, err := a.store(ctx)
	if err != nil {
		return err
	}
	u.LeaseToken = a.localLease(kind, id, u.LeaseToken)
	res, err := st.UpdateRecord(ctx, kind, id, u)
	if err != nil {
		return err
	}
	return a.printSaved(res, u, asJSON)
}

// jsonReplay is what the JSON of a keyed write adds when its key was already applied: who
// applied it and when (keys are shared by everyone writing to the store).
type jsonReplay struct {
	Replayed  bool   `json:"replayed,omitempty"`
	AppliedBy string `json:"applied_by,omitempty"`
	AppliedAt string `json:"applied_at,omitempty"`
}

// replayJSON returns the jsonReplay of a write: empty unless replayed.
func replayJSON(replayed bool, by string, at time.Time) jsonReplay {
	if !replayed {
		return jsonReplay{}
	}
	r := jsonReplay{Replayed: true, AppliedBy: by}
	if !at.IsZero() {
		r.AppliedAt = formatTime(at)
	}
	return r
}

// appliedBy is how the text of a keyed write whose key was already applied begins: who
// applied the key and when, for the key may be someone else's ("already applied by alice
// at 2026-12-01 10:02 (key "k1")").
func appliedBy(key, by string, at time.Time) string {
	s := "already applied"
	if by != "" {
		s += " by " + safe.Line(by)
	}
	if !at.IsZero() {
		s += " at " + at.Local().Format("2006-01-02 15:04")
	}
	return s + fmt.Sprintf(" (key %q)", key) // %q escapes what a terminal would obey
}

// printSaved reports a save: the record as JSON, or one line saying what happened.
func (a *app) printSaved(res *store.UpdateResult, u store.Update, asJSON bool) error {
	r := res.Record
	if asJSON {
		out := struct {
			jsonRecord
			jsonReplay
		}{exportRecord(a.st.Registry(), r), replayJSON(res.Replayed, res.AppliedBy, res.AppliedAt)}
		return writeJSON(a.stdout, out)
	}
	if res.Replayed {
		what := fmt.Sprintf("saved as version %d", res.Version)
		if res.Unchanged {
			what = fmt.Sprintf("no change at version %d", res.Version)
		}
		fmt.Fprintf(a.stdout, "%s: %s %d was %s; it is at version %d now\n",
			appliedBy(u.IdempotencyKey, res.AppliedBy, res.AppliedAt), r.Kind, r.ID, what, r.Version)
		return nil
	}
	if res.Unchanged && u.Relative() {
		fmt.Fprintf(a.stdout, "no change: adding 0 to %s changes nothing; %s %d is still version %d\n",
			strings.Join(u.FieldNames(), ", "), r.Kind, r.ID, r.Version)
		return nil
	}
	if res.Unchanged {
		fmt.Fprintf(a.stdout, "no change: %s %d already holds that (%s), still version %d\n",
			r.Kind, r.ID, strings.Join(u.FieldNames(), ", "), r.Version)
		return nil
	}
	fmt.Fprintf(a.stdout, "saved %s %d: version %d (%s)\n", r.Kind, r.ID, r.Version, strings.Join(u.FieldNames(), ", "))
	return nil
}
