package tui

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/postgres"
	"github.com/tandem-editor/tandem/store/postgres/pgtest"
	"github.com/tandem-editor/tandem/store/sqlite"
	tsync "github.com/tandem-editor/tandem/sync"
	"github.com/tandem-editor/tandem/sync/live"
)

// liveTUI is the TUI on a --local copy as tandem --local runs it: a PostgreSQL source, a
// SQLite copy of it kept in step by the background syncer, and the App on the copy.
type liveTUI struct {
	src store.Store
	d   *driver
	id  int64 // the product the remote saves change
}

func newLiveTUI(t testing.TB) *liveTUI {
	t.Helper()
	dsn := pgtest.DSN(t)
	src, err := postgres.Open(context.Background(), dsn, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	r, err := src.CreateRecord(asUser("seed"), store.KindProduct, store.Values{"sku": "LIVE-1", "name": "Remote 0", "price": int64(1000), "stock": int64(5)})
	if err != nil {
		t.Fatal(err)
	}
	wc, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "copy.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { wc.Close() })
	if _, err := tsync.Clone(context.Background(), src, wc, tsync.CloneOptions{Source: "live-test"}); err != nil {
		t.Fatal(err)
	}
	s := live.New(wc, live.Options{Open: func(ctx context.Context) (store.Store, error) {
		return postgres.Open(ctx, dsn, store.Options{})
	}})
	ctx, cancel := context.WithCancel(context.Background())
	go s.Run(ctx)
	t.Cleanup(func() { cancel(); <-s.Done() })
	d := newDriver(t, wc, "ann", func(o *Options) { o.Live = s })
	d.waitFor("online · synced")
	d.waitFor("Remote 0")
	return &liveTUI{src: src, d: d, id: r.ID}
}

func asUser(name string) context.Context {
	return store.WithActor(context.Background(), store.Actor{Name: name, Role: store.RoleEditor})
}

// remoteSave renames the product on the source to name and returns the time of its commit
// (when the save returned).
func (l *liveTUI) remoteSave(t testing.TB, name string) time.Time {
	t.Helper()
	cur, err := l.src.FindRecord(context.Background(), store.KindProduct, l.id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.src.UpdateRecord(asUser("bob"), store.KindProduct, l.id, store.Update{BaseVersion: cur.Version, Set: store.Values{"name": name}}); err != nil {
		t.Fatal(err)
	}
	return time.Now()
}

// onScreen applies the TUI's messages until its list shows name, and returns when it did.
func (l *liveTUI) onScreen(name string) time.Time {
	l.d.waitUntil(name, func() bool { return strings.Contains(l.d.screen(), name) })
	return time.Now()
}

// TestLive_RemoteSaveReachesScreen: while connected, bob's save on the source reaches the
// list of the TUI on the copy by itself: the syncer follows the source's feed into the copy,
// and the list follows the copy's. The wait is a generous ceiling, not a measurement; the
// time it took is logged (BenchmarkLive_RemoteToScreen measures it).
func TestLive_RemoteSaveReachesScreen(t *testing.T) {
	l := newLiveTUI(t)
	for i := 1; i <= 3; i++ {
		name := fmt.Sprintf("Remote %d", i)
		committed := l.remoteSave(t, name)
		t.Logf("%s on the screen %v after its commit", name, l.onScreen(name).Sub(committed).Round(time.Millisecond))
	}
}

// BenchmarkLive_RemoteToScreen: the time from a commit on the source to the TUI on the copy
// showing it in its list, p50 and p99.
func BenchmarkLive_RemoteToScreen(b *testing.B) {
	l := newLiveTUI(b)
	ds := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		name := fmt.Sprintf("Remote %d", i+1)
		committed := l.remoteSave(b, name)
		ds = append(ds, l.onScreen(name).Sub(committed))
	}
	b.StopTimer()
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(ds[len(ds)*99/100].Microseconds())/1000, "p99-ms")
}
