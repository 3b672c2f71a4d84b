package tui

import (
	"strings"
	"testing"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/lipgloss/v2"
)

// TestFitMemo_AsFitScreen: the memo cuts lines as fitScreen does, at each width it is asked
// for in turn, however many lines it has seen.
func TestFitMemo_AsFitScreen(t *testing.T) {
	var m fitMemo
	body := strings.Join([]string{"short", strings.Repeat("wide ", 30), lipgloss.NewStyle().Bold(true).Render(strings.Repeat("é", 50)), "", "status", "footer"}, "\n")
	for round := range 3 {
		for _, w := range []int{80, 20, 120, 20} {
			for _, h := range []int{24, 3} {
				if got, want := m.fit(body, w, h), fitScreen(body, w, h); got != want {
					t.Fatalf("round %d, %dx%d: got\n%q\nwant\n%q", round, w, h, got, want)
				}
			}
		}
		for i := range maxMemo + 1 { // past the bound: the memo starts afresh
			m.fit(itoa(int64(i)), 80, 24)
		}
	}
}

// TestFooterMemo_FollowsBindings: the footer drawn again follows the bindings' help, which
// of them are enabled, and the width.
func TestFooterMemo_FollowsBindings(t *testing.T) {
	c := &common{help: help.New(), width: 80}
	save := key.NewBinding(key.WithKeys("ctrl+s"), key.WithHelp("ctrl+s", "save"))
	quit := key.NewBinding(key.WithKeys("q"), key.WithHelp("q", "quit"))
	check := func(bs ...key.Binding) {
		t.Helper()
		want := c.help
		want.SetWidth(c.width)
		if got, want := c.footer(bs), want.ShortHelpView(bs); got != want {
			t.Fatalf("width %d: footer %q, want %q", c.width, got, want)
		}
	}
	check(save, quit)
	quit.SetEnabled(false)
	check(save, quit)
	quit.SetEnabled(true)
	quit.SetHelp("q", "leave")
	check(save, quit)
	c.width = 12
	check(save, quit)
}
