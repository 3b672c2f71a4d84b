package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/sqlite"
	"github.com/tandem-editor/tandem/worker"
)

var summaryLine = regexp.MustCompile(`checksum: done (\d+), skipped (\d+), failed (\d+)`)

// parseSummary returns the done and failed counts of a worker's summary line.
func parseSummary(t *testing.T, out string) (done, failed int) {
	t.Helper()
	m := summaryLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no worker summary in %q", out)
	}
	done, _ = strconv.Atoi(m[1])
	failed, _ = strconv.Atoi(m[3])
	return done, failed
}

// TestWorker_WithEditor runs two checksum worker processes and an editor (a series of
// set/adjust processes: 20, 100 under TANDEM_LONG_TESTS) on one SQLite store. A fixed number
// of writes rather than a few seconds of them, so a loaded machine makes the test slower,
// not weaker. Afterwards: no update is
// lost (stock = start + the sum of the deltas, name = the last successful set), every
// editor write is a history version and no worker write is, and every job was done exactly
// once: each worker save has its own COMPLETED job key for the version it computed from, and
// the workers' summaries add up to the saves in the operation log.
func TestWorker_WithEditor(t *testing.T) {
	dsn := newSQLiteStore(t)
	const products, start = 4, 100
	var ids []int64
	for i := range products {
		p := mustCreate(t, dsn, "product", fmt.Sprintf("sku=W-%d", i), fmt.Sprintf("name=Lamp %d", i), fmt.Sprintf("stock=%d", start))
		ids = append(ids, p.ID)
	}
	doc := mustCreate(t, dsn, "document", "title=Guide", "body=one two three")

	var workers []*lineProc
	for range 2 {
		workers = append(workers, startLines(t, dsn, "worker", "checksum", "--interval", "100ms", "--verbose"))
	}

	// The editor: version-checked sets (which may collide with a worker's write: exit 3,
	// then it reloads) and relative adjusts, for a few seconds.
	deltas := map[int64]int64{}
	lastName := map[int64]string{}
	writes := map[int64]int{} // successful editor writes per product
	sets, conflicts := 0, 0
	edits := 20
	if longTests() {
		edits = 100
	}
	for i := range edits {
		id := ids[i%products]
		sid := fmt.Sprint(id)
		if i%2 == 0 {
			cur := mustGet(t, dsn, "product", id)
			name := fmt.Sprintf("Lamp %d edit %d", id, i)
			r := tandem(t, dsn, "--user", "editor", "set", "product", sid, "name="+name, "--expect-version", fmt.Sprint(cur.Version))
			switch r.code {
			case 0:
				sets++
				lastName[id] = name
				writes[id]++
			case exitConflict:
				conflicts++
			default:
				t.Fatalf("set: exit %d: %s", r.code, r.stderr)
			}
			continue
		}
		d := int64(i%7 - 3)
		if d == 0 {
			d = 5
		}
		mustTandem(t, dsn, "--user", "editor", "adjust", "product", sid, "stock", strconv.FormatInt(d, 10))
		deltas[id] += d
		writes[id]++
	}
	cur := mustGet(t, dsn, "document", doc.ID)
	mustTandem(t, dsn, "--user", "editor", "set", "document", fmt.Sprint(doc.ID), "body=four five", "--expect-version", fmt.Sprint(cur.Version))

	done := 0
	for _, w := range workers {
		if code := w.stop(t, syscall.SIGTERM); code != 0 {
			t.Fatalf("worker after SIGTERM: exit %d; stderr %s", code, w.stderr)
		}
		line := w.next(t, feedBound)
		d, failed := parseSummary(t, line)
		if failed != 0 {
			t.Errorf("worker failed %d jobs: %s; the failures:\n%s", failed, line, failures(w.stderr.String()))
		}
		done += d
	}
	// A last pass brings whatever the editor changed after the workers stopped up to date.
	d, _ := parseSummary(t, mustTandem(t, dsn, "worker", "checksum", "--once"))
	done += d
	t.Logf("editor: %d sets (%d conflicts with workers), %d writes; workers: %d jobs done", sets, conflicts, sumInts(writes), done)

	for _, id := range ids {
		got := mustGet(t, dsn, "product", id)
		if want := float64(start + deltas[id]); got.Fields["stock"] != want {
			t.Errorf("product %d: stock %v, want %v (an adjust was lost or applied twice)", id, got.Fields["stock"], want)
		}
		if want, ok := lastName[id]; ok && got.Fields["name"] != want {
			t.Errorf("product %d: name %q, want the last successful set %q", id, got.Fields["name"], want)
		}
	}

	// Look at the store itself for the history, the operation log and the job keys.
	ctx := context.Background()
	db, err := sqlite.Open(ctx, dsn, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	saves := 0
	check := func(kind store.Kind, id int64, editorWrites int) {
		rec, err := db.FindRecord(ctx, kind, id)
		if err != nil {
			t.Fatal(err)
		}
		if want := "sha256:" + worker.ContentHash(db.Registry(), rec); rec.Fields["checksum"] != want {
			t.Errorf("%s %d: checksum %v, want %v", kind, id, rec.Fields["checksum"], want)
		}
		vs, err := db.FindHistory(ctx, kind, id)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range vs {
			if strings.HasPrefix(v.Actor, "worker:") {
				t.Errorf("%s %d: history version %d by %s: a worker write must not add one", kind, id, v.Version, v.Actor)
			}
		}
		if editorWrites >= 0 && len(vs) != 1+editorWrites {
			t.Errorf("%s %d: %d history versions, want %d (the create and every editor write)", kind, id, len(vs), 1+editorWrites)
		}
		ops, err := db.FindOps(ctx, kind, id)
		if err != nil {
			t.Fatal(err)
		}
		workerSaves := map[int64]bool{}
		for _, c := range ops {
			if !strings.HasPrefix(c.Actor, "worker:checksum@") {
				continue
			}
			saves++
			workerSaves[c.Version] = true
			if c.Role != store.RoleSystem || strings.Join(c.Fields, ",") != "checksum" || c.History {
				t.Errorf("%s %d v%d: worker change %+v, want a system write of checksum only", kind, id, c.Version, c)
			}
		}
		// Every version the record passed through: a COMPLETED job computed from version v
		// is the worker save that made version v+1, and there is one for each such save.
		for v := int64(1); v < rec.Version; v++ {
			k, err := db.FindKey(ctx, store.ScopeJob, worker.JobKey("checksum", kind, id, v))
			if store.ErrorCode(err) == store.ENOTFOUND {
				if workerSaves[v+1] {
					t.Errorf("%s %d: worker save v%d without a job key for v%d", kind, id, v+1, v)
				}
				continue
			} else if err != nil {
				t.Fatal(err)
			}
			var res struct {
				Version    int64 `json:"version"`
				Superseded bool  `json:"superseded"`
			}
			if k.Status != store.KeyCompleted || json.Unmarshal(k.Result, &res) != nil {
				t.Errorf("%s %d: job key for v%d is %s %s, want COMPLETED", kind, id, v, k.Status, k.Result)
				continue
			}
			if !res.Superseded && (res.Version != v+1 || !workerSaves[v+1]) {
				t.Errorf("%s %d: job for v%d says it wrote v%d, but the log has no such worker save", kind, id, v, res.Version)
			}
			if res.Superseded && workerSaves[v+1] {
				t.Errorf("%s %d: job for v%d superseded, yet a worker wrote v%d", kind, id, v, v+1)
			}
		}
	}
	for _, id := range ids {
		check(store.KindProduct, id, writes[id])
	}
	check(store.KindDocument, doc.ID, 1)
	if saves != done {
		t.Errorf("the workers reported %d jobs done, the operation log has %d worker saves", done, saves)
	}
}

// failures returns the lines of a verbose worker's log that report a failure.
func failures(log string) string {
	var out []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, "failed") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func sumInts(m map[int64]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
