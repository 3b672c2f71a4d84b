package cli

import (
	"fmt"
	"io"
	"os"
	"time"

	"charm.land/bubbles/v2/progress"
	"github.com/charmbracelet/x/term"
)

// progressBar draws a bubbles progress bar on stderr for a long import or export. It is nil
// (and every method a no-op) unless stderr is a terminal: piped, a command prints nothing
// but its report.
type progressBar struct {
	w     io.Writer
	bar   progress.Model
	label string
	total int
	last  time.Time
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}

// newProgress returns a bar for total steps (0: unknown, the count alone is shown), or nil
// when stderr is not a terminal.
func (a *app) newProgress(label string, total int) *progressBar {
	if !isTerminal(a.stderr) {
		return nil
	}
	return &progressBar{w: a.stderr, bar: progress.New(progress.WithDefaultBlend(), progress.WithWidth(40)), label: label, total: total}
}

// set shows done steps, at most ten times a second.
func (p *progressBar) set(done int) {
	if p == nil || time.Since(p.last) < 100*time.Millisecond {
		return
	}
	p.last = time.Now()
	if p.total > 0 {
		fmt.Fprintf(p.w, "\r%s %s %d/%d", p.label, p.bar.ViewAs(float64(done)/float64(p.total)), done, p.total)
		return
	}
	fmt.Fprintf(p.w, "\r%s %d", p.label, done)
}

// finish clears the bar's line.
func (p *progressBar) finish() {
	if p != nil {
		fmt.Fprint(p.w, "\r\x1b[2K")
	}
}
