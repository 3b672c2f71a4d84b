package tui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	"github.com/charmbracelet/x/ansi"

	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/store"
)

// The editor's view: the header, the lock line, the live banner, the form (scrolled on a
// short screen), the status line and the footer.

// View draws the editor, or the dialog or merge view over it.
func (e *editorModel) View() string {
	switch e.mode {
	case modeDialog:
		return e.shown.View()
	case modeMove:
		return e.moveView()
	case modeRefPick:
		return e.refPickView()
	}
	c, st := e.c, e.c.styles
	var b strings.Builder
	what := fmt.Sprintf("new %s", e.kind)
	if e.id != 0 {
		what = fmt.Sprintf("%s %d", e.kind, e.id)
		if e.rec != nil {
			what += fmt.Sprintf(" · v%d", e.rec.Version)
		}
	}
	mode := "optimistic"
	switch {
	case e.wantLease:
		mode = "lease"
	case e.leaseOnEdit:
		mode = "lease on edit"
	}
	if c.writeDenied(e.kind, e.path) != "" {
		mode = "read only"
	}
	b.WriteString(st.Title.Render("tandem") + " " + st.Header.Render(what) + "  " + st.Dim.Render(safe.Line(c.user)+" · "+mode))
	b.WriteByte('\n')
	b.WriteString(c.clip(e.lockLine() + e.presenceLine()))
	b.WriteByte('\n')
	if bn := e.banner(); bn != "" {
		b.WriteString(st.Warn.Render(c.clip("● " + bn)))
	}
	b.WriteByte('\n')

	status := []string{""}
	switch e.mode {
	case modeConfirmLeave, modeOfferDraft:
	default:
		status = c.statusLines(e.status, e.statusText())
	}
	// A status that wraps takes its extra lines from the form.
	for _, l := range e.formLines(max(c.height-5-(len(status)-1), 1)) {
		b.WriteString(l + "\n")
	}
	yes, no := c.keys.Yes.Keys()[0], c.keys.No.Keys()[0] // the questions' keys as bound
	switch e.mode {
	case modeConfirmLeave:
		b.WriteString(st.Warn.Render(c.clip("Discard your unsaved changes?  " + yes + " discard · " + no + " keep editing")))
	case modeOfferDraft:
		offer := fmt.Sprintf("Unsaved edits from %s (on v%d) were found.  %s restore · %s discard",
			e.offered.Saved.Local().Format("15:04:05"), e.offered.BaseVersion, yes, no)
		if e.offered.legacy {
			// Made before drafts noted their store: it may belong to another one.
			offer = fmt.Sprintf("Old draft from %s (v%d), store unknown: check it.  %s restore · %s discard",
				e.offered.Saved.Local().Format("15:04:05"), e.offered.BaseVersion, yes, no)
		}
		b.WriteString(st.Warn.Render(c.clip(offer)))
	default:
		b.WriteString(strings.Join(status, "\n"))
	}
	b.WriteByte('\n')
	keys := e.editorKeys()
	if e.readOnly != "" {
		keys = []key.Binding{c.keys.NextField, c.keys.Back, c.keys.Help}
	}
	b.WriteString(c.footer(keys))
	return b.String()
}

// formLines draws the fields in exactly room lines. When they do not fit (a short terminal)
// it shows the part around the focused field, marking what is above and below, so the
// status line and the footer always keep their place.
func (e *editorModel) formLines(room int) []string {
	c, st := e.c, e.c.styles
	var lines []string
	if e.mode == modeLoading {
		lines = append(lines, st.Dim.Render("  loading…"))
	}
	focusFrom, focusTo := 0, 0
	valW := max(c.width-labelWidth-3, 10)
	for i, fi := range e.fields {
		focused := i == e.focus && e.mode == modeEdit
		if i == e.focus {
			focusFrom = len(lines)
		}
		label := padRight(ansi.Truncate(fi.f.Label, labelWidth, "…"), labelWidth)
		marker := "  "
		if focused {
			marker = st.Focused.Render("▸ ")
			label = st.Focused.Render(label)
		} else {
			label = st.Label.Render(label)
		}
		var val string
		switch {
		case focused && e.viewing(fi):
			why := "read-only"
			if fi.readOnly == readOnlyControl {
				why = "read-only: control characters, shown escaped"
			}
			lines = append(lines, marker+label+" "+st.Dim.Render(fmt.Sprintf("%s · %d lines · ↑/↓ pgup/pgdn scroll", why, fi.body.LineCount())))
			lines = append(lines, strings.Split(indent(fi.body.View(), labelWidth+3), "\n")...)
			focusTo = len(lines)
			continue
		case fi.readOnly != "" || e.readOnly != "":
			shown := fi.shownText()
			hint := ""
			if fi.readOnly == readOnlyControl {
				hint = controlHint // says why tab passes over it
			}
			val = st.Dim.Render(ansi.Truncate(highlight(firstLine(shown), c.search), max(valW-ansi.StringWidth(hint), 10), "…"))
			if fi.body != nil && fi.body.LineCount() > 1 {
				n := fi.body.LineCount() - 1
				val += st.Dim.Render(fmt.Sprintf("  (+%d lines)", n) + c.marks.matchLine(shown, c.search))
			}
			val += st.Warn.Render(hint)
		case fi.body != nil && focused:
			// Where the cursor is in a text longer than the screen, and how long it is.
			ln, col := fi.body.Position()
			lines = append(lines, marker+label+" "+st.Dim.Render(fmt.Sprintf("line %d, col %d · %s", ln, col,
				plural(fi.body.LineCount(), "line", "lines"))))
			lines = append(lines, strings.Split(indent(fi.body.View(), labelWidth+3), "\n")...)
			focusTo = len(lines)
			continue
		case fi.body != nil:
			val = ansi.Truncate(highlight(oneLine(fi.text()), c.search), valW-12, "…")
			if n := fi.body.LineCount() - 1; n > 0 {
				val += st.Dim.Render(fmt.Sprintf("  (+%d lines)", n) + c.marks.matchLine(fi.text(), c.search))
			}
		case focused:
			val = fi.line.View() + st.Dim.Render(e.refHint(fi))
			if hint := fi.offSchemaHint(); hint != "" {
				val += st.Warn.Render(ansi.Truncate(hint, max(valW-ansi.StringWidth(val), 0), "…"))
			}
		default:
			val = ansi.Truncate(highlight(safe.Line(fi.text()), c.search)+st.Dim.Render(e.refHint(fi))+st.Warn.Render(fi.offSchemaHint()), valW, "…")
		}
		if fi.delta != 0 {
			val += "  " + st.Warn.Render(fmt.Sprintf("%s %+d", fi.f.Label, fi.delta))
		}
		lines = append(lines, marker+label+" "+val)
		if i == e.focus {
			focusTo = len(lines)
		}
	}
	if len(lines) <= room {
		for len(lines) < room {
			lines = append(lines, "")
		}
		return lines
	}
	// A window of room lines holding the focused field, with a line of context above it
	// when there is room; the first and last lines say what is cut off.
	top := max(min(focusFrom-2, len(lines)-room), 0)
	if focusTo > top+room-1 {
		top = min(focusTo-room+1, len(lines)-room)
	}
	win := slices.Clone(lines[top : top+room])
	if top > 0 && room > 2 {
		win[0] = st.Dim.Render(fmt.Sprintf("  ↑ %d more", top+1))
	}
	if below := len(lines) - (top + room); below > 0 && room > 2 {
		win[room-1] = st.Dim.Render(fmt.Sprintf("  ↓ %d more", below+1))
	}
	return win
}

// editorKeys are the footer's keys: +/- only where the record has a counter the person may
// change, described by its label ("stock ±1").
func (e *editorModel) editorKeys() []key.Binding {
	var counters []string
	for _, fi := range e.fields {
		if fi.f.Rule == store.RuleCounter && fi.readOnly == "" {
			counters = append(counters, fi.f.Label)
		}
	}
	keys := e.c.keys.EditorKeys()
	out := keys[:0:0]
	for _, k := range keys {
		if k.Help().Key == e.c.keys.MoveDoc.Help().Key {
			if ref := e.pickableRef(); ref != nil {
				// Right after save: on a reference field the picker is what matters.
				k.SetHelp(k.Help().Key, "pick "+ref.f.Label)
				out = slices.Insert(out, min(1, len(out)), k)
				continue
			}
			if !e.c.reg.Tree(e.kind) || e.id == 0 {
				continue
			}
			k.SetHelp(k.Help().Key, moveHelp)
		}
		if k.Help().Key == e.c.keys.Inc.Help().Key {
			if len(counters) == 0 {
				continue
			}
			k.SetHelp(k.Help().Key, strings.Join(counters, "/")+" ±1")
		}
		out = append(out, k)
	}
	return out
}

// oneLine is the first line of a text for a one-line cell: without its line ending, tabs
// as spaces, everything else made safe.
func oneLine(s string) string {
	return safe.Text(strings.TrimSuffix(firstLine(s), "\r"))
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func indent(s string, n int) string {
	pad := strings.Repeat(" ", n)
	lines := strings.Split(s, "\n")
	for i := range lines {
		lines[i] = pad + lines[i]
	}
	return strings.Join(lines, "\n")
}

// itoa is strconv.FormatInt for ids and versions.
func itoa(n int64) string { return strconv.FormatInt(n, 10) }
