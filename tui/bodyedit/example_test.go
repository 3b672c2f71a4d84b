package bodyedit_test

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/tandem-editor/tandem/tui/bodyedit"
)

// A screen embeds the editor as a value, routes messages to it while it has focus, and saves
// Value() when Changed() says there is something to save.
func Example() {
	m := bodyedit.New()
	m.SetValue("Fresh bread every morning.\r\nAsk for rye.\r\n")
	m.SetSize(16, 4)
	m.Focus()
	m.KeyMap.InsertTab.SetEnabled(false) // the screen uses tab to move between fields

	m, _ = m.Update(tea.KeyPressMsg{Code: tea.KeyEnd, Mod: tea.ModCtrl})
	m, _ = m.Update(tea.PasteMsg{Content: "Closed on Mondays."})

	line, col := m.Position()
	fmt.Printf("changed=%v lines=%d cursor=%d:%d\n", m.Changed(), m.LineCount(), line+1, col+1)
	fmt.Printf("%q\n", m.Value())
	m.Blur()
	for _, row := range strings.Split(m.View(), "\n") {
		fmt.Printf("|%s|\n", row)
	}
	// Output:
	// changed=true lines=3 cursor=3:19
	// "Fresh bread every morning.\r\nAsk for rye.\r\nClosed on Mondays."
	// |every morning.  |
	// |Ask for rye.    |
	// |Closed on       |
	// |Mondays.        |
}
