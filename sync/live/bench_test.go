package live_test

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/internal/netproxy"
	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/postgres"
	"github.com/tandem-editor/tandem/store/postgres/pgtest"
	"github.com/tandem-editor/tandem/store/sqlite"
	tsync "github.com/tandem-editor/tandem/sync"
	"github.com/tandem-editor/tandem/sync/live"
)

// liveSetup is a PostgreSQL source behind a proxy, a SQLite copy of it and its syncer.
type liveSetup struct {
	src   store.Store
	wc    *sqlite.DB
	proxy *netproxy.Proxy
	s     *live.Syncer
	ids   []int64
}

func newLiveSetup(b *testing.B, products int) *liveSetup {
	b.Helper()
	dsn := pgtest.DSN(b)
	src, err := postgres.Open(context.Background(), dsn, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { src.Close() })
	ls := &liveSetup{src: src}
	for i := range products {
		r, err := src.CreateRecord(as("root"), store.KindProduct, store.Values{"sku": fmt.Sprintf("BEN-%d", i), "name": "lamp", "price": int64(1000), "stock": int64(1000)})
		if err != nil {
			b.Fatal(err)
		}
		ls.ids = append(ls.ids, r.ID)
	}
	u, _ := url.Parse(dsn)
	if ls.proxy, err = netproxy.Start(u.Host); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ls.proxy.Close() })
	u.Host = ls.proxy.Addr()
	proxied := u.String()
	ls.wc, err = sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "copy.db"), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ls.wc.Close() })
	if _, err := tsync.Clone(context.Background(), src, ls.wc, tsync.CloneOptions{Source: "bench"}); err != nil {
		b.Fatal(err)
	}
	ls.s = live.New(ls.wc, live.Options{Open: func(ctx context.Context) (store.Store, error) {
		return postgres.Open(ctx, proxied, store.Options{})
	}})
	return ls
}

// start runs the syncer until the benchmark ends, and waits for it to reach the source.
func (ls *liveSetup) start(b *testing.B) {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	go ls.s.Run(ctx)
	b.Cleanup(func() { cancel(); <-ls.s.Done() })
	deadline := time.Now().Add(30 * time.Second)
	for !ls.s.Status().Online {
		if time.Now().After(deadline) {
			b.Fatal("the syncer never came online")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func quantiles(b *testing.B, ds []time.Duration) {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	if len(ds) == 0 {
		return
	}
	b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(ds[len(ds)*99/100].Microseconds())/1000, "p99-ms")
}

// BenchmarkLocalSave: a save in the copy while the syncer pushes each one through a line of
// the given latency, and (syncer=off) the same saves in the copy with no syncer running: the
// copy's own save latency. The save's time is the copy's own: the network is the syncer's.
func BenchmarkLocalSave(b *testing.B) {
	b.Run("syncer=off", func(b *testing.B) { benchLocalSave(b, newLiveSetup(b, 20)) })
	for _, lat := range []time.Duration{0, 50 * time.Millisecond, 200 * time.Millisecond} {
		b.Run(fmt.Sprintf("latency=%s", lat), func(b *testing.B) {
			ls := newLiveSetup(b, 20)
			ls.proxy.SetLatency(lat)
			ls.start(b)
			benchLocalSave(b, ls)
		})
	}
}

// benchLocalSave times b.N stock adjusts in the copy, reporting p50 and p99.
func benchLocalSave(b *testing.B, ls *liveSetup) {
	ds := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		id := ls.ids[i%len(ls.ids)]
		start := time.Now()
		if _, err := ls.wc.UpdateRecord(as("ann"), store.KindProduct, id, store.Update{Add: map[string]int64{"stock": -1}}); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(start))
	}
	b.StopTimer()
	quantiles(b, ds)
}

// BenchmarkRemoteToCopy: the time from a commit on the source to the record's new version
// in the copy, with the syncer following the source's feed.
func BenchmarkRemoteToCopy(b *testing.B) {
	ls := newLiveSetup(b, 1)
	ls.start(b)
	id := ls.ids[0]
	ds := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := ls.src.UpdateRecord(as("bob"), store.KindProduct, id, store.Update{Add: map[string]int64{"stock": 1}})
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		for {
			got, err := ls.wc.FindRecord(context.Background(), store.KindProduct, id)
			if err == nil && got.Version >= r.Version {
				break
			}
			if time.Since(start) > 30*time.Second {
				b.Fatalf("v%d never reached the copy", r.Version)
			}
			time.Sleep(time.Millisecond)
		}
		ds = append(ds, time.Since(start))
	}
	b.StopTimer()
	quantiles(b, ds)
}
