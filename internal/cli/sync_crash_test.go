package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/postgres"
	"github.com/tandem-editor/tandem/store/postgres/pgtest"
	"github.com/tandem-editor/tandem/store/sqlite"
)

// The crash test: the same offline work is synced twice, on two sources seeded alike. Once
// without faults; once by sync processes SIGKILLed at random points (and, on PostgreSQL,
// with the source's connections cut under a running sync), then one more sync. Both runs
// must end in the same state: every delta once, every edit present, nothing written twice.

const crashProducts = 60

// crashDeleted products are deleted on the source while the copy is offline, and the first
// of them restored: the sync must take the deletes and the restore, once.
const crashDeleted = 3

// crashCopyDeleted products are deleted in the copy: the first as it is, the second after a
// stock adjustment, the third after an edit. Each delete goes to the source once, on the
// version the copy's own edit made, however the syncs are killed.
const crashCopyDeleted = 3

func crashCtx(who string) context.Context {
	return store.WithActor(context.Background(), store.Actor{Name: who, Role: store.RoleEditor})
}

// crashSource is one source of the crash test: a DSN the binary opens, and a store opener.
type crashSource struct {
	dsn  string
	open func(t *testing.T) store.Store
	cut  func(t *testing.T) // cuts the source's connections (PostgreSQL only)
}

func sqliteCrashSource(t *testing.T) crashSource {
	path := filepath.Join(t.TempDir(), "source.db")
	return crashSource{dsn: path, open: func(t *testing.T) store.Store {
		db, err := sqlite.Open(context.Background(), path, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return db
	}}
}

func postgresCrashSource(t *testing.T) crashSource {
	dsn := pgtest.DSN(t)
	schema := ""
	if i := strings.Index(dsn, "search_path="); i >= 0 {
		schema, _, _ = strings.Cut(dsn[i+len("search_path="):], "&")
	}
	return crashSource{dsn: dsn,
		open: func(t *testing.T) store.Store {
			db, err := postgres.Open(context.Background(), dsn, store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			return db
		},
		cut: func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			conn, err := pgx.Connect(ctx, pgtest.ServerDSN(t))
			if err != nil {
				t.Errorf("connect to cut connections: %v", err)
				return
			}
			defer conn.Close(context.Background())
			_, _ = conn.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
				WHERE pid <> pg_backend_pid() AND application_name LIKE '%' || $1`, schema)
		}}
}

// crashSeed fills a source: products with stock, a document tree.
func crashSeed(t *testing.T, st store.Store) {
	ctx := crashCtx("root")
	for i := range crashProducts {
		if _, err := st.CreateRecord(ctx, store.KindProduct, store.Values{"sku": fmt.Sprintf("P-%03d", i), "name": fmt.Sprintf("product %d", i),
			"stock": int64(100), "price": int64(1000 + i)}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range crashDeleted {
		if _, err := st.CreateRecord(ctx, store.KindProduct, store.Values{"sku": fmt.Sprintf("DEL-%d", i), "name": "deleted on the source"}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range crashCopyDeleted {
		if _, err := st.CreateRecord(ctx, store.KindProduct, store.Values{"sku": fmt.Sprintf("CDEL-%d", i), "name": "deleted in the copy",
			"stock": int64(10)}); err != nil {
			t.Fatal(err)
		}
	}
	root, err := st.CreateRecord(ctx, store.KindDocument, store.Values{"title": "root"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if _, err := st.CreateRecord(ctx, store.KindDocument, store.Values{"title": fmt.Sprintf("doc %d", i), "parent_id": root.ID,
			"body": "a\n\nb\n\nc\n"}); err != nil {
			t.Fatal(err)
		}
	}
}

// crashWork is the offline work in the copy and the direct writes on the source, the same
// in both runs: deltas, absolute edits on versions the source moved past (merges), moves,
// creates, deletes.
func crashWork(t *testing.T, wc, src store.Store) {
	ctx := context.Background()
	prods, err := wc.FindRecords(ctx, store.Filter{Kind: store.KindProduct})
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range prods {
		if sku := p.Fields["sku"].(string); strings.HasPrefix(sku, "DEL-") {
			if _, err := src.DeleteRecord(crashCtx("carol"), store.KindProduct, p.ID, store.Delete{ExpectVersion: p.Version}); err != nil {
				t.Fatal(err)
			}
			if sku == "DEL-0" {
				if _, err := src.RestoreRecord(crashCtx("carol"), store.KindProduct, p.ID, store.Restore{}); err != nil {
					t.Fatal(err)
				}
			}
			continue
		}
		if sku := p.Fields["sku"].(string); strings.HasPrefix(sku, "CDEL-") {
			switch sku {
			case "CDEL-1":
				if _, err := wc.UpdateRecord(crashCtx("alice"), store.KindProduct, p.ID, store.Update{Add: map[string]int64{"stock": -2}}); err != nil {
					t.Fatal(err)
				}
			case "CDEL-2":
				if _, err := wc.UpdateRecord(crashCtx("alice"), store.KindProduct, p.ID, store.Update{BaseVersion: p.Version,
					Set: store.Values{"name": "edited, then deleted"}}); err != nil {
					t.Fatal(err)
				}
			}
			cur, err := wc.FindRecord(ctx, store.KindProduct, p.ID)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := wc.DeleteRecord(crashCtx("alice"), store.KindProduct, p.ID, store.Delete{ExpectVersion: cur.Version}); err != nil {
				t.Fatal(err)
			}
			continue
		}
		for d := range 3 {
			if _, err := wc.UpdateRecord(crashCtx("alice"), store.KindProduct, p.ID, store.Update{Add: map[string]int64{"stock": -int64(d + 1)}}); err != nil {
				t.Fatal(err)
			}
		}
		if i%2 == 0 {
			cur, _ := wc.FindRecord(ctx, store.KindProduct, p.ID)
			if _, err := wc.UpdateRecord(crashCtx("alice"), store.KindProduct, p.ID, store.Update{BaseVersion: cur.Version,
				Set: store.Values{"name": fmt.Sprintf("renamed offline %d", i), "price": int64(2000 + i)}}); err != nil {
				t.Fatal(err)
			}
		}
		if i%3 == 0 {
			cur, _ := src.FindRecord(ctx, store.KindProduct, p.ID)
			if _, err := src.UpdateRecord(crashCtx("carol"), store.KindProduct, p.ID, store.Update{BaseVersion: cur.Version,
				Set: store.Values{"description": "carol was here"}}); err != nil {
				t.Fatal(err)
			}
			if _, err := src.UpdateRecord(crashCtx("carol"), store.KindProduct, p.ID, store.Update{Add: map[string]int64{"stock": 10}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	docs, err := wc.FindRecords(ctx, store.Filter{Kind: store.KindDocument})
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range docs[1:] {
		if _, err := wc.UpdateRecord(crashCtx("alice"), store.KindDocument, d.ID, store.Update{BaseVersion: d.Version,
			Set: store.Values{"body": "A offline\n\nb\n\nc\n", "tags": []string{"train"}}}); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			if _, err := src.UpdateRecord(crashCtx("carol"), store.KindDocument, d.ID, store.Update{BaseVersion: d.Version,
				Set: store.Values{"body": "a\n\nb\n\nC online\n"}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// docs[2] under docs[1]: a move.
	parent := docs[1].ID
	if _, err := wc.MoveRecord(crashCtx("alice"), store.KindDocument, docs[2].ID, store.Move{Parent: &parent}); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if _, err := wc.CreateRecord(crashCtx("alice"), store.KindProduct, store.Values{"sku": fmt.Sprintf("NEW-%d", i), "name": "made offline", "stock": int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
}

// crashState is a store's records by natural key (sku, title), with their field values and
// version: ids may differ between runs (a PostgreSQL sequence skips on a rolled-back create).
func crashState(t *testing.T, st store.Store) map[string]string {
	ctx := context.Background()
	out := map[string]string{}
	titles := map[int64]string{}
	docs, err := st.FindRecords(ctx, store.Filter{Kind: store.KindDocument})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		titles[d.ID] = d.Title()
	}
	for _, kind := range []store.Kind{store.KindProduct, store.KindDocument} {
		recs, err := st.FindRecords(ctx, store.Filter{Kind: kind})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			f := r.Fields.Clone()
			key := r.Title()
			if kind == store.KindProduct {
				key = f["sku"].(string)
			}
			if p, ok := f["parent_id"].(int64); ok {
				f["parent_id"] = titles[p]
			}
			b, _ := json.Marshal(f)
			out[string(kind)+" "+key] = fmt.Sprintf("v%d by %s %s", r.Version, r.UpdatedBy, b)
		}
	}
	return out
}

// crashRun prepares a source and its working copy with the crash work done, and returns the
// copy's path.
func crashRun(t *testing.T, cs crashSource) (copyPath string) {
	t.Helper()
	src := cs.open(t)
	crashSeed(t, src)
	copyPath = filepath.Join(t.TempDir(), "copy.db")
	mustTandem(t, cs.dsn, "clone", cs.dsn, copyPath)
	wc, err := sqlite.Open(context.Background(), copyPath, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	crashWork(t, wc, src)
	wc.Close()
	src.Close()
	return copyPath
}

func TestSync_Crash(t *testing.T) {
	besideOthers(t)
	// The run: at least 20 syncs killed in the middle of a push (TANDEM_LONG_TESTS=1,
	// as CI does); a sample of 3 otherwise, to keep go test ./... quick.
	kills := 3
	if os.Getenv("TANDEM_LONG_TESTS") == "1" {
		kills = 30
	}
	for name, newSource := range map[string]func(*testing.T) crashSource{"sqlite": sqliteCrashSource, "postgres": postgresCrashSource} {
		t.Run(name, func(t *testing.T) {
			// The run without faults.
			clean := newSource(t)
			cleanCopy := crashRun(t, clean)
			start := time.Now()
			r := tandem(t, cleanCopy, "sync")
			if r.code != 0 {
				t.Fatalf("fault-free sync: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			span := time.Since(start) // kills land anywhere in a sync of this length
			t.Logf("fault-free sync in %v: %s", span.Round(time.Millisecond), strings.TrimSpace(r.stdout))
			cleanSrc := clean.open(t)
			defer cleanSrc.Close()
			want := crashState(t, cleanSrc)
			// P-000: 100, three deltas offline (-1 -2 -3), +10 on the source.
			if got := want["product P-000"]; !strings.Contains(got, `"stock":104`) || !strings.Contains(got, "renamed offline 0") {
				t.Fatalf("the fault-free sync did not bring the offline work: %s", got)
			}

			// The run with faults.
			faulty := newSource(t)
			faultyCopy := crashRun(t, faulty)
			rng := testRand(t)
			// Short aims while the outbox holds work, so that each killed sync pushes a
			// little and many kills land in the middle of a push; once it is drained, aims
			// within a no-op sync (open, pull) until there were enough kills.
			aim := span / 15
			killed, midPush, finished := 0, 0, 0
			for killed < kills || (midPush < kills && crashPending(t, faultyCopy) > 0) {
				pending := crashPending(t, faultyCopy)
				cmd := tandemCmd(faultyCopy, "sync")
				began := time.Now()
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				done := make(chan error, 1)
				go func() { done <- cmd.Wait() }()
				delay := 5*time.Millisecond + time.Duration(rng.Int64N(int64(aim)))
				select {
				case <-time.After(delay):
					_ = cmd.Process.Signal(syscall.SIGKILL)
					<-done
					killed++
					switch now := crashPending(t, faultyCopy); {
					case pending > 0 && now < pending:
						midPush++ // killed after it had pushed some, before it had pushed all
						// Every sync starts its push after the same start and pull: aim
						// no later than this kill, near the push's beginning, so that
						// no aim lands after a push that is quickly done.
						aim = max(delay-5*time.Millisecond, time.Millisecond)
					case pending > 0:
						// Killed before its first push (the process starts and pulls
						// more slowly than span/15 on this machine): aim a little later,
						// in small steps, so that the aims reach the push's first
						// moments rather than jump past a push that is quickly done.
						aim = min(aim+aim/8+time.Millisecond, span)
					}
				case <-done:
					finished++
					aim = max(min(aim, time.Since(began)), time.Millisecond)
					if finished > 5*kills {
						t.Fatalf("syncs end before they can be killed (%d killed)", killed)
					}
				}
			}
			if faulty.cut != nil {
				// Connections cut under running syncs: each exits 1 or gets through.
				for range 5 {
					cmd := tandemCmd(faultyCopy, "sync")
					if err := cmd.Start(); err != nil {
						t.Fatal(err)
					}
					time.Sleep(time.Duration(30+rng.IntN(150)) * time.Millisecond)
					faulty.cut(t)
					_ = cmd.Wait()
				}
			}
			if r := tandem(t, faultyCopy, "sync"); r.code != 0 {
				t.Fatalf("sync after %d kills: exit %d\n%s%s", killed, r.code, r.stdout, r.stderr)
			}
			faultySrc := faulty.open(t)
			defer faultySrc.Close()
			got := crashState(t, faultySrc)
			for k, w := range want {
				if got[k] != w {
					t.Errorf("%s after faults:\n got %s\nwant %s", k, got[k], w)
				}
			}
			for i := range crashCopyDeleted {
				if k := fmt.Sprintf("product CDEL-%d", i); got[k] != "" || want[k] != "" {
					t.Errorf("%s, deleted in the copy, is on the source: %s / %s", k, got[k], want[k])
				}
			}
			if len(got) != len(want) {
				t.Errorf("after faults the source has %d records, without %d", len(got), len(want))
			}
			wc, err := sqlite.Open(context.Background(), faultyCopy, store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			inCopy := crashState(t, wc)
			wc.Close()
			for i := range crashDeleted {
				k := fmt.Sprintf("product DEL-%d", i)
				if _, ok := inCopy[k]; ok != (i == 0) {
					t.Errorf("%s in the copy after the last sync: %v, want %v (deleted on the source; DEL-0 restored)", k, ok, i == 0)
				}
			}
			st := mustTandem(t, faultyCopy, "status", "--json")
			if !strings.Contains(st, `"pending": 0`) || !strings.Contains(st, `"conflicts": []`) {
				t.Errorf("copy after the last sync:\n%s", st)
			}
			t.Logf("%d syncs SIGKILLed (%d of them in the middle of a push), %d ran to the end before their kill", killed, midPush, finished)
			if midPush < 3 {
				t.Errorf("only %d kills landed in the middle of a push", midPush)
			}
		})
	}
}

// crashPending returns how many outbox entries the working copy at path holds.
func crashPending(t *testing.T, path string) int {
	t.Helper()
	db, err := sqlite.OpenWith(context.Background(), path, store.Options{}, sqlite.OpenConfig{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st, err := db.CopyState(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st.Pending
}
