package bench

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// WriteContention prints results as a table: one line per strategy.
func WriteContention(w io.Writer, results []Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "strategy\tworkers\trows\tops\tops/s\tvs raw\tp50\tp99\tretries\tconflicts\tfailed\tlost\t")
	for _, r := range results {
		ratio := "-"
		if r.Ratio > 0 {
			ratio = fmt.Sprintf("%.2fx", r.Ratio)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.0f\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t\n", r.Strategy, r.Workers, r.Rows,
			r.Expected, r.OpsPerSec, ratio, round(r.P50), round(r.P99), r.Retries, r.Conflicts, r.Failures, r.Lost)
	}
	return tw.Flush()
}

// round shortens a duration for a table cell.
func round(d time.Duration) string {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	}
	return d.Round(time.Microsecond).String()
}
