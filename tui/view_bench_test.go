package tui

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
)

// BenchmarkView_ServeList is one frame of a team server's session at the list (bench
// serve's terminal: 120x80, 50 products): the View after a message that changes nothing
// (a tick, a feed change whose refresh is on its way), which every session draws for
// every save anyone makes.
func BenchmarkView_ServeList(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fake := benchStore(b, 50)
	opts := Options{User: "alice", DraftDir: filepath.Join(b.TempDir(), "drafts"), Now: func() time.Time { return t0 }, Editor: "true"}
	app := openAppList(b, ctx, fake, opts)
	_, cmd := app.Update(tea.WindowSizeMsg{Width: 120, Height: 80})
	runSync(b, app, cmd)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		app.Update(tickMsg(t0))
		_ = app.View()
	}
}
