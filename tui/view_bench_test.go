package tui

import (
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/tandem-editor/tandem/store"
)

// serveListApp opens the TUI at the list as bench serve's terminal has it (120x80, 50
// products) on a fake store, for the benchmarks below.
func serveListApp(b *testing.B) (*App, *keysetStore) {
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	fake := benchStore(b, 50)
	opts := Options{User: "alice", DraftDir: filepath.Join(b.TempDir(), "drafts"), Now: func() time.Time { return t0 }, Editor: "true"}
	app := openAppList(b, ctx, fake, opts)
	_, cmd := app.Update(tea.WindowSizeMsg{Width: 120, Height: 80})
	runSync(b, app, cmd)
	return app, fake
}

// BenchmarkView_ServeList is one frame of a team server's session at the list (bench
// serve's terminal: 120x80, 50 products): the View after a message that changes nothing
// (a tick, a feed change whose refresh is on its way), which every session draws for
// every save anyone makes.
func BenchmarkView_ServeList(b *testing.B) {
	app, _ := serveListApp(b)
	b.ReportAllocs()
	defer cpuPerOp(b)()
	for b.Loop() {
		app.Update(tickMsg(t0))
		_ = app.View()
	}
}

// BenchmarkView_ServeSave is what one save by someone else costs a team server's session
// at the list (120x80, 50 products): the feed's change, its View, the refresh of the row
// and its View. A server pays it once per session for every save.
func BenchmarkView_ServeSave(b *testing.B) {
	app, fake := serveListApp(b)
	b.ReportAllocs()
	report := cpuPerOp(b)
	n := int64(0)
	for b.Loop() {
		n++
		i := n % 50
		r := fake.products[i].Clone()
		r.Version++
		r.Fields["name"] = "Saved " + itoa(n)
		fake.products[i] = r
		_, cmd := app.Update(changeMsg{c: store.Change{ID: n, Event: store.EventSaved, Kind: store.KindProduct, RecordID: r.ID, Version: r.Version}})
		_ = app.View()
		runSync(b, app, cmd)
		_ = app.View()
	}
	report()
	if !strings.Contains(ansi.Strip(app.Render()), "Saved "+itoa(n)) {
		b.Fatalf("the last save is not on screen:\n%s", ansi.Strip(app.Render()))
	}
}

// cpuPerOp starts counting the process's CPU time (user and system, every thread: the
// garbage collector's too); the function it returns reports it per op. On a shared machine
// the wall time per op counts the neighbours' work as well.
func cpuPerOp(b *testing.B) func() {
	cpu := func() time.Duration {
		var ru syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	start := cpu()
	return func() {
		b.ReportMetric(float64(cpu()-start)/float64(b.N)/1e3, "cpu-µs/op")
	}
}
