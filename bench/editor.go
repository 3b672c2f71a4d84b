package bench

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/tandem-editor/tandem/tui/bodyedit"
)

// EditorSizes are the document lengths tandem bench editor measures.
var EditorSizes = []int{100, 1_000, 20_000}

// EditorResult is the keystroke cost of the body editor at one document length.
type EditorResult struct {
	Lines     int           `json:"lines"`
	Keystroke time.Duration `json:"keystroke_ns"` // one key press plus one View at 80x24
	Ratio     float64       `json:"ratio_to_smallest"`
}

// Editor measures one keystroke (Update and View) in the body editor at each length, n
// keystrokes each, and gives each as a ratio to the first (shortest) document. The sizes are
// measured in turn twice and the better time kept, so a busy moment hurts no size alone.
func Editor(sizes []int, n int) []EditorResult {
	out := make([]EditorResult, len(sizes))
	for round := range 2 {
		for i, lines := range sizes {
			d := bodyedit.BenchKeystroke(lines, n)
			if round == 0 || d < out[i].Keystroke {
				out[i] = EditorResult{Lines: lines, Keystroke: d}
			}
		}
	}
	for i := range out {
		out[i].Ratio = float64(out[i].Keystroke) / float64(out[0].Keystroke)
	}
	return out
}

// WriteEditor prints editor results as a table.
func WriteEditor(w io.Writer, results []EditorResult) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "lines\tkeystroke + view\tratio to first\t")
	for _, r := range results {
		fmt.Fprintf(tw, "%d\t%s\t%.2f\t\n", r.Lines, round(r.Keystroke), r.Ratio)
	}
	return tw.Flush()
}
