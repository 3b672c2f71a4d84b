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
	start time.Time
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
	return &progressBar{w: a.stderr, bar: progress.New(progress.WithDefaultBlend(), progress.WithWidth(40)), label: label, total: total,
		start: time.Now()}
}

// set shows done steps, with the rate so far and (when the total is known) the time left
// at that rate, at most ten times a second.
func (p *progressBar) set(done int) {
	if p == nil || time.Since(p.last) < 100*time.Millisecond {
		return
	}
	p.last = time.Now()
	fmt.Fprint(p.w, "\r"+p.line(done, p.last.Sub(p.start))+"\x1b[K")
}

// line is the bar's line after done steps in elapsed time.
func (p *progressBar) line(done int, elapsed time.Duration) string {
	rate := float64(done) / max(elapsed.Seconds(), 1e-3)
	if p.total <= 0 {
		return fmt.Sprintf("%s %d  %.0f/s", p.label, done, rate)
	}
	left := "--"
	if done > 0 {
		left = (time.Duration(float64(p.total-done) / rate * float64(time.Second))).Round(time.Second).String()
	}
	return fmt.Sprintf("%s %s %d/%d  %.0f/s  %s left", p.label, p.bar.ViewAs(float64(done)/float64(p.total)), done, p.total, rate, left)
}

// finish clears the bar's line.
func (p *progressBar) finish() {
	if p != nil {
		fmt.Fprint(p.w, "\r\x1b[2K")
	}
}
