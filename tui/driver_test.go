package tui

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/memory"
)

// updating reports whether -update was given (the flag is defined by teatest's golden
// package, which this package's tests import): golden files are then rewritten.
func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

func TestMain(m *testing.M) {
	time.Local = time.UTC // golden files show clock times
	os.Exit(m.Run())
}

// t0 is the fixed time of every test clock.
var t0 = time.Date(2026, 12, 1, 10, 5, 0, 0, time.UTC)

// driver runs an App the way a program would, but in the test goroutine: commands run in
// goroutines and their messages are applied one at a time by settle or waitFor.
type driver struct {
	t    *testing.T
	app  *App
	msgs chan tea.Msg
	quit bool
}

// newFakeStore returns a fake store on the fixed clock.
func newFakeStore(t *testing.T) *memory.DB {
	t.Helper()
	fake := memory.New(store.Options{Now: func() time.Time { return t0 }})
	fake.SetClock(func() time.Time { return t0 })
	t.Cleanup(func() { fake.Close() })
	return fake
}

// mustSeed creates n products named "Product i" and returns them.
func mustSeed(t *testing.T, s store.Store, n int) {
	t.Helper()
	ctx := store.WithActor(context.Background(), store.Actor{Name: "seed", Role: store.RoleEditor})
	for i := 1; i <= n; i++ {
		_, err := s.CreateRecord(ctx, store.KindProduct, store.Values{
			"sku": "SKU-" + itoa(int64(i)), "name": "Product " + itoa(int64(i)),
			"description": "A fine product.\nSecond line.\nThird line.\n",
			"price":       int64(1000 + i), "stock": int64(20),
		})
		if err != nil {
			t.Fatalf("seed product %d: %v", i, err)
		}
	}
}

// newDriver starts an App for user on s at 80x24.
func newDriver(t *testing.T, s store.Store, user string, mod ...func(*Options)) *driver {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	opts := Options{User: user, DraftDir: filepath.Join(t.TempDir(), "drafts"), Now: func() time.Time { return t0 }, Editor: "true"}
	for _, f := range mod {
		f(&opts)
	}
	app, err := New(ctx, s, opts)
	if err != nil {
		t.Fatal(err)
	}
	d := &driver{t: t, app: app, msgs: make(chan tea.Msg, 1024)}
	d.apply(tea.WindowSizeMsg{Width: 80, Height: 24})
	d.exec(app.Init())
	d.settle()
	return d
}

// exec runs cmd in the background; its message is applied later.
func (d *driver) exec(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	go func() {
		if msg := cmd(); msg != nil {
			d.msgs <- msg
		}
	}()
}

var cmdSliceType = reflect.TypeFor[[]tea.Cmd]()

// apply gives msg to the app, expanding batches and sequences.
func (d *driver) apply(msg tea.Msg) {
	switch m := msg.(type) {
	case tea.BatchMsg:
		for _, c := range m {
			d.exec(c)
		}
		return
	case tea.QuitMsg:
		d.quit = true
		return
	}
	if v := reflect.ValueOf(msg); v.IsValid() && v.Kind() == reflect.Slice && v.Type().ConvertibleTo(cmdSliceType) {
		// tea.Sequence: run the commands in order, each after the previous one's message.
		cmds := v.Convert(cmdSliceType).Interface().([]tea.Cmd)
		go func() {
			for _, c := range cmds {
				if c == nil {
					continue
				}
				if msg := c(); msg != nil {
					done := make(chan struct{})
					d.msgs <- seqStep{msg, done}
					<-done
				}
			}
		}()
		return
	}
	if s, ok := msg.(seqStep); ok {
		d.apply(s.msg)
		close(s.done)
		return
	}
	_, cmd := d.app.Update(msg)
	d.exec(cmd)
}

type seqStep struct {
	msg  tea.Msg
	done chan struct{}
}

// settle applies messages until none arrives for a moment.
func (d *driver) settle() {
	d.t.Helper()
	for {
		select {
		case msg := <-d.msgs:
			d.apply(msg)
		case <-time.After(40 * time.Millisecond):
			return
		}
	}
}

// waitFor applies messages until the screen contains want (or fails after 30s).
func (d *driver) waitFor(want string) {
	d.t.Helper()
	deadline := time.After(30 * time.Second) // a ceiling for slow -race runs, not a measurement
	for !strings.Contains(d.screen(), want) {
		select {
		case msg := <-d.msgs:
			d.apply(msg)
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			d.t.Fatalf("screen never showed %q; it shows:\n%s", want, d.screen())
		}
	}
}

// screen is the app's view without colour.
func (d *driver) screen() string { return ansi.Strip(d.app.Render()) }

// key presses one key, like "ctrl+s", "tab", "enter", "a" or "+".
func (d *driver) key(k string) {
	d.apply(keyMsg(k))
	d.settle()
}

// typeText types s character by character.
func (d *driver) typeText(s string) {
	for _, r := range s {
		d.apply(keyMsg(string(r)))
	}
	d.settle()
}

func keyMsg(k string) tea.KeyPressMsg {
	special := map[string]tea.Key{
		"enter": {Code: tea.KeyEnter}, "tab": {Code: tea.KeyTab}, "esc": {Code: tea.KeyEscape},
		"backspace": {Code: tea.KeyBackspace}, "up": {Code: tea.KeyUp}, "down": {Code: tea.KeyDown},
		"shift+tab": {Code: tea.KeyTab, Mod: tea.ModShift}, "space": {Code: tea.KeySpace, Text: " "},
		"f1": {Code: tea.KeyF1},
	}
	if s, ok := special[k]; ok {
		return tea.KeyPressMsg(s)
	}
	if rest, ok := strings.CutPrefix(k, "ctrl+"); ok {
		return tea.KeyPressMsg{Code: rune(rest[0]), Mod: tea.ModCtrl}
	}
	r := []rune(k)[0]
	return tea.KeyPressMsg{Code: r, Text: k}
}

// golden compares the screen with testdata/name.golden (rewritten with -update).
func (d *driver) golden(name string) {
	d.t.Helper()
	mustGolden(d.t, name, d.screen())
}

func mustGolden(t *testing.T, name, got string) {
	t.Helper()
	// Trailing spaces are invisible and editor-hostile in golden files.
	lines := strings.Split(got, "\n")
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
	}
	got = strings.Join(lines, "\n") + "\n"
	path := filepath.Join("testdata", name+".golden")
	if updating() {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./tui -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("screen differs from %s:\n--- got ---\n%s--- want ---\n%s", path, got, want)
	}
}
