package tui

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/store"
)

// Field names as people read them: labels instead of column names.

// deltaText says relative changes the way the form labels them: "stock -3".
func deltaText(reg *store.Registry, kind store.Kind, d map[string]int64) string {
	names := make([]string, 0, len(d))
	for n := range d {
		names = append(names, n)
	}
	slices.Sort(names)
	parts := make([]string, 0, len(names))
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("%s %+d", fieldLabel(reg, kind, n), d[n]))
	}
	return strings.Join(parts, ", ")
}

// fieldLabel is the label the form shows for a field name ("parent" for parent_id), so
// messages never name internal fields; an unknown name is shown as it is, made safe.
func fieldLabel(reg *store.Registry, kind store.Kind, name string) string {
	if f, err := reg.Field(kind, name); err == nil {
		return f.Label
	}
	return safe.Line(name)
}

// fieldLabels maps names to labels.
func fieldLabels(reg *store.Registry, kind store.Kind, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = fieldLabel(reg, kind, n)
	}
	return out
}
