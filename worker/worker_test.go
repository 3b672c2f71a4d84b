package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
)

func editorCtx(t *testing.T, name string) context.Context {
	return store.WithActor(t.Context(), store.Actor{Name: name, Role: store.RoleEditor})
}

func systemCtx(t *testing.T, name string) context.Context {
	return store.WithActor(t.Context(), store.Actor{Name: name, Role: store.RoleSystem})
}

func mustCreate(t *testing.T, st store.Store, kind store.Kind, vals store.Values) *store.Record {
	t.Helper()
	r, err := st.CreateRecord(editorCtx(t, "alice"), kind, vals)
	if err != nil {
		t.Fatalf("create %s: %v", kind, err)
	}
	return r
}

func mustFind(t *testing.T, st store.Store, kind store.Kind, id int64) *store.Record {
	t.Helper()
	r, err := st.FindRecord(t.Context(), kind, id)
	if err != nil {
		t.Fatalf("find %s %d: %v", kind, id, err)
	}
	return r
}

func mustRunOnce(t *testing.T, w *Worker, ctx context.Context) Summary {
	t.Helper()
	s, err := w.RunOnce(ctx)
	if err != nil {
		t.Fatalf("RunOnce: %v", err)
	}
	return s
}

// seedStore creates n products and n documents.
func seedStore(t *testing.T, st store.Store, n int) {
	t.Helper()
	for i := 1; i <= n; i++ {
		mustCreate(t, st, store.KindProduct, store.Values{"sku": fmt.Sprintf("SKU-%03d", i), "name": fmt.Sprintf("Lamp %d", i),
			"description": "A lamp.\nBrass.", "price": int64(1000 + i), "stock": int64(10)})
		mustCreate(t, st, store.KindDocument, store.Values{"title": fmt.Sprintf("Page %d", i), "body": strings.Repeat("word ", i)})
	}
}

func TestWorker_RunOnce(t *testing.T) {
	st := openStore(t)
	seedStore(t, st, 3)
	reg := st.Registry()
	ctx := systemCtx(t, "worker:checksum@test:1")
	w := New(st, Checksum, Options{})

	if got, want := mustRunOnce(t, w, ctx), (Summary{Done: 6}); got != want {
		t.Fatalf("first pass = %v, want %v", got, want)
	}
	for _, kind := range store.DefaultRegistry().Kinds() {
		for id := int64(1); id <= 3; id++ {
			r := mustFind(t, st, kind, id)
			if got, want := r.Fields["checksum"], "sha256:"+ContentHash(reg, r); got != want {
				t.Errorf("%s %d checksum = %v, want %v", kind, id, got, want)
			}
			if r.Version != 2 || r.UpdatedBy != "worker:checksum@test:1" {
				t.Errorf("%s %d after the worker: version %d by %q, want 2 by the worker", kind, id, r.Version, r.UpdatedBy)
			}
			// A system write adds an operation-log entry and no history version.
			vs, err := st.FindHistory(t.Context(), kind, id)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range vs {
				if v.Actor == "worker:checksum@test:1" {
					t.Errorf("%s %d: history version %d by the worker", kind, id, v.Version)
				}
			}
			ops, err := st.FindOps(t.Context(), kind, id)
			if err != nil {
				t.Fatal(err)
			}
			if n := countWorkerSaves(ops, "worker:checksum@test:1"); n != 1 {
				t.Errorf("%s %d: %d operation-log entries by the worker, want 1", kind, id, n)
			}
			k, err := st.FindKey(t.Context(), store.ScopeJob, JobKey("checksum", kind, id, 1))
			if err != nil {
				t.Fatalf("job key of %s %d: %v", kind, id, err)
			}
			var res jobResultJSON
			if k.Status != store.KeyCompleted || json.Unmarshal(k.Result, &res) != nil || res.Version != 2 {
				t.Errorf("job key of %s %d = %s %s, want COMPLETED with version 2", kind, id, k.Status, k.Result)
			}
		}
	}
	// Nothing is stale any more: a second pass does nothing.
	if got, want := mustRunOnce(t, w, ctx), (Summary{}); got != want {
		t.Fatalf("second pass = %v, want %v", got, want)
	}
	// An editor save to the content makes the checksum stale again; a stock change does not.
	alice := editorCtx(t, "alice")
	if _, err := st.UpdateRecord(alice, store.KindProduct, 1, store.Update{BaseVersion: 2, Set: store.Values{"name": "Lamp one"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.UpdateRecord(alice, store.KindProduct, 2, store.Update{Add: map[string]int64{"stock": -1}}); err != nil {
		t.Fatal(err)
	}
	if got, want := mustRunOnce(t, w, ctx), (Summary{Done: 1}); got != want {
		t.Fatalf("pass after edits = %v, want %v", got, want)
	}
	r := mustFind(t, st, store.KindProduct, 1)
	if got, want := r.Fields["checksum"], "sha256:"+ContentHash(reg, r); got != want {
		t.Errorf("checksum after the edit = %v, want %v", got, want)
	}
}

func countWorkerSaves(ops []store.Change, actor string) int {
	n := 0
	for _, c := range ops {
		if c.Actor == actor && c.Event == store.EventSaved {
			n++
		}
	}
	return n
}

func TestWorker_Tasks(t *testing.T) {
	st := openStore(t)
	mustCreate(t, st, store.KindProduct, store.Values{"sku": "Lamp/Brass 42!", "name": "Lamp"})
	mustCreate(t, st, store.KindDocument, store.Values{"title": "Guide", "body": "one two\nthree\t four  "})
	ctx := systemCtx(t, "worker:test")
	for _, task := range []Task{Thumbnail, WordCount} {
		if got, want := mustRunOnce(t, New(st, task, Options{}), ctx), (Summary{Done: 1}); got != want {
			t.Fatalf("%s pass = %v, want %v", task.Name, got, want)
		}
	}
	p := mustFind(t, st, store.KindProduct, 1)
	want := "thumbs/lamp-brass-42-" + ContentHash(st.Registry(), p)[:12] + ".png"
	if got := p.Fields["thumbnail"]; got != want {
		t.Errorf("thumbnail = %v, want %v", got, want)
	}
	if got := mustFind(t, st, store.KindDocument, 1).Fields["word_count"]; got != int64(4) {
		t.Errorf("word_count = %v, want 4", got)
	}
}

func TestWorker_SkipsLeasedRecord(t *testing.T) {
	st := openStore(t)
	seedStore(t, st, 2)
	other := systemCtx(t, "worker:checksum@elsewhere:9")
	l, err := st.AcquireLease(other, store.LeaseRequest{Kind: store.KindProduct, RecordID: 1, Group: store.GroupSystem, TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	// A person's editor lease does not stop a system write (different group).
	if _, err := st.AcquireLease(editorCtx(t, "bob"), store.LeaseRequest{Kind: store.KindProduct, RecordID: 2, Group: store.GroupEditor, TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	w := New(st, Checksum, Options{})
	ctx := systemCtx(t, "worker:checksum@test:1")
	if got, want := mustRunOnce(t, w, ctx), (Summary{Done: 3, Skipped: 1}); got != want {
		t.Fatalf("pass with product 1 leased = %v, want %v", got, want)
	}
	if got := mustFind(t, st, store.KindProduct, 1).Fields["checksum"]; got != "" {
		t.Fatalf("leased product written: checksum %v", got)
	}
	if _, err := st.ReleaseLease(other, l.Token); err != nil {
		t.Fatal(err)
	}
	if got, want := mustRunOnce(t, w, ctx), (Summary{Done: 1}); got != want {
		t.Fatalf("pass after the release = %v, want %v", got, want)
	}
}

func TestWorker_RedeliveredJob(t *testing.T) {
	st := openStore(t)
	seedStore(t, st, 1)
	// Another worker completed the job for product 1 at version 1 (say it died right after,
	// before its write became visible to this pass's listing, or the job was delivered twice).
	other := systemCtx(t, "worker:checksum@elsewhere:9")
	r := mustFind(t, st, store.KindProduct, 1)
	key := JobKey("checksum", store.KindProduct, 1, r.Version)
	hash := store.RequestHash(store.KindProduct, 1, store.Update{BaseVersion: r.Version, Set: Checksum.Derive(st.Registry(), r)})
	if _, err := st.ClaimKey(other, store.ScopeJob, key, hash, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := st.CompleteKey(other, store.ScopeJob, key, []byte(`{}`), time.Hour); err != nil {
		t.Fatal(err)
	}
	w := New(st, Checksum, Options{})
	if got, want := mustRunOnce(t, w, systemCtx(t, "worker:checksum@test:1")), (Summary{Done: 1, Skipped: 1}); got != want {
		t.Fatalf("pass = %v, want %v (the product's job was done already)", got, want)
	}
	if got := mustFind(t, st, store.KindProduct, 1); got.Version != 1 {
		t.Fatalf("product written again by a redelivered job: version %d", got.Version)
	}
}

func TestWorker_RefusesEditorActor(t *testing.T) {
	st := openStore(t)
	_, err := New(st, Checksum, Options{}).RunOnce(editorCtx(t, "alice"))
	if store.ErrorCode(err) != store.EINVALID {
		t.Fatalf("RunOnce as an editor: %v, want EINVALID", err)
	}
}

// TestWorker_RefusesWorkingCopy: a worker does not run on a working copy, whose system
// fields come from the source: RunOnce and Run refuse at once (EFORBIDDEN, naming the
// source), and nothing is written or queued, although the copy's records are stale.
func TestWorker_RefusesWorkingCopy(t *testing.T) {
	at := time.Now().UTC().Truncate(time.Millisecond)
	wc := openCopy(t,
		&store.Record{Kind: store.KindProduct, ID: 1, Version: 3, UpdatedBy: "bob", UpdatedAt: at, Fields: store.Values{"sku": "A-1", "name": "lamp"}},
		&store.Record{Kind: store.KindDocument, ID: 2, Version: 4, UpdatedBy: "bob", UpdatedAt: at, Fields: store.Values{"title": "t", "body": "a b c"}})
	for _, task := range []Task{Checksum, WordCount} {
		ctx := systemCtx(t, ActorName(task.Name))
		_, err := New(wc, task, Options{}).RunOnce(ctx)
		if store.ErrorCode(err) != store.EFORBIDDEN || !strings.Contains(err.Error(), "worker "+task.Name+": a working copy") ||
			!strings.Contains(err.Error(), "the source, team.db") {
			t.Errorf("RunOnce %s on a working copy: %v, want EFORBIDDEN naming the source", task.Name, err)
		}
		// Run ends with the refusal instead of logging it and trying again every interval.
		done := make(chan error, 1)
		go func() { _, err := New(wc, task, Options{Interval: time.Millisecond}).Run(ctx); done <- err }()
		select {
		case err := <-done:
			if store.ErrorCode(err) != store.EFORBIDDEN {
				t.Errorf("Run %s on a working copy: %v, want EFORBIDDEN", task.Name, err)
			}
		case <-time.After(time.Minute):
			t.Fatalf("Run %s on a working copy did not end", task.Name)
		}
	}
	if got := mustFind(t, wc, store.KindProduct, 1); got.Version != 3 || got.Fields["checksum"] != "" {
		t.Errorf("product written on the copy: v%d checksum %q", got.Version, got.Fields["checksum"])
	}
	if got := mustFind(t, wc, store.KindDocument, 2); got.Version != 4 || got.Fields["word_count"] != int64(0) {
		t.Errorf("document written on the copy: v%d word_count %v", got.Version, got.Fields["word_count"])
	}
	if es, err := wc.Outbox(t.Context(), 0); err != nil || len(es) != 0 {
		t.Errorf("outbox after the refused workers: %v, %v", es, err)
	}
}

// TestWorker_Concurrent runs several workers on one store at once: every stale record is
// written exactly once, and no record by two workers.
func TestWorker_Concurrent(t *testing.T) {
	st := openStore(t)
	const n = 20
	seedStore(t, st, n)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		total Summary
	)
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := New(st, Checksum, Options{}).RunOnce(systemCtx(t, fmt.Sprintf("worker:checksum@test:%d", i)))
			if err != nil {
				t.Errorf("worker %d: %v", i, err)
			}
			mu.Lock()
			total = total.Add(s)
			mu.Unlock()
		}()
	}
	wg.Wait()
	if total.Done != 2*n || total.Failed != 0 {
		t.Fatalf("workers together: %v, want done %d and none failed", total, 2*n)
	}
	for _, kind := range store.DefaultRegistry().Kinds() {
		for id := int64(1); id <= n; id++ {
			ops, err := st.FindOps(t.Context(), kind, id)
			if err != nil {
				t.Fatal(err)
			}
			saves := 0
			for _, c := range ops {
				if strings.HasPrefix(c.Actor, "worker:") {
					saves++
				}
			}
			if saves != 1 {
				t.Errorf("%s %d: %d worker saves, want exactly 1", kind, id, saves)
			}
		}
	}
}

// TestWorker_Run shows that Run makes passes until its context ends and then returns what
// it did, without an error.
func TestWorker_Run(t *testing.T) {
	st := openStore(t)
	seedStore(t, st, 1)
	ctx, cancel := context.WithCancel(systemCtx(t, "worker:checksum@test:1"))
	defer cancel()
	passes := 0
	w := New(st, Checksum, Options{Interval: 10 * time.Millisecond, Logf: func(format string, args ...any) {
		if strings.HasPrefix(format, "pass:") {
			if passes++; passes == 3 {
				cancel()
			}
		}
	}})
	got, err := w.Run(ctx)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if want := (Summary{Done: 2}); got != want || passes != 3 {
		t.Fatalf("Run = %v after %d passes, want %v after 3", got, passes, want)
	}
}

// cancelOnLease is a store whose AcquireLease ends the worker's context first, as a SIGTERM
// arriving while a job takes its lease does.
type cancelOnLease struct {
	store.Store
	cancel context.CancelFunc
}

func (c cancelOnLease) AcquireLease(ctx context.Context, req store.LeaseRequest) (*store.Lease, error) {
	c.cancel()
	return c.Store.AcquireLease(ctx, req)
}

// TestWorker_ShutdownIsNoFailure stops a pass in the middle of a job: the job is skipped, not
// failed, and the next pass does it.
func TestWorker_ShutdownIsNoFailure(t *testing.T) {
	st := openStore(t)
	seedStore(t, st, 1)
	ctx, cancel := context.WithCancel(systemCtx(t, "worker:checksum@test:1"))
	s, err := New(cancelOnLease{Store: st, cancel: cancel}, Checksum, Options{}).RunOnce(ctx)
	if err == nil {
		t.Fatal("RunOnce with its context ended: no error")
	}
	if s.Failed != 0 || s.Done != 0 {
		t.Fatalf("pass stopped by shutdown = %v, want no job done and none failed", s)
	}
	if got := mustRunOnce(t, New(st, Checksum, Options{}), systemCtx(t, "worker:checksum@test:1")); got.Done != 2 || got.Failed != 0 {
		t.Fatalf("next pass = %v, want both records done", got)
	}
}
