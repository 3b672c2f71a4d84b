package tui

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/merge"
	"github.com/tandem-editor/tandem/store"
)

// Queries on a record merge and line diffs as the screens show them, shared by the conflict
// dialog, the merge view, the reload screen and the history.

// changedFields labels the fields whose side value differs from the base, in registry order
// (labels, as the form says them: "parent", not "parent_id").
func changedFields(rr *merge.RecordResult, side func(*merge.FieldMerge) any) []string {
	var out []string
	for _, fm := range rr.Fields {
		if !store.Equal(fm.Base, side(fm)) {
			out = append(out, fm.Field.Label)
		}
	}
	return out
}

func theirFields(rr *merge.RecordResult) []string {
	return changedFields(rr, func(fm *merge.FieldMerge) any { return fm.Theirs })
}

func mineFields(rr *merge.RecordResult) []string {
	return changedFields(rr, func(fm *merge.FieldMerge) any { return fm.Mine })
}

// conflictFields labels the fields both sides changed in ways their rule cannot combine.
func conflictFields(rr *merge.RecordResult) []string {
	var out []string
	for _, fm := range rr.Fields {
		if fm.State == merge.FieldConflict {
			out = append(out, fm.Field.Label)
		}
	}
	return out
}

func diffStyle(st Styles, d string) string {
	switch {
	case strings.HasPrefix(d, "+"):
		return st.Added.Render(d)
	case strings.HasPrefix(d, "-"):
		return st.Removed.Render(d)
	}
	return d
}

func bytesLines(ls [][]byte) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = safe.Line(strings.TrimRight(string(l), "\r\n"))
	}
	return out
}

func splitText(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = safe.Line(strings.TrimSuffix(l, "\r"))
	}
	return lines
}

// editLines renders a line diff as "-old", "+new" and " same" lines (unchanged lines are
// kept for context), made safe for the terminal.
func editLines(edits []merge.Edit) []string {
	var out []string
	for _, e := range edits {
		for _, l := range bytesLines(e.Lines) {
			out = append(out, e.Op.String()+l)
		}
	}
	if len(out) == 0 {
		out = append(out, " (empty on both)")
	}
	return out
}

// textDiff is merge's line diff between two texts, rendered by editLines.
func textDiff(old, new string) []string {
	return editLines(merge.DiffLines(splitLines(old), splitLines(new)))
}

// splitLines cuts s into lines that keep their terminators, as merge's diff expects.
func splitLines(s string) [][]byte {
	lines := bytes.SplitAfter([]byte(s), []byte("\n"))
	if n := len(lines); n > 0 && len(lines[n-1]) == 0 {
		lines = lines[:n-1]
	}
	return lines
}

// changeLines describes base→theirs field by field, text fields as a line diff.
func changeLines(reg *store.Registry, kind store.Kind, base, theirs store.Values) []string {
	var out []string
	for _, f := range reg.Fields(kind) {
		b, t := base[f.Name], theirs[f.Name]
		if store.Equal(b, t) {
			continue
		}
		if f.Type != store.TypeText {
			out = append(out, fmt.Sprintf("%-14s %s → %s", f.Label, safe.Line(f.Format(b)), safe.Line(f.Format(t))))
			continue
		}
		out = append(out, f.Label+":")
		for _, d := range textDiff(f.Format(b), f.Format(t)) {
			out = append(out, "  "+d)
		}
	}
	if len(out) == 0 {
		out = append(out, "no field differs from the version you loaded")
	}
	return out
}
