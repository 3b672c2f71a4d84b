package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/locks"
	"github.com/tandem-editor/tandem/store"
)

// jsonLease is the JSON form of a lease the holder sees: with its secret token.
type jsonLease struct {
	Kind       store.Kind `json:"kind"`
	ID         int64      `json:"id"`
	Group      string     `json:"group"`
	Holder     string     `json:"holder"`
	Token      string     `json:"token"`
	Fence      int64      `json:"fence"`
	AcquiredAt string     `json:"acquired_at"`
	ExpiresAt  string     `json:"expires_at"`
}

func exportLease(l store.Lease) jsonLease {
	return jsonLease{Kind: l.Kind, ID: l.RecordID, Group: l.Group, Holder: l.Holder, Token: l.Token,
		Fence: l.Fence, AcquiredAt: formatTime(l.AcquiredAt), ExpiresAt: formatTime(l.ExpiresAt)}
}

// printLease writes l as one line of JSON, so a script reading a --hold process's output
// line by line gets the token from the first line.
func (a *app) printLease(l store.Lease) error {
	if err := writeJSONLine(a.stdout, exportLease(l)); err != nil {
		return err
	}
	return a.flush()
}

func newLeaseCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "lease",
		Short: "Take, extend and release leases on records",
		Long: `A lease takes one field group of a record (editor by default) for its holder until it
expires: everybody else's saves to that group are refused (exit 4) while it is live, and
the holder's saves present its token (set/adjust --lease TOKEN). Expiry is decided by
the database clock. The token is printed once, by acquire; keep it secret.`,
		Example: `  tandem lease acquire product 42 --ttl 5m     # prints the lease, its "token" included
  tandem lease extend "$token" --ttl 5m
  tandem lease release "$token"`,
		Args: exactArgs(0, "a subcommand (acquire, extend, release, break)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return usagef("lease needs a subcommand: acquire, extend, release or break")
		},
	}
	cmd.AddCommand(newLeaseAcquireCmd(a), newLeaseExtendCmd(a), newLeaseReleaseCmd(a), newLeaseBreakCmd(a))
	return cmd
}

func newLeaseAcquireCmd(a *app) *cobra.Command {
	var (
		group string
		ttl   time.Duration
		hold  bool
	)
	cmd := &cobra.Command{
		Use:   "acquire KIND ID [--group G] [--ttl D] [--hold]",
		Short: "Take a lease on a record's field group and print it as JSON, token included",
		Long: `Acquire grants you a lease on one field group of a record for --ttl (default 2m) and
prints it as one line of JSON: {"kind","id","group","holder","token","fence",
"acquired_at","expires_at"}. A live lease of anyone else (or of you in another
terminal) is refused with exit 4, naming the holder; an expired one is taken over.

With --hold the lease is renewed at half its TTL until you press Ctrl-C (or the
process gets SIGTERM), then released. If it is lost meanwhile (renewal refused, or the
database unreachable until the lease expired), hold exits 4 saying why.`,
		Example: `  tandem lease acquire product 42
  tandem lease acquire product 42 --group system --ttl 30s
  tandem lease acquire document 7 --hold`,
		Args: exactArgs(2, "KIND ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			// The TTL before the store opens; the group with the store's schema, which
			// says the kind's groups. Both with the stores' own rule and words.
			if err := store.CheckLeaseTTL(ttl); err != nil {
				return usageErr(err)
			}
			ctx, kind, id, err := a.actorRecord(cmd, args)
			if err != nil {
				return err
			}
			req := store.LeaseRequest{Kind: kind, RecordID: id, Group: group, TTL: ttl}
			st, done, err := a.leaseStore(ctx)
			if err != nil {
				return err
			}
			defer done()
			if err := st.Registry().CheckLeaseRequest(req); err != nil {
				return usageErr(err)
			}
			if !hold {
				l, err := st.AcquireLease(ctx, req)
				if err != nil {
					return err
				}
				return a.printLease(*l)
			}
			return a.holdLease(ctx, st, req)
		},
	}
	f := cmd.Flags()
	f.StringVar(&group, "group", store.GroupEditor, "field group to lease (editor, system, or a group of the registry)")
	f.DurationVar(&ttl, "ttl", locks.DefaultTTL, "time to live (renewed at half of it with --hold)")
	f.BoolVar(&hold, "hold", false, "keep renewing the lease until interrupted, then release it")
	acceptJSON(cmd)
	return cmd
}

// holdLease takes the lease, prints it, and keeps it alive until ctx ends (SIGINT/SIGTERM):
// then it releases it and returns nil. A lost lease returns the loss (ELEASE, exit 4).
func (a *app) holdLease(ctx context.Context, st store.Store, req store.LeaseRequest) error {
	held, err := locks.Acquire(ctx, st, req, locks.Options{})
	if err != nil {
		return err
	}
	if err := a.printLease(held.Lease()); err != nil {
		_ = held.Release(context.WithoutCancel(ctx))
		return err
	}
	select {
	case err, ok := <-held.Lost():
		if ok {
			return fmt.Errorf("lease lost, stop writing: %w", err)
		}
	case <-ctx.Done():
	}
	// The heartbeat releases the lease itself when ctx ends; Release waits for that and
	// returns its result.
	if err := held.Release(context.WithoutCancel(ctx)); err != nil {
		return err
	}
	fmt.Fprintf(a.stderr, "released the lease on %s %d (%s)\n", req.Kind, req.RecordID, safe.Line(req.Group))
	return nil
}

func newLeaseExtendCmd(a *app) *cobra.Command {
	var ttl time.Duration
	cmd := &cobra.Command{
		Use:   "extend TOKEN [--ttl D]",
		Short: "Move a live lease's expiry to now + TTL",
		Long: `Extend renews the lease the token belongs to until now + --ttl (database clock) and
prints it as JSON. A lease that expired, was released or was taken over cannot be
extended (exit 4); an unknown token is exit 5.`,
		Example: `  tandem lease extend "$token"
  tandem lease extend "$token" --ttl 10m --json`,
		Args: exactArgs(1, "TOKEN"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := store.CheckLeaseTTL(ttl); err != nil {
				return usageErr(err)
			}
			ctx, err := a.actor(cmd.Context())
			if err != nil {
				return err
			}
			st, done, err := a.leaseStore(ctx)
			if err != nil {
				return err
			}
			defer done()
			l, err := st.ExtendLease(ctx, args[0], ttl)
			if err != nil {
				return err
			}
			l.Token = args[0]
			return a.printLease(*l)
		},
	}
	cmd.Flags().DurationVar(&ttl, "ttl", locks.DefaultTTL, "new time to live, from now")
	acceptJSON(cmd)
	return cmd
}

func newLeaseReleaseCmd(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "release TOKEN",
		Short: "End a lease",
		Long: `Release ends the lease the token belongs to, so others may take the record at once.
Releasing a lease that already ended is not an error, but release says so ("not
released: … had already ended: taken over by bob") instead of "released"; an unknown
token is exit 5.`,
		Example: `  tandem lease release "$token"
  tandem lease release "$token" --json`,
		Args: exactArgs(1, "TOKEN"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, err := a.actor(cmd.Context())
			if err != nil {
				return err
			}
			st, done, err := a.leaseStore(ctx)
			if err != nil {
				return err
			}
			defer done()
			rel, err := st.ReleaseLease(ctx, args[0])
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(a.stdout, struct {
					Released bool   `json:"released"`
					Ended    string `json:"ended,omitempty"`
				}{rel.Ended == "", rel.Ended})
			}
			if rel.Ended != "" {
				// Not an error (the lease is gone either way), but not "released" either: a
				// holder whose lease was taken over must learn it did not let go itself.
				l := rel.Lease
				fmt.Fprintf(a.stdout, "not released: the lease on %s %d (%s) had already ended: %s\n",
					l.Kind, l.RecordID, l.Group, safe.Line(rel.Ended))
				return nil
			}
			fmt.Fprintln(a.stdout, "released")
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"released": true} or {"released": false, "ended": "why"}`)
	return cmd
}

// acceptJSON gives a command whose output is JSON already a --json flag that changes
// nothing, so that every command that prints accepts --json.
func acceptJSON(cmd *cobra.Command) {
	cmd.Flags().Bool("json", false, "accepted for uniformity: the output is JSON already")
}

func newLeaseBreakCmd(a *app) *cobra.Command {
	var (
		group  string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "break KIND ID [--group G]",
		Short: "End someone else's live lease on a record's field group (an admin's act on a team server)",
		Long: `Break ends the live lease on one field group of a record (editor by default), whoever
holds it: the holder's token stops being valid at once, so their next save or renewal
learns the lease is gone. On a team server only an admin may (others: exit 6); no live
lease on that group is exit 5.`,
		Example: `  tandem lease break product 42
  tandem lease break document 7 --group editor --json   # over ssh: ssh -p 2222 HOST lease break …`,
		Args: exactArgs(2, "KIND ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, kind, id, err := a.actorRecord(cmd, args)
			if err != nil {
				return err
			}
			st, err := a.store(ctx)
			if err != nil {
				return err
			}
			lb, ok := st.(store.LeaseBreaker)
			if !ok {
				return usagef("this store cannot end another's lease")
			}
			rel, err := lb.BreakLease(ctx, kind, id, group)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(a.stdout, struct {
					Kind   store.Kind `json:"kind"`
					ID     int64      `json:"id"`
					Group  string     `json:"group"`
					Holder string     `json:"holder"`
				}{kind, id, group, rel.Lease.Holder})
			}
			fmt.Fprintf(a.stdout, "ended %s's lease on %s %d (%s)\n", safe.Line(rel.Lease.Holder), kind, id, safe.Line(group))
			return nil
		},
	}
	cmd.Flags().StringVar(&group, "group", store.GroupEditor, "the field group whose lease to end")
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"kind", "id", "group", "holder"} of the lease ended`)
	return cmd
}
