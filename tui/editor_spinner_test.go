package tui

import (
	"strings"
	"testing"

	"charm.land/bubbles/v2/spinner"
)

// TestEditor_SpinnerWhileSaving: between ctrl+s and the store's answer the status line turns
// a spinner before "saving…"; its frames advance on its ticks; once the answer is in, the
// spinner is gone and asks for no further frame.
func TestEditor_SpinnerWhileSaving(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	d := newDriver(t, s, "alice")
	openProduct(t, d, 1, "enter")
	focusField(t, d, "name")
	d.typeText("!")
	frames := spinner.MiniDot.Frames
	_, save := d.app.Update(keyMsg("ctrl+s"))
	status := func() string {
		lines := strings.Split(d.screen(), "\n")
		return lines[len(lines)-2]
	}
	if got := status(); !strings.HasPrefix(got, frames[0]+" saving…") {
		t.Fatalf("status while saving = %q, want the spinner's first frame and saving…", got)
	}
	e := d.app.editor
	_, next := d.app.Update(e.spin.Tick())
	if next == nil || !strings.HasPrefix(status(), frames[1]+" saving…") {
		t.Fatalf("a tick did not turn the spinner: %q (next frame asked: %v)", status(), next != nil)
	}
	d.exec(save)
	d.waitFor("saved v2")
	if got := status(); strings.ContainsAny(got, strings.Join(frames, "")) {
		t.Fatalf("spinner still shown after the save: %q", got)
	}
	if _, next := d.app.Update(e.spin.Tick()); next != nil {
		t.Fatal("the spinner asks for frames after the save came back")
	}
}
