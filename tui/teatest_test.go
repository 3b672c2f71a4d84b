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

	"github.com/tandem-editor/tandem/store"
)

// teatestWait bounds how long a teatest run may take to show something: generous, because
// under -race on a shared two-core machine a frame can take seconds. It is a ceiling, never
// a measurement: the tests wait for what they need and continue as soon as it is there.
const teatestWait = 30 * time.Second

// waitForAll waits until the program's output since the last wait has shown every one of
// want, each as plain text within one frame's write.
func waitForAll(t *testing.T, tm *teatest.TestModel, want ...string) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		plain := []byte(ansi.Strip(string(b)))
		for _, w := range want {
			if !bytes.Contains(plain, []byte(w)) {
				return false
			}
		}
		return true
	}, teatest.WithDuration(teatestWait), teatest.WithCheckInterval(20*time.Millisecond))
}

// TestTeatest_OpenAndEdit runs the App in a real bubbletea program (teatest, 80x24, no
// colour) and checks the final model's screen against a golden file.
//
// It waits only for states that later keys depend on (the list loaded, the record loaded);
// typed text is not waited for on the output, because the renderer paints only changed
// cells and may split it across frames. The program handles keys in order, so the final
// model has all of them when ctrl+c ends it.
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
	waitForAll(t, tm, "Product 3")
	tm.Send(tea.KeyPressMsg{Code: 'j', Text: "j"})
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	// The editor's form (sku is product 2's first field) and its lock line.
	waitForAll(t, tm, "SKU-2", "saves check the version")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyTab})
	tm.Type(" (edited)")
	tm.Send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	final := tm.FinalModel(t, teatest.WithFinalTimeout(teatestWait)).(*App)
	mustGolden(t, "teatest_editor", ansi.Strip(final.Render()))
}

// TestTeatest_SortUndo runs the new keys in a real program: the list sorted by name
// descending (s, S), then in the editor a typed word taken back with ctrl+z and made again
// with ctrl+y. The final model's screen and form are checked.
func TestTeatest_SortUndo(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 3)
	// By name the zebra comes last, as by id; by name descending it comes first.
	if _, err := s.CreateRecord(actorCtx("seed"), store.KindProduct, store.Values{"sku": "SKU-4", "name": "Zebra lamp"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	app, err := New(ctx, s, Options{User: "alice", DraftDir: filepath.Join(t.TempDir(), "drafts"), Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	tm := teatest.NewTestModel(t, app, teatest.WithInitialTermSize(80, 24),
		teatest.WithProgramOptions(tea.WithEnvironment([]string{"TERM=xterm-256color"}), tea.WithColorProfile(colorprofile.Ascii)))
	waitForAll(t, tm, "Zebra lamp")
	tm.Send(tea.KeyPressMsg{Code: 's', Text: "s"})
	tm.Send(tea.KeyPressMsg{Code: 'o', Text: "o"})
	// Drawn again only when the descending page is in: the zebra moves to the first row.
	waitForAll(t, tm, "4 Zebra lamp")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	waitForAll(t, tm, "SKU-4", "saves check the version")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyTab})
	tm.Type(" deluxe")
	tm.Send(tea.KeyPressMsg{Code: 'z', Mod: tea.ModCtrl})
	tm.Send(tea.KeyPressMsg{Code: 'y', Mod: tea.ModCtrl})
	tm.Send(tea.KeyPressMsg{Code: 'z', Mod: tea.ModCtrl})
	tm.Send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	final := tm.FinalModel(t, teatest.WithFinalTimeout(teatestWait)).(*App)
	if final.editor == nil {
		t.Fatalf("no editor open at the end:\n%s", ansi.Strip(final.Render()))
	}
	if got := final.editor.fields[1].text(); got != "Zebra lamp " {
		t.Errorf("name = %q after typing \" deluxe\", undo, redo, undo; want %q", got, "Zebra lamp ")
	}
	if got := final.list.sortName(); got != "name ▼" {
		t.Errorf("list order %q, want name ▼", got)
	}
}
