package tui

import (
	"fmt"
	"strings"
	"testing"

	"charm.land/bubbles/v2/table"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"

	"github.com/tandem-editor/tandem/tui/bodyedit"
)

// The figures behind keeping tandem's own body editor and product list (README, Layout):
// run with go test ./tui -run '^$' -bench 'Component' -benchtime 1s.

// BenchmarkComponent_Keystroke types one letter in the middle of a text of n lines and draws
// the 80x24 view, in bubbles' textarea and in tui/bodyedit.
func BenchmarkComponent_Keystroke(b *testing.B) {
	letter := tea.KeyPressMsg{Code: 'x', Text: "x"}
	for _, n := range []int{100, 10000, 20000} {
		text := bodyedit.SampleText(n)
		b.Run(fmt.Sprintf("textarea/lines=%d", n), func(b *testing.B) {
			ta := textarea.New()
			ta.MaxHeight = 0
			ta.CharLimit = 0
			ta.SetWidth(80)
			ta.SetHeight(22)
			ta.SetValue(text)
			ta.Focus()
			if got := ta.LineCount(); got < n {
				b.Skipf("textarea holds %d of %d lines", got, n)
			}
			for range n / 2 {
				ta.CursorUp()
			}
			for b.Loop() {
				ta, _ = ta.Update(letter)
				_ = ta.View()
			}
		})
		b.Run(fmt.Sprintf("bodyedit/lines=%d", n), func(b *testing.B) {
			m := bodyedit.New()
			m.SetValue(text)
			m.SetSize(80, 22)
			m.Focus()
			m.SetCursor(n/2, 0)
			for b.Loop() {
				m, _ = m.Update(letter)
				_ = m.View()
			}
		})
	}
}

// BenchmarkComponent_TableOpen fills bubbles' table with n products' rows and draws it: the
// table takes every row up front, where the list loads a page of 200 (BenchmarkList).
func BenchmarkComponent_TableOpen(b *testing.B) {
	for _, n := range []int{100, 100000} {
		fake := benchStore(b, n)
		b.Run(fmt.Sprintf("products=%d", n), func(b *testing.B) {
			for b.Loop() {
				rows := make([]table.Row, 0, n)
				for _, r := range fake.products {
					rows = append(rows, table.Row{itoa(r.ID), r.Title(), "v" + itoa(r.Version), r.UpdatedBy, "free"})
				}
				t := table.New(table.WithColumns([]table.Column{{Title: "id", Width: 6}, {Title: "name", Width: 40},
					{Title: "ver", Width: 4}, {Title: "writer", Width: 10}, {Title: "lock", Width: 10}}),
					table.WithRows(rows), table.WithHeight(20), table.WithWidth(80))
				if v := t.View(); !strings.Contains(v, "Product 1") {
					b.Fatal("table shows no product")
				}
			}
		})
	}
}
