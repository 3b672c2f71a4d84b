package tui

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"
)

// TestTeatest_OpenAndEdit runs the App in a real bubbletea program (teatest, 80x24, no
// colour) and checks the final model's screen against a golden file.
func TestTeatest_OpenAndEdit(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 3)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	app, err := New(ctx, s, Options{User: "alice", DraftDir: filepath.Join(t.TempDir(), "drafts"), Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	tm := teatest.NewTestModel(t, app, teatest.WithInitialTermSize(80, 24),
		teatest.WithProgramOptions(tea.WithEnvironment([]string{"TERM=xterm-256color"}), tea.WithColorProfile(colorprofile.Ascii)))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("Product 3")) },
		teatest.WithDuration(5*time.Second))
	tm.Send(tea.KeyPressMsg{Code: 'j', Text: "j"})
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("SKU-2")) },
		teatest.WithDuration(5*time.Second))
	tm.Send(tea.KeyPressMsg{Code: tea.KeyTab})
	tm.Type(" (edited)")
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("(edited)")) },
		teatest.WithDuration(5*time.Second))
	tm.Send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	final := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*App)
	mustGolden(t, "teatest_editor", ansi.Strip(final.Render()))
}
