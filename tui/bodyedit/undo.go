package bodyedit

import (
	"slices"
	"strings"
)

// Undo and redo. Every edit is recorded as an op: at a position, the text it removed and the
// text it inserted (either may hold line breaks). Undoing an op removes what it inserted and
// puts back what it removed, so the cost is the size of the edit, never of the document: a
// 20,000-line body keeps no copies of itself. Ops that continue each other (letters typed in
// a row, backspaces in a row) form one step, as in other editors; a word ends a step.

// maxUndo bounds the steps kept; the oldest go first. maxStepOps bounds the ops one step
// joins (a "word" typed without end starts a new step), so memory stays bounded.
const (
	maxUndo    = 1000
	maxStepOps = 256
)

// op is one recorded edit: at line, col (a byte offset), del was replaced by ins.
type op struct {
	line, col int
	del, ins  string
}

// step is what one ctrl+z takes back: ops in the order they were made.
type step []op

// record notes an edit for undo and forgets what could be redone. A typed letter that
// continues the previous one, or a deletion that continues the previous deletion, joins its
// step unless the cursor moved in between.
func (m *Model) record(o op) {
	m.redo = nil
	if n := len(m.undo); n > 0 && m.joinable && len(m.undo[n-1]) < maxStepOps && continues(m.undo[n-1][len(m.undo[n-1])-1], o) {
		m.undo[n-1] = append(m.undo[n-1], o)
	} else {
		m.undo = append(m.undo, step{o})
		if len(m.undo) > maxUndo {
			m.undo = slices.Delete(m.undo, 0, len(m.undo)-maxUndo)
		}
	}
	m.joinable = true
}

// continues reports whether o extends prev as one step: typing on (a word's letters and the
// space after it, not across a line break), or deleting on from where prev ended.
func continues(prev, o op) bool {
	switch {
	case prev.del == "" && o.del == "":
		return o.line == prev.line && o.col == prev.col+len(prev.ins) && !strings.Contains(o.ins, "\n") &&
			!strings.ContainsAny(prev.ins, "\n") && !strings.HasSuffix(prev.ins, " ") && !strings.HasSuffix(prev.ins, "\t")
	case prev.ins == "" && o.ins == "":
		return !strings.Contains(o.del, "\n") && !strings.Contains(prev.del, "\n") && o.line == prev.line &&
			(o.col+len(o.del) == prev.col || o.col == prev.col)
	}
	return false
}

// CanUndo reports whether there is an edit to take back.
func (m Model) CanUndo() bool { return len(m.undo) > 0 }

// CanRedo reports whether there is an undone edit to make again.
func (m Model) CanRedo() bool { return len(m.redo) > 0 }

// Undo takes back the last step of edits and reports whether there was one.
func (m *Model) Undo() bool {
	if len(m.undo) == 0 {
		return false
	}
	s := m.undo[len(m.undo)-1]
	m.undo = m.undo[:len(m.undo)-1]
	for i := len(s) - 1; i >= 0; i-- {
		m.splice(s[i].line, s[i].col, s[i].ins, s[i].del)
	}
	m.redo = append(m.redo, s)
	m.joinable = false
	m.scrollToCursor()
	return true
}

// Redo makes the last undone step again and reports whether there was one.
func (m *Model) Redo() bool {
	if len(m.redo) == 0 {
		return false
	}
	s := m.redo[len(m.redo)-1]
	m.redo = m.redo[:len(m.redo)-1]
	for _, o := range s {
		m.splice(o.line, o.col, o.del, o.ins)
	}
	m.undo = append(m.undo, s)
	m.joinable = false
	m.scrollToCursor()
	return true
}

// splice replaces del, which starts at line, col, by ins and puts the cursor after ins.
func (m *Model) splice(line, col int, del, ins string) {
	endLine, endCol := line, col+len(del)
	if k := strings.Count(del, "\n"); k > 0 {
		endLine = line + k
		endCol = len(del) - strings.LastIndexByte(del, '\n') - 1
	}
	joined := m.lines[line][:col] + ins + m.lines[endLine][endCol:]
	parts := strings.Split(joined, "\n")
	m.lines = slices.Replace(m.lines, line, endLine+1, parts...)
	m.line = line + strings.Count(ins, "\n")
	m.col = col + len(ins)
	if i := strings.LastIndexByte(ins, '\n'); i >= 0 {
		m.col = len(ins) - i - 1
	}
	m.edited(line)
}

// Replace puts s in place of the whole text as one edit that Undo takes back (text from an
// external editor, a revert), cursor at the start. When s's line endings differ from the
// text's (CRLF against LF), it is SetValue: the history starts again with the new endings.
func (m *Model) Replace(s string) {
	lines, crlf := splitText(s)
	if crlf != m.crlf {
		m.SetValue(s)
		return
	}
	o := op{line: 0, col: 0, del: strings.Join(m.lines, "\n"), ins: strings.Join(lines, "\n")}
	if o.del == o.ins {
		return
	}
	m.joinable = false
	m.record(o)
	m.joinable = false
	m.splice(0, 0, o.del, o.ins)
	m.line, m.col, m.goalX = 0, 0, -1
	m.topLine, m.topOff = 0, 0
	m.scrollToCursor()
}
