package sync_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
	tsync "github.com/tandem-editor/tandem/sync"
)

// slowSource is a source whose saves take a while, so that saves sent together overlap,
// and whose saves of the records in late take longer still, so that a save sent after one
// of them reaches the source first. It counts the saves in progress and keeps the most seen;
// with stop set, it calls stop once stopAfter saves are done (a sync cancelled midway).
type slowSource struct {
	store.Store
	late      map[tsync.Ref]bool
	stop      context.CancelFunc
	stopAfter int

	mu       sync.Mutex
	inFlight int
	most     int
	done     int
}

func (s *slowSource) UpdateRecord(ctx context.Context, kind store.Kind, id int64, u store.Update) (*store.UpdateResult, error) {
	s.mu.Lock()
	s.inFlight++
	s.most = max(s.most, s.inFlight)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inFlight--
		s.done++
		if s.stop != nil && s.done == s.stopAfter {
			s.stop()
		}
		s.mu.Unlock()
	}()
	wait := 3 * time.Millisecond
	if s.late[tsync.Ref{Kind: kind, ID: id}] {
		wait = 80 * time.Millisecond
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(wait):
	}
	return s.Store.UpdateRecord(ctx, kind, id, u)
}

// TestSync_PushRuns pushes an outbox that mixes saves of many distinct records, which travel
// together, with everything that must keep the outbox's order: a record saved twice, a sku
// handed from one product to another, a create, a move, a delete and a save held by leases,
// a merge and a conflict. The source slows down the first of each ordered pair, so that a
// push that let the second go with it would see it arrive first. The outcome is the one
// pushing one entry at a time gives: every change on the source once, the same waits and
// conflicts, only the held entries left in the outbox, and a second sync converges.
func TestSync_PushRuns(t *testing.T) {
	for name, open := range sources {
		t.Run(name, func(t *testing.T) { testPushRuns(t, open(t)) })
	}
}

func testPushRuns(t *testing.T, base store.Store) {
	ctx := context.Background()
	f := seed(t, base)
	prod := func(sku string) int64 {
		r, err := base.CreateRecord(as("root"), store.KindProduct, store.Values{"sku": sku, "name": sku, "price": int64(1000), "stock": int64(50)})
		if err != nil {
			t.Fatal(err)
		}
		return r.ID
	}
	var plain []int64
	for i := range 14 {
		plain = append(plain, prod(fmt.Sprintf("P-%02d", i)))
	}
	twice, merged, conflict, giver, taker := prod("TWICE-1"), prod("MERGE-1"), prod("CONFLICT-1"), prod("A-1"), prod("B-1")
	src := &slowSource{Store: base, late: map[tsync.Ref]bool{{Kind: store.KindProduct, ID: twice}: true, {Kind: store.KindProduct, ID: giver}: true}}
	a := mustClone(t, src, "a")

	// The source moves on under two of the copy's edits, and two records are leased there.
	mustSet(t, base, "carol", store.KindProduct, merged, store.Values{"description": "from carol"})
	mustSet(t, base, "carol", store.KindProduct, conflict, store.Values{"price": int64(1300)})
	var leases []string
	for _, r := range []tsync.Ref{{Kind: store.KindProduct, ID: f.leased}, {Kind: store.KindDocument, ID: f.x}} {
		l, err := base.AcquireLease(as("dave"), store.LeaseRequest{Kind: r.Kind, RecordID: r.ID, Group: store.GroupEditor, TTL: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		leases = append(leases, l.Token)
	}
	before := map[int64]int64{}
	for _, id := range append(slices.Clone(plain), twice) {
		before[id] = mustGet(t, base, store.KindProduct, id).Version
	}

	name := func(id int64, vals store.Values) { mustSet(t, a, "alice", store.KindProduct, id, vals) }
	for _, id := range plain[:5] {
		name(id, store.Values{"name": "edited"})
	}
	name(twice, store.Values{"price": int64(1111)})
	name(merged, store.Values{"name": "from alice"})
	name(conflict, store.Values{"price": int64(1200)})
	// Made on top of the first save of the record: sent with it, it would arrive first, on
	// the version the first was made on, and the first would meet it as the source's change.
	name(twice, store.Values{"name": "twice"})
	name(f.leased, store.Values{"name": "alice while leased"})
	// The copy hands sku A-1 over: the giver's save must reach the source first.
	name(giver, store.Values{"sku": "A-1-old"})
	name(taker, store.Values{"sku": "A-1"})
	for _, id := range plain[5:8] {
		name(id, store.Values{"name": "edited"})
	}
	created, err := a.CreateRecord(as("alice"), store.KindProduct, store.Values{"sku": "NEW-1", "name": "new"})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range plain[8:10] {
		name(id, store.Values{"name": "edited"})
	}
	mustMove(t, a, "alice", f.overlap, f.text)
	// x is leased: its delete waits, and holds its parent, root, whose save below waits too
	// (it is not pushed although root is not leased).
	mustDelete(t, a, store.KindDocument, f.x, false)
	name(plain[10], store.Values{"name": "edited"})
	mustSet(t, a, "alice", store.KindDocument, f.root, store.Values{"body": "root, edited\n"})
	for _, id := range plain[11:] {
		name(id, store.Values{"name": "edited"})
	}
	name(f.leased, store.Values{"price": int64(999)})
	mustAdjust(t, a, "alice", plain[0], -3)

	rep := mustSync(t, src, a)
	if src.most < 2 {
		t.Errorf("at most %d saves reached the source at the same time, want several", src.most)
	}
	if got, want := fieldConflicts(rep.Conflicts), []string{"product " + itoa(conflict) + ": price"}; !slices.Equal(got, want) {
		t.Errorf("conflicts %v, want %v", describe(rep.Conflicts), want)
	}
	var waits []string
	for _, w := range rep.Waits {
		waits = append(waits, fmt.Sprintf("%s %d", w.Kind, w.ID))
	}
	if want := []string{"product " + itoa(f.leased), "document " + itoa(f.x)}; !slices.Equal(waits, want) {
		t.Errorf("waits %v, want %v", waits, want)
	}
	// Each plain save, the delta, both saves of twice, the merge, the sku handover, the
	// create and the move.
	if rep.Pushed != 14+1+2+1+2+1+1 || rep.Merged != 1 {
		t.Errorf("pushed %d, merged %d; want 22, 1 (only the record the source changed is a merge)", rep.Pushed, rep.Merged)
	}
	es, err := a.Outbox(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, e := range es {
		left = append(left, fmt.Sprintf("%s %s %d", e.Op, e.Kind, e.ID))
	}
	wantLeft := []string{
		fmt.Sprintf("%s product %d", store.CopySave, f.leased),
		fmt.Sprintf("%s document %d", store.CopyDelete, f.x),
		fmt.Sprintf("%s document %d", store.CopySave, f.root),
		fmt.Sprintf("%s product %d", store.CopySave, f.leased),
	}
	if !slices.Equal(left, wantLeft) {
		t.Errorf("outbox after the push: %v, want the held entries %v", left, wantLeft)
	}

	// Every change is on the source once: one version per save, the delta applied once.
	for _, id := range plain {
		r := mustGet(t, base, store.KindProduct, id)
		want := before[id] + 1
		if id == plain[0] {
			want++
			if r.Fields["stock"] != int64(47) {
				t.Errorf("product %d's stock %v, want 47 (the delta once)", id, r.Fields["stock"])
			}
		}
		if r.Fields["name"] != "edited" || r.Version != want {
			t.Errorf("product %d: name %v at v%d, want edited at v%d", id, r.Fields["name"], r.Version, want)
		}
	}
	if r := mustGet(t, base, store.KindProduct, twice); r.Fields["price"] != int64(1111) || r.Fields["name"] != "twice" || r.Version != before[twice]+2 {
		t.Errorf("product %d: %v at v%d, want both saves, at v%d", twice, r.Fields, r.Version, before[twice]+2)
	}
	if r := mustGet(t, base, store.KindProduct, merged); r.Fields["name"] != "from alice" || r.Fields["description"] != "from carol" {
		t.Errorf("merged product: %v, want alice's name and carol's description", r.Fields)
	}
	if g, tk := mustGet(t, base, store.KindProduct, giver), mustGet(t, base, store.KindProduct, taker); g.Fields["sku"] != "A-1-old" || tk.Fields["sku"] != "A-1" {
		t.Errorf("skus on the source: %v, %v; want A-1-old, A-1", g.Fields["sku"], tk.Fields["sku"])
	}
	if r := mustGet(t, base, store.KindProduct, f.leased); r.Fields["name"] != "LEA-1" || r.Fields["price"] != int64(1000) {
		t.Errorf("leased product changed on the source: %v", r.Fields)
	}
	if p := mustGet(t, base, store.KindDocument, f.overlap).Fields["parent_id"]; p != f.text {
		t.Errorf("moved document under %v on the source, want %d", p, f.text)
	}
	if absent(t, base, store.KindDocument, f.x) || mustGet(t, base, store.KindDocument, f.root).Fields["body"] != body {
		t.Error("the held delete or the held save of its parent reached the source")
	}
	if !absent(t, a, store.KindProduct, created.ID) {
		t.Errorf("the copy still holds the create under its local id %d", created.ID)
	}

	for _, tok := range leases {
		if _, err := base.ReleaseLease(as("dave"), tok); err != nil {
			t.Fatal(err)
		}
	}
	rep = mustSync(t, src, a)
	if rep.Pending != 0 || len(rep.Waits) != 0 || len(rep.Conflicts) != 1 {
		t.Fatalf("after the leases: pending %d, waits %+v, conflicts %v; want the price conflict alone", rep.Pending, rep.Waits, describe(rep.Conflicts))
	}
	if r := mustGet(t, base, store.KindProduct, f.leased); r.Fields["name"] != "alice while leased" || r.Fields["price"] != int64(999) {
		t.Errorf("leased product after the lease: %v", r.Fields)
	}
	if !absent(t, base, store.KindDocument, f.x) || mustGet(t, base, store.KindDocument, f.root).Fields["body"] != "root, edited\n" {
		t.Error("the delete or the save of its parent did not reach the source after the lease")
	}
	assertConverged(t, base, a, rep.Conflicts)
	if rep = mustSync(t, src, a); rep.Pushed != 0 || rep.Pending != 0 {
		t.Errorf("a third sync pushed %d, left %d pending; want nothing to do", rep.Pushed, rep.Pending)
	}
}

// TestSync_PushStopped cancels a sync while saves travel together: the sync stops, no save
// reaches the source after it returned, and the next sync pushes what was left. Saves that
// reached the source but were not acknowledged are sent again and meet their own write:
// every change is on the source once, and none counts as a merge.
func TestSync_PushStopped(t *testing.T) {
	for name, open := range sources {
		t.Run(name, func(t *testing.T) {
			base := open(t)
			var ids []int64
			for i := range 20 {
				r, err := base.CreateRecord(as("root"), store.KindProduct, store.Values{"sku": fmt.Sprintf("S-%02d", i), "name": "before"})
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, r.ID)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			src := &slowSource{Store: base, stop: cancel, stopAfter: 6}
			a := mustClone(t, src, "a")
			for _, id := range ids {
				mustSet(t, a, "alice", store.KindProduct, id, store.Values{"name": "after"})
			}

			if _, err := tsync.Sync(ctx, src, a); err == nil {
				t.Fatal("a cancelled sync returned no error")
			}
			src.mu.Lock()
			inFlight, done := src.inFlight, src.done
			src.mu.Unlock()
			if inFlight != 0 {
				t.Errorf("%d saves still travelling after the sync returned", inFlight)
			}
			if done >= len(ids) {
				t.Errorf("%d saves were sent, want the sync stopped before the last of %d", done, len(ids))
			}
			time.Sleep(20 * time.Millisecond)
			src.mu.Lock()
			if src.done != done {
				t.Errorf("%d saves ended after the sync returned", src.done-done)
			}
			src.mu.Unlock()

			src.stop = nil
			rep := mustSync(t, src, a)
			if !rep.InSync() || rep.Merged != 0 {
				t.Fatalf("second sync: %+v; want in sync, nothing merged", rep)
			}
			for _, id := range ids {
				if r := mustGet(t, base, store.KindProduct, id); r.Fields["name"] != "after" || r.Version != 2 {
					t.Errorf("product %d: name %v at v%d, want after at v2", id, r.Fields["name"], r.Version)
				}
			}
			assertConverged(t, base, a, nil)
		})
	}
}
