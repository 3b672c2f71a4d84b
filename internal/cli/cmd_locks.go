package cli

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/store"
)

// recentLeases is how long ended leases stay in tandem locks.
const recentLeases = 10 * time.Minute

// jsonLockRow is one lease in tandem locks --json. It never carries the token.
type jsonLockRow struct {
	Kind        store.Kind `json:"kind"`
	ID          int64      `json:"id"`
	Group       string     `json:"group"`
	Holder      string     `json:"holder"`
	Fence       int64      `json:"fence"`
	AcquiredAt  string     `json:"acquired_at"`
	ExpiresAt   string     `json:"expires_at"`
	State       string     `json:"state"`        // live, expired or released
	AgeSeconds  float64    `json:"age_seconds"`  // since acquired, on the database clock
	LeftSeconds float64    `json:"left_seconds"` // until expiry; negative once expired
}

func newLocksCmd(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "locks [--json]",
		Short: "Show live leases and those that ended in the last 10 minutes",
		Long: `Locks lists every live lease, and the leases that expired or were released in the
last 10 minutes, with record, field group, holder, fencing number, age and time left
(or how long ago it expired), all judged by the database clock. Tokens are never shown.`,
		Example: `  tandem locks
  tandem locks --json`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			st, err := a.store(ctx)
			if err != nil {
				return err
			}
			ls, now, err := st.FindLeases(ctx, store.LeaseFilter{Expired: recentLeases})
			if err != nil {
				return err
			}
			sortLeases(ls)
			if asJSON {
				rows := make([]jsonLockRow, 0, len(ls))
				for _, l := range ls {
					rows = append(rows, jsonLockRow{Kind: l.Kind, ID: l.RecordID, Group: l.Group, Holder: l.Holder,
						Fence: l.Fence, AcquiredAt: formatTime(l.AcquiredAt), ExpiresAt: formatTime(l.ExpiresAt),
						State: leaseState(l, now), AgeSeconds: now.Sub(l.AcquiredAt).Seconds(),
						LeftSeconds: l.ExpiresAt.Sub(now).Seconds()})
				}
				return writeJSON(a.stdout, rows)
			}
			return printLocks(a.stdout, ls, now)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the leases as a JSON array")
	return cmd
}

// sortLeases orders leases by kind, id and group, the newest grant of a scope first.
func sortLeases(ls []store.Lease) {
	sort.SliceStable(ls, func(i, j int) bool {
		a, b := ls[i], ls[j]
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		if a.RecordID != b.RecordID {
			return a.RecordID < b.RecordID
		}
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		return a.Fence > b.Fence
	})
}

// leaseState is live, expired or released at now.
func leaseState(l store.Lease, now time.Time) string {
	switch {
	case l.Released:
		return "released"
	case l.Live(now):
		return "live"
	}
	return "expired"
}

// printLocks writes leases as a table for people.
func printLocks(w io.Writer, ls []store.Lease, now time.Time) error {
	if len(ls) == 0 {
		fmt.Fprintln(w, "no leases (none live, none ended in the last 10 minutes)")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KIND\tID\tGROUP\tHOLDER\tFENCE\tAGE\tSTATE")
	for _, l := range ls {
		var state string
		switch leaseState(l, now) {
		case "live":
			state = humanDuration(l.ExpiresAt.Sub(now)) + " left"
		case "expired":
			state = "expired " + humanDuration(now.Sub(l.ExpiresAt)) + " ago"
		default:
			state = "released"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%d\t%s\t%s\n", safe.Line(string(l.Kind)), l.RecordID, safe.Line(l.Group),
			cut(safe.Line(l.Holder), 40), l.Fence, humanDuration(now.Sub(l.AcquiredAt)), state)
	}
	return tw.Flush()
}

// humanDuration shows d to the second for people: "45s", "2m5s", "1h3m". Negative durations
// (clock skew between the database and this machine) show as 0s.
func humanDuration(d time.Duration) string {
	if d < time.Second {
		return "0s"
	}
	d = d.Round(time.Second)
	h, m, s := int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60
	var b strings.Builder
	if h > 0 {
		b.WriteString(strconv.Itoa(h) + "h")
		b.WriteString(strconv.Itoa(m) + "m")
		return b.String()
	}
	if m > 0 {
		b.WriteString(strconv.Itoa(m) + "m")
	}
	if s > 0 || m == 0 {
		b.WriteString(strconv.Itoa(s) + "s")
	}
	return b.String()
}
