package tui

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
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
	// No key map file of the machine's user reaches the tests.
	cfg, err := os.MkdirTemp("", "tandem-tui-config")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CONFIG_HOME", cfg)
	code := m.Run()
	os.RemoveAll(cfg)
	os.Exit(code)
}

// t0 is the fixed time of every test clock.
var t0 = time.Date(2026, 12, 1, 10, 5, 0, 0, time.UTC)

// driver runs an App the way a program would, but in the test goroutine: commands run in
// goroutines and their messages are applied one at a time by settle or waitFor.
//
// settle synchronises on events, never on a quiet period: it knows which commands are still
// running and returns once every one of them has delivered its message and that message was
// applied (and so on for the commands those messages start). Commands that wait for
// something outside the test (the one-second tick, the change feed, a lease's loss signal)
// are background work that settle does not wait for; their messages are applied whenever
// they come, by a later settle or waitFor.
type driver struct {
	t    testing.TB
	app  *App
	msgs chan tea.Msg
	quit bool

	mu      sync.Mutex
	running map[int]string // work commands in flight, by serial number: their function names
	serial  int
	done    chan struct{} // a work command finished
}

// backgroundCmds are the function names of commands that wait on the outside world; see
// driver. A new waiting command must be added here, or settle reports it after its ceiling.
// The names may carry the caller's name when the compiler inlines (tui.(*App).Update.waitChange.func3).
var backgroundCmds = []string{".Tick.func", ".Every.func", ".waitChange.func", ".waitLost.func"}

func cmdName(cmd tea.Cmd) string {
	return runtime.FuncForPC(reflect.ValueOf(cmd).Pointer()).Name()
}

func isBackground(cmd tea.Cmd) bool {
	name := cmdName(cmd)
	for _, p := range backgroundCmds {
		if strings.Contains(name, p) {
			return true
		}
	}
	return false
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
func newDriver(t testing.TB, s store.Store, user string, mod ...func(*Options)) *driver {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	opts := Options{User: user, StoreID: "test-store", DraftDir: filepath.Join(t.TempDir(), "drafts"), Now: func() time.Time { return t0 }, Editor: "true"}
	for _, f := range mod {
		f(&opts)
	}
	app, err := New(ctx, s, opts)
	if err != nil {
		t.Fatal(err)
	}
	d := &driver{t: t, app: app, msgs: make(chan tea.Msg, 1024), running: map[int]string{}, done: make(chan struct{}, 1)}
	d.apply(tea.WindowSizeMsg{Width: 80, Height: 24})
	d.exec(app.Init())
	d.settle()
	return d
}

// start counts a work command in; the func it returns counts it out.
func (d *driver) start(name string) func() {
	d.mu.Lock()
	d.serial++
	n := d.serial
	d.running[n] = name
	d.mu.Unlock()
	return func() {
		d.mu.Lock()
		delete(d.running, n)
		d.mu.Unlock()
		select {
		case d.done <- struct{}{}:
		default:
		}
	}
}

// inFlight returns the names of the work commands still running.
func (d *driver) inFlight() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]string, 0, len(d.running))
	for _, n := range d.running {
		out = append(out, n)
	}
	return out
}

// exec runs cmd in the background; its message is applied later.
func (d *driver) exec(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	finish := func() {}
	if !isBackground(cmd) {
		finish = d.start(cmdName(cmd))
	}
	go func() {
		defer finish()
		if msg := cmd(); msg != nil {
			// Queued before the command counts as finished, so settle never misses it.
			d.msgs <- msg
		}
	}()
}

var cmdSliceType = reflect.TypeFor[[]tea.Cmd]()

// sequence returns the commands of a tea.Sequence message (an unexported slice type).
func sequence(msg tea.Msg) ([]tea.Cmd, bool) {
	v := reflect.ValueOf(msg)
	if !v.IsValid() || v.Kind() != reflect.Slice || !v.Type().ConvertibleTo(cmdSliceType) {
		return nil, false
	}
	if _, batch := msg.(tea.BatchMsg); batch {
		return nil, false
	}
	return v.Convert(cmdSliceType).Interface().([]tea.Cmd), true
}

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
	case seqStep:
		d.apply(m.msg)
		close(m.done)
		return
	}
	if cmds, ok := sequence(msg); ok {
		finish := d.start("tea.Sequence")
		go func() {
			defer finish()
			d.runSequence(cmds)
		}()
		return
	}
	_, cmd := d.app.Update(msg)
	d.exec(cmd)
}

// runSequence runs cmds in order as bubbletea does: each command's message is applied before
// the next command runs; a batch inside runs all its commands and waits for them, a sequence
// inside runs in place.
func (d *driver) runSequence(cmds []tea.Cmd) {
	for _, c := range cmds {
		if c != nil {
			d.runStep(c())
		}
	}
}

func (d *driver) runStep(msg tea.Msg) {
	if msg == nil {
		return
	}
	if b, ok := msg.(tea.BatchMsg); ok {
		var wg sync.WaitGroup
		for _, c := range b {
			if c == nil {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				d.runStep(c())
			}()
		}
		wg.Wait()
		return
	}
	if cmds, ok := sequence(msg); ok {
		d.runSequence(cmds)
		return
	}
	done := make(chan struct{})
	d.msgs <- seqStep{msg, done}
	<-done
}

type seqStep struct {
	msg  tea.Msg
	done chan struct{}
}

// settleCeiling bounds how long settle waits for work commands: a ceiling for slow -race
// runs on a loaded machine, never a measurement.
const settleCeiling = 30 * time.Second

// settle applies messages until every work command started so far (and every one the
// applied messages started in turn) has finished and its message was applied.
func (d *driver) settle() {
	d.t.Helper()
	deadline := time.After(settleCeiling)
	for {
		select {
		case msg := <-d.msgs:
			d.apply(msg)
			continue
		default:
		}
		if len(d.inFlight()) == 0 {
			// Every finished command queued its message before counting out.
			select {
			case msg := <-d.msgs:
				d.apply(msg)
				continue
			default:
				return
			}
		}
		select {
		case msg := <-d.msgs:
			d.apply(msg)
		case <-d.done:
		case <-deadline:
			d.t.Fatalf("commands still running after %v: %v", settleCeiling, d.inFlight())
		}
	}
}

// waitFor applies messages until the screen contains want (or fails after 30s).
func (d *driver) waitFor(want string) {
	d.t.Helper()
	d.waitUntil(want, func() bool { return strings.Contains(d.screen(), want) })
}

// waitUntil applies messages as they come until ok holds (or fails after 30s): for states
// that arrive from outside the test's commands, such as the change feed or a tick.
func (d *driver) waitUntil(what string, ok func() bool) {
	d.t.Helper()
	deadline := time.After(30 * time.Second) // a ceiling for slow -race runs, not a measurement
	for !ok() {
		select {
		case msg := <-d.msgs:
			d.apply(msg)
		case <-d.done:
		case <-deadline:
			d.t.Fatalf("screen never showed %q; it shows:\n%s", what, d.screen())
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
		"f1": {Code: tea.KeyF1}, "pgup": {Code: tea.KeyPgUp}, "pgdown": {Code: tea.KeyPgDown},
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

func mustGolden(t testing.TB, name, got string) {
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
