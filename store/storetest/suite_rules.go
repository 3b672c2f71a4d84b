package storetest

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
)

// The rules below hold on every write path (create, set, adjust, LockedUpdate, move), on
// every store, whatever the field registry says (issue 10, points 2, 3, 5, 9 and 13).

// customRegistry returns the default registry with the YAML lines of the named fields
// replaced, so a test can make price a counter or put parent_id into a group of its own.
func customRegistry(t *testing.T, lines map[string]string) *store.Registry {
	t.Helper()
	var b strings.Builder
	b.WriteString("product:\n")
	for _, f := range store.DefaultRegistry().Fields(store.KindProduct) {
		b.WriteString(fieldLine(f, lines))
	}
	b.WriteString("document:\n")
	for _, f := range store.DefaultRegistry().Fields(store.KindDocument) {
		b.WriteString(fieldLine(f, lines))
	}
	r, err := store.ParseRegistry("test.yaml", []byte(b.String()))
	if err != nil {
		t.Fatalf("custom registry: %v\n%s", err, b.String())
	}
	return r
}

func fieldLine(f *store.Field, lines map[string]string) string {
	if l, ok := lines[f.Name]; ok {
		return "  - " + l + "\n"
	}
	l := fmt.Sprintf("  - {name: %s, type: %s, owner: %s, rule: %s, group: %s", f.Name, f.Type, f.Owner, f.Rule, f.Group)
	if f.Required {
		l += ", required: true"
	}
	if f.ReadOnly {
		l += ", readonly: true"
	}
	if len(f.Values) > 0 {
		l += ", values: [" + strings.Join(f.Values, ", ") + "]"
	}
	return l + "}\n"
}

// requireNothingWritten fails unless the record is still at version v and the change log did
// not grow past id from.
func requireNothingWritten(t *testing.T, s store.Store, kind store.Kind, id, v, from int64) {
	t.Helper()
	if got := mustFind(t, s, kind, id); got.Version != v {
		t.Errorf("%s %d is at version %d, want %d (nothing written)", kind, id, got.Version, v)
	}
	if cs := mustChanges(t, s, from); len(cs) != 0 {
		t.Errorf("change log grew by %+v, want nothing", cs)
	}
}

func testTreeRules(t *testing.T, open Opener) {
	t.Run("ErrParentIDOnEveryWritePath", func(t *testing.T) {
		// parent_id changes only by a move: an update, a locked update or a system writer
		// cannot set it, so none of them can skip the cycle check.
		s := fresh(t, open)
		ids := mustChain(t, s, 2, nil) // a ← b
		a, b := ids[0], ids[1]
		from := mustLastChangeID(t, s)
		_, err := s.UpdateRecord(actx(t, actAlice), store.KindDocument, a, store.Update{BaseVersion: 1, Set: store.Values{"parent_id": b}})
		requireCode(t, err, store.EFORBIDDEN)
		_, err = s.LockedUpdate(actx(t, actAlice), store.KindDocument, a, func(*store.Record) (store.Update, error) {
			return store.Update{Set: store.Values{"parent_id": b}}, nil
		})
		requireCode(t, err, store.EFORBIDDEN)
		requireNothingWritten(t, s, store.KindDocument, a, 1, from)
		_, err = s.MoveRecord(actx(t, actAlice), store.KindDocument, a, store.Move{Parent: &b})
		requireCode(t, err, store.EINVALID)
		requireMessage(t, err, "cycle")
	})
	t.Run("TreeGroupOfCustomRegistry", func(t *testing.T) {
		// A registry may put parent_id into a lease group of its own: moves then need that
		// group's lease, and an editor lease on the rest of the document does not block them.
		reg := customRegistry(t, map[string]string{
			"parent_id": "{name: parent_id, type: ref, owner: editor, rule: scalar, readonly: true, group: tree}",
		})
		if got := reg.TreeGroup(store.KindDocument); got != "tree" {
			t.Fatalf("tree group = %q, want tree", got)
		}
		s := freshWith(t, open, store.Options{Registry: reg})
		d := mustCreateDoc(t, s, "d", nil)
		p := mustCreateDoc(t, s, "p", nil)
		tree := mustAcquire(t, s, actAlice, store.KindDocument, d.ID, "tree", time.Minute)
		mustAcquire(t, s, actBob, store.KindDocument, d.ID, store.GroupEditor, time.Minute)
		_, err := s.MoveRecord(actx(t, actAlice), store.KindDocument, d.ID, store.Move{Parent: &p.ID})
		requireCode(t, err, store.ELEASE)
		if le := asLeaseError(t, err); le.Lease.Group != "tree" || le.Lease.Holder != "alice" {
			t.Errorf("lease error = %+v, want alice's tree lease", le)
		}
		res, err := s.MoveRecord(actx(t, actAlice), store.KindDocument, d.ID, store.Move{Parent: &p.ID, LeaseToken: tree.Token})
		if err != nil || res.Record.Fields["parent_id"] != p.ID {
			t.Fatalf("move with the tree lease's token = %+v, %v", res, err)
		}
	})
}

func testMoneyRules(t *testing.T, open Opener) {
	// A registry may make price a counter (adjust price -5.00); money still never goes
	// below zero, on any path.
	reg := customRegistry(t, map[string]string{
		"price": "{name: price, type: money, owner: shared, rule: counter}",
	})
	t.Run("ErrAdjustBelowZero", func(t *testing.T) {
		s := freshWith(t, open, store.Options{Registry: reg})
		p := mustCreateProduct(t, s, "P") // price 29.99
		from := mustLastChangeID(t, s)
		_, err := s.UpdateRecord(actx(t, actAlice), store.KindProduct, p.ID, store.Update{Add: map[string]int64{"price": -3000}})
		requireCode(t, err, store.EINVALID)
		if got, want := err.Error(), "product.price: 29.99 - 30.00 would be -0.01, and an amount of money cannot be negative"; !strings.Contains(got, want) {
			t.Errorf("error = %q, want it to contain %q", got, want)
		}
		requireNothingWritten(t, s, store.KindProduct, p.ID, 1, from)
		res := mustSave(t, s, actx(t, actAlice), store.KindProduct, p.ID, store.Update{Add: map[string]int64{"price": -2999}})
		if res.Record.Fields["price"] != int64(0) {
			t.Errorf("price = %v, want 0", res.Record.Fields["price"])
		}
	})
	t.Run("ErrLockedUpdateBelowZero", func(t *testing.T) {
		s := freshWith(t, open, store.Options{Registry: reg})
		p := mustCreateProduct(t, s, "P")
		from := mustLastChangeID(t, s)
		_, err := s.LockedUpdate(actx(t, actWorker), store.KindProduct, p.ID, func(r *store.Record) (store.Update, error) {
			return store.Update{Add: map[string]int64{"price": -r.Fields["price"].(int64) - 1}}, nil
		})
		requireCode(t, err, store.EINVALID)
		requireMessage(t, err, "cannot be negative")
		requireNothingWritten(t, s, store.KindProduct, p.ID, 1, from)
	})
	t.Run("ErrSetAndCreateBelowZero", func(t *testing.T) {
		s := freshWith(t, open, store.Options{Registry: reg})
		_, err := s.CreateRecord(actx(t, actAlice), store.KindProduct, store.Values{"sku": "N", "name": "n", "price": int64(-1)})
		requireCode(t, err, store.EINVALID)
		p := mustCreateProduct(t, s, "P")
		_, err = s.UpdateRecord(actx(t, actAlice), store.KindProduct, p.ID, store.Update{BaseVersion: 1, Set: store.Values{"price": int64(-1)}})
		requireCode(t, err, store.EINVALID)
	})
}

func testSKURules(t *testing.T, open Opener) {
	t.Run("ErrSameAfterNormalisation", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "ABC-1")
		for name, sku := range map[string]string{
			"case":                "abc-1",
			"surrounding spaces":  "  ABC-1 ",
			"ideographic space":   "\u3000ABC-1",
			"non-breaking space":  "ABC-1\u00a0",
			"narrow no-break":     "\u202fABC-1",
			"zero-width space":    "ABC\u200b-1",
			"zero-width joiner":   "A\u200dBC-1",
			"byte-order mark":     "\ufeffABC-1",
			"soft hyphen":         "ABC\u00ad-1",
			"full width (NFKC)":   "ＡＢＣ-1",
			"all of them at once": " \u00a0ａ\u200bbc-1\ufeff ",
		} {
			_, err := s.CreateRecord(actx(t, actAlice), store.KindProduct, store.Values{"sku": sku, "name": name})
			if store.ErrorCode(err) != store.EINVALID || !strings.Contains(err.Error(), fmt.Sprintf("already exists (product %d", p.ID)) {
				t.Errorf("%s: create sku %q = %v, want EINVALID naming product %d", name, sku, err, p.ID)
			}
		}
		if n, err := s.CountRecords(t.Context(), store.KindProduct); err != nil || n != 1 {
			t.Errorf("products = %d, %v; want 1", n, err)
		}
		// A sku that really differs is another sku.
		q := mustCreateProduct(t, s, "ABC-10")
		// Set and LockedUpdate refuse it as create does.
		_, err := s.UpdateRecord(actx(t, actAlice), store.KindProduct, q.ID, store.Update{BaseVersion: 1, Set: store.Values{"sku": "abc-1\u00a0"}})
		requireCode(t, err, store.EINVALID)
		requireMessage(t, err, fmt.Sprintf("already exists (product %d has ABC-1", p.ID))
		_, err = s.LockedUpdate(actx(t, actAlice), store.KindProduct, q.ID, func(*store.Record) (store.Update, error) {
			return store.Update{Set: store.Values{"sku": "\u200babc-1"}}, nil
		})
		requireCode(t, err, store.EINVALID)
		requireMessage(t, err, "already exists")
		// A product may change how its own sku is written.
		res := mustSave(t, s, actx(t, actAlice), store.KindProduct, p.ID, store.Update{BaseVersion: 1, Set: store.Values{"sku": "abc-1"}})
		if res.Record.Fields["sku"] != "abc-1" {
			t.Errorf("sku = %v, want abc-1", res.Record.Fields["sku"])
		}
		// After that, the old spelling is free for nobody either: it is the same sku.
		_, err = s.CreateRecord(actx(t, actAlice), store.KindProduct, store.Values{"sku": "ABC-1", "name": "again"})
		requireCode(t, err, store.EINVALID)
	})
	t.Run("ErrNoVisibleCharacters", func(t *testing.T) {
		s := fresh(t, open)
		for _, sku := range []string{"\u200b", "\u00a0\u200d", "\ufeff"} {
			_, err := s.CreateRecord(actx(t, actAlice), store.KindProduct, store.Values{"sku": sku, "name": "x"})
			requireCode(t, err, store.EINVALID)
		}
		p := mustCreateProduct(t, s, "P")
		_, err := s.UpdateRecord(actx(t, actAlice), store.KindProduct, p.ID, store.Update{BaseVersion: 1, Set: store.Values{"sku": "\u200b"}})
		requireCode(t, err, store.EINVALID)
	})
}

func testOverflow(t *testing.T, open Opener) {
	t.Run("ErrBeforeWriting", func(t *testing.T) {
		s := fresh(t, open)
		p, err := s.CreateRecord(actx(t, actAlice), store.KindProduct, store.Values{"sku": "BIG", "name": "big", "stock": int64(math.MaxInt64 - 100)})
		if err != nil {
			t.Fatal(err)
		}
		from := mustLastChangeID(t, s)
		_, err = s.UpdateRecord(actx(t, actAlice), store.KindProduct, p.ID, store.Update{Add: map[string]int64{"stock": 1000}})
		requireCode(t, err, store.EINVALID)
		// The same words on every store: decided in store/, not by the database.
		if got, want := err.Error(), "product.stock: 9223372036854775707 + 1000 is out of range (a counter holds -9223372036854775808..9223372036854775807)"; !strings.Contains(got, want) {
			t.Errorf("error = %q, want it to contain %q", got, want)
		}
		_, err = s.LockedUpdate(actx(t, actWorker), store.KindProduct, p.ID, func(*store.Record) (store.Update, error) {
			return store.Update{Add: map[string]int64{"stock": math.MaxInt64}}, nil
		})
		requireCode(t, err, store.EINVALID)
		requireNothingWritten(t, s, store.KindProduct, p.ID, 1, from)
		if got := mustFind(t, s, store.KindProduct, p.ID).Fields["stock"]; got != int64(math.MaxInt64-100) {
			t.Errorf("stock = %v, want it unchanged", got)
		}
		// Up to the limit is fine.
		res := mustSave(t, s, actx(t, actAlice), store.KindProduct, p.ID, store.Update{Add: map[string]int64{"stock": 100}})
		if res.Record.Fields["stock"] != int64(math.MaxInt64) {
			t.Errorf("stock = %v, want MaxInt64", res.Record.Fields["stock"])
		}
	})
	t.Run("ErrBelowMin", func(t *testing.T) {
		s := fresh(t, open)
		p, err := s.CreateRecord(actx(t, actAlice), store.KindProduct, store.Values{"sku": "LOW", "name": "low", "stock": int64(math.MinInt64 + 5)})
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.UpdateRecord(actx(t, actAlice), store.KindProduct, p.ID, store.Update{Add: map[string]int64{"stock": -6}})
		requireCode(t, err, store.EINVALID)
		requireMessage(t, err, "- 6 is out of range")
		mustSave(t, s, actx(t, actAlice), store.KindProduct, p.ID, store.Update{Add: map[string]int64{"stock": -5}})
	})
}

func testLeaseBindsEveryWriter(t *testing.T, open Opener) {
	waitsBeside(t)
	t.Run("MoveNeedsTheToken", func(t *testing.T) {
		s := fresh(t, open)
		d := mustCreateDoc(t, s, "d", nil)
		p := mustCreateDoc(t, s, "p", nil)
		l := mustAcquire(t, s, actAlice, store.KindDocument, d.ID, store.GroupEditor, time.Minute)
		from := mustLastChangeID(t, s)
		// The holder's name is no proof: alice without her token is refused like bob.
		for _, a := range []store.Actor{actAlice, actBob} {
			_, err := s.MoveRecord(actx(t, a), store.KindDocument, d.ID, store.Move{Parent: &p.ID})
			requireCode(t, err, store.ELEASE)
			if le := asLeaseError(t, err); le.Lost || le.Lease.Holder != "alice" {
				t.Errorf("%s: lease error = %+v, want held by alice", a.Name, le)
			}
		}
		requireNothingWritten(t, s, store.KindDocument, d.ID, 1, from)
		res, err := s.MoveRecord(actx(t, actAlice), store.KindDocument, d.ID, store.Move{Parent: &p.ID, LeaseToken: l.Token})
		if err != nil || res.Record.Fields["parent_id"] != p.ID {
			t.Fatalf("move with the token = %+v, %v", res, err)
		}
	})
	t.Run("MoveUnderLeasedParent", func(t *testing.T) {
		s := fresh(t, open)
		d := mustCreateDoc(t, s, "d", nil)
		p := mustCreateDoc(t, s, "p", nil)
		lp := mustAcquire(t, s, actAlice, store.KindDocument, p.ID, store.GroupEditor, time.Minute)
		_, err := s.MoveRecord(actx(t, actAlice), store.KindDocument, d.ID, store.Move{Parent: &p.ID})
		requireCode(t, err, store.ELEASE)
		// The parent's token is not the moved document's token.
		_, err = s.MoveRecord(actx(t, actAlice), store.KindDocument, d.ID, store.Move{Parent: &p.ID, LeaseToken: lp.Token})
		requireCode(t, err, store.EINVALID)
		requireMessage(t, err, fmt.Sprintf("belongs to document %d", p.ID))
		if _, err := s.MoveRecord(actx(t, actAlice), store.KindDocument, d.ID, store.Move{Parent: &p.ID, ParentLeaseToken: lp.Token}); err != nil {
			t.Fatalf("move under the leased parent with its token: %v", err)
		}
		// Out from under it again needs no token of the parent: the document is not leased.
		if _, err := s.MoveRecord(actx(t, actBob), store.KindDocument, d.ID, store.Move{}); err != nil {
			t.Fatalf("move to the root: %v", err)
		}
		_, err = s.MoveRecord(actx(t, actBob), store.KindDocument, d.ID, store.Move{ParentLeaseToken: lp.Token})
		requireCode(t, err, store.EINVALID)
	})
	t.Run("CreateUnderLeasedParent", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateDoc(t, s, "p", nil)
		q := mustCreateDoc(t, s, "q", nil)
		lp := mustAcquire(t, s, actAlice, store.KindDocument, p.ID, store.GroupEditor, time.Minute)
		lq := mustAcquire(t, s, actAlice, store.KindDocument, q.ID, store.GroupEditor, time.Minute)
		vals := store.Values{"title": "child", "parent_id": p.ID}
		for _, a := range []store.Actor{actAlice, actBob} {
			_, err := s.CreateRecord(actx(t, a), store.KindDocument, vals)
			requireCode(t, err, store.ELEASE)
		}
		_, err := s.CreateRecord(actx(t, actAlice), store.KindDocument, vals, store.CreateOptions{ParentLeaseToken: lq.Token})
		requireCode(t, err, store.EINVALID)
		_, err = s.CreateRecord(actx(t, actAlice), store.KindDocument, store.Values{"title": "root"}, store.CreateOptions{ParentLeaseToken: lp.Token})
		requireCode(t, err, store.EINVALID)
		if n, err := s.CountRecords(t.Context(), store.KindDocument); err != nil || n != 2 {
			t.Fatalf("documents = %d, %v after refused creates; want 2", n, err)
		}
		c, err := s.CreateRecord(actx(t, actAlice), store.KindDocument, vals, store.CreateOptions{ParentLeaseToken: lp.Token})
		if err != nil || c.Fields["parent_id"] != p.ID {
			t.Fatalf("create under the leased parent with its token = %+v, %v", c, err)
		}
		// Under a document nobody leases, no token is needed.
		if _, err := s.CreateRecord(actx(t, actBob), store.KindDocument, store.Values{"title": "free", "parent_id": c.ID}); err != nil {
			t.Fatalf("create under an unleased document: %v", err)
		}
	})
	t.Run("CreateUnderLeasedParentTooDeep", func(t *testing.T) {
		// A parent at the deepest level refuses every child, leased or not: the store says
		// so (EINVALID), rather than ELEASE, which would send the writer to wait for a
		// lease whose end would not let the create through.
		s := fresh(t, open)
		chain := mustChain(t, s, store.MaxDepth, nil)
		deepest := chain[len(chain)-1]
		mustAcquire(t, s, actAlice, store.KindDocument, deepest, store.GroupEditor, time.Minute)
		from := mustLastChangeID(t, s)
		_, err := s.CreateRecord(actx(t, actBob), store.KindDocument, store.Values{"title": "too deep", "parent_id": deepest})
		requireCode(t, err, store.EINVALID)
		requireMessage(t, err, "9 levels deep (max 8)")
		if cs := mustChanges(t, s, from); len(cs) != 0 {
			t.Errorf("changes after a refused create = %+v, want none", cs)
		}
	})
	t.Run("ErrForgedToken", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "P")
		d := mustCreateDoc(t, s, "d", nil)
		forged := strings.Repeat("ab", 32)
		_, err := s.UpdateRecord(actx(t, actAlice), store.KindProduct, p.ID, store.Update{BaseVersion: 1, Set: store.Values{"name": "x"}, LeaseToken: forged})
		requireCode(t, err, store.ELEASE)
		if got, want := err.Error(), fmt.Sprintf("the lease token given for product %d is not valid: this store never granted it", p.ID); got != want {
			t.Errorf("error = %q, want %q", got, want)
		}
		_, err = s.MoveRecord(actx(t, actAlice), store.KindDocument, d.ID, store.Move{LeaseToken: forged})
		requireCode(t, err, store.ELEASE)
		if strings.Contains(err.Error(), "()") {
			t.Errorf("error %q names an empty group", err)
		}
	})
	t.Run("ReleaseOfTakenOverLease", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "P")
		old := mustAcquire(t, s, actAlice, store.KindProduct, p.ID, store.GroupEditor, time.Second)
		waitPast(time.Second)
		mustAcquire(t, s, actBob, store.KindProduct, p.ID, store.GroupEditor, time.Minute)
		rel, err := s.ReleaseLease(actx(t, actAlice), old.Token)
		if err != nil || rel.Ended != "taken over by bob" {
			t.Fatalf("release of a taken-over lease = %+v, %v; want ended: taken over by bob", rel, err)
		}
		if rel.Lease.Kind != store.KindProduct || rel.Lease.RecordID != p.ID || rel.Lease.Group != store.GroupEditor || rel.Lease.Token != "" {
			t.Errorf("released lease = %+v, want product %d's editor lease without a token", rel.Lease, p.ID)
		}
		ls, _, err := s.FindLeases(t.Context(), store.LeaseFilter{Kind: store.KindProduct, RecordID: p.ID})
		if err != nil || len(ls) != 1 || ls[0].Holder != "bob" {
			t.Errorf("leases after alice's release = %+v, %v; want bob's, untouched", ls, err)
		}
	})
}

func testReplayFirst(t *testing.T, open Opener) {
	t.Run("AdjustAfterLeaseTakenOver", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "P") // stock 10
		l := mustAcquire(t, s, actAlice, store.KindProduct, p.ID, store.GroupEditor, time.Minute)
		u := store.Update{Add: map[string]int64{"stock": -3}, IdempotencyKey: "K", LeaseToken: l.Token}
		first := mustSave(t, s, actx(t, actAlice), store.KindProduct, p.ID, u)
		if _, err := s.ReleaseLease(t.Context(), l.Token); err != nil {
			t.Fatal(err)
		}
		mustAcquire(t, s, actBob, store.KindProduct, p.ID, store.GroupEditor, time.Minute)
		from := mustLastChangeID(t, s)
		// The retry learns that it was applied, although its lease is gone.
		again, err := s.UpdateRecord(actx(t, actAlice), store.KindProduct, p.ID, u)
		if err != nil {
			t.Fatalf("retry after the lease was taken over: %v, want the replay", err)
		}
		if !again.Replayed || again.Version != first.Version || again.Record.Fields["stock"] != int64(7) {
			t.Errorf("retry = replayed %v version %d stock %v, want replayed, version %d, stock 7",
				again.Replayed, again.Version, again.Record.Fields["stock"], first.Version)
		}
		if cs := mustChanges(t, s, from); len(cs) != 0 {
			t.Errorf("the replay wrote %+v", cs)
		}
	})
	t.Run("SetAfterVersionMovedOn", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "P")
		u := store.Update{BaseVersion: 1, Set: store.Values{"price": int64(100)}, IdempotencyKey: "S"}
		first := mustSave(t, s, actx(t, actAlice), store.KindProduct, p.ID, u)
		mustSave(t, s, actx(t, actBob), store.KindProduct, p.ID, store.Update{BaseVersion: 2, Set: store.Values{"name": "bob's"}})
		again, err := s.UpdateRecord(actx(t, actAlice), store.KindProduct, p.ID, u)
		if err != nil || !again.Replayed || again.Version != first.Version || again.Record.Version != 3 {
			t.Fatalf("retry at a stale base = %+v, %v; want replayed (version %d, record now at 3)", again, err, first.Version)
		}
	})
	t.Run("StoredResultSameEverywhere", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "P")
		mustSave(t, s, actx(t, actAlice), store.KindProduct, p.ID, store.Update{Add: map[string]int64{"stock": 1}, IdempotencyKey: "R1"})
		mustSave(t, s, actx(t, actAlice), store.KindProduct, p.ID, store.Update{Add: map[string]int64{"stock": 0}, IdempotencyKey: "R2"})
		for key, want := range map[string]string{
			"R1": fmt.Sprintf(`{"kind":"product","id":%d,"version":2}`, p.ID),
			"R2": fmt.Sprintf(`{"kind":"product","id":%d,"version":2,"unchanged":true}`, p.ID),
		} {
			k, err := s.FindKey(t.Context(), store.ScopeAPI, key)
			if err != nil || k.Status != store.KeyCompleted || string(k.Result) != want {
				t.Errorf("key %s = %+v (result %s), %v; want COMPLETED with %s", key, k, k.Result, err, want)
			}
		}
		// The unchanged save's retry is a replay of "no change".
		again := mustSave(t, s, actx(t, actAlice), store.KindProduct, p.ID, store.Update{Add: map[string]int64{"stock": 0}, IdempotencyKey: "R2"})
		if !again.Replayed || !again.Unchanged || again.Version != 2 {
			t.Errorf("retry of the unchanged save = %+v, want a replay of no change at version 2", again)
		}
	})
	t.Run("ErrOtherRequestStillRefused", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "P")
		l := mustAcquire(t, s, actAlice, store.KindProduct, p.ID, store.GroupEditor, time.Minute)
		mustSave(t, s, actx(t, actAlice), store.KindProduct, p.ID, store.Update{Add: map[string]int64{"stock": 1}, IdempotencyKey: "K", LeaseToken: l.Token})
		_, err := s.UpdateRecord(actx(t, actBob), store.KindProduct, p.ID, store.Update{Add: map[string]int64{"stock": 2}, IdempotencyKey: "K"})
		requireCode(t, err, store.EINVALID)
	})
	// The key's answer comes before the record's: a key used for another request is refused
	// as such also when the record is gone, and a replay of a deleted record's save says the
	// record is gone.
	t.Run("ErrOtherRequestOnDeletedRecord", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "P")
		mustSave(t, s, actx(t, actAlice), store.KindProduct, p.ID, store.Update{Add: map[string]int64{"stock": 1}, IdempotencyKey: "K"})
		if _, err := s.DeleteRecord(actx(t, actAlice), store.KindProduct, p.ID, store.Delete{ExpectVersion: 2}); err != nil {
			t.Fatal(err)
		}
		_, err := s.UpdateRecord(actx(t, actAlice), store.KindProduct, p.ID, store.Update{Add: map[string]int64{"stock": 2}, IdempotencyKey: "K"})
		requireCode(t, err, store.EINVALID)
		_, err = s.UpdateRecord(actx(t, actAlice), store.KindProduct, p.ID, store.Update{Add: map[string]int64{"stock": 1}, IdempotencyKey: "K"})
		requireCode(t, err, store.ENOTFOUND)
	})
}

// testSameWords checks that every store refuses a save in the same words: the sequence and
// its messages are store's (RunUpdate), not a backend's.
func testSameWords(t *testing.T, open Opener) {
	s := fresh(t, open)
	p := mustCreateProduct(t, s, "P")
	for _, tc := range []struct {
		name string
		u    store.Update
		want string
	}{
		{"UnknownField", store.Update{BaseVersion: 1, Set: store.Values{"colour": "red"}}, ""},
		{"NoVersion", store.Update{Set: store.Values{"name": "x"}}, ""},
		{"Missing", store.Update{Add: map[string]int64{"stock": 1}}, "product 999999 not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := p.ID
			if tc.want != "" {
				id = 999999
			}
			_, err := s.UpdateRecord(actx(t, actAlice), store.KindProduct, id, tc.u)
			if err == nil {
				t.Fatal("save accepted")
			}
			want := tc.want
			if want == "" {
				want = s.Registry().CheckUpdate(store.KindProduct, store.RoleEditor, tc.u).Error()
			}
			if err.Error() != want {
				t.Errorf("error = %q, want %q", err, want)
			}
		})
	}
}

func testNoEmptyVersions(t *testing.T, open Opener) {
	t.Run("AdjustByZero", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "P")
		from := mustLastChangeID(t, s)
		res := mustSave(t, s, actx(t, actAlice), store.KindProduct, p.ID, store.Update{Add: map[string]int64{"stock": 0}})
		if !res.Unchanged || res.Record.Version != 1 || res.Version != 1 || res.Record.Fields["stock"] != int64(10) {
			t.Errorf("adjust by 0 = %+v, want unchanged at version 1", res)
		}
		requireNothingWritten(t, s, store.KindProduct, p.ID, 1, from)
		if vs := mustHistory(t, s, store.KindProduct, p.ID); len(vs) != 1 {
			t.Errorf("history = %d versions, want 1 (the create)", len(vs))
		}
	})
	t.Run("SetEqualValues", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "P")
		from := mustLastChangeID(t, s)
		same := store.Values{"name": p.Fields["name"], "price": p.Fields["price"], "categories": []string{"tools"}}
		res := mustSave(t, s, actx(t, actAlice), store.KindProduct, p.ID, store.Update{BaseVersion: 1, Set: same})
		if !res.Unchanged || res.Record.Version != 1 {
			t.Errorf("set of equal values = %+v, want unchanged at version 1", res)
		}
		res, err := s.LockedUpdate(actx(t, actAlice), store.KindProduct, p.ID, func(r *store.Record) (store.Update, error) {
			return store.Update{Set: store.Values{"name": r.Fields["name"]}, Add: map[string]int64{"stock": 0}}, nil
		})
		if err != nil || !res.Unchanged {
			t.Errorf("locked update of equal values = %+v, %v; want unchanged", res, err)
		}
		requireNothingWritten(t, s, store.KindProduct, p.ID, 1, from)
		// Equal fields beside a changed one are not written and not reported as changed.
		mustSave(t, s, actx(t, actAlice), store.KindProduct, p.ID, store.Update{BaseVersion: 1, Set: store.Values{"name": p.Fields["name"], "price": int64(5)}})
		cs := mustChanges(t, s, from)
		if len(cs) != 1 || strings.Join(cs[0].Fields, ",") != "price" {
			t.Errorf("changes = %+v, want one save of price only", cs)
		}
		if vs := mustHistory(t, s, store.KindProduct, p.ID); len(vs) != 2 || strings.Join(vs[0].Fields, ",") != "price" {
			t.Errorf("history = %+v, want the create and a save of price", vs)
		}
	})
	t.Run("ErrStaleBaseEqualValues", func(t *testing.T) {
		// A read-modify-write client (read price, write price+1 at that version) must hear
		// that it read a stale version even when another writer's equal value stands in for
		// its own: the version check comes before "no change".
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "P")
		mustSave(t, s, actx(t, actBob), store.KindProduct, p.ID, store.Update{BaseVersion: 1, Set: store.Values{"price": int64(100)}})
		from := mustLastChangeID(t, s)
		_, err := s.UpdateRecord(actx(t, actAlice), store.KindProduct, p.ID, store.Update{BaseVersion: 1, Set: store.Values{"price": int64(100)}})
		requireCode(t, err, store.ECONFLICT)
		if ce := asConflict(t, err); ce.Current.Version != 2 || ce.Current.Fields["price"] != int64(100) {
			t.Errorf("conflict = %+v, want the current record (v2, price 100)", ce.Current)
		}
		requireNothingWritten(t, s, store.KindProduct, p.ID, 2, from)
		// From the current version the same set is "no change".
		res := mustSave(t, s, actx(t, actAlice), store.KindProduct, p.ID, store.Update{BaseVersion: 2, Set: store.Values{"price": int64(100)}})
		if !res.Unchanged || res.Record.Version != 2 {
			t.Errorf("set of the current value at the current version = %+v, want unchanged at v2", res)
		}
		requireNothingWritten(t, s, store.KindProduct, p.ID, 2, from)
	})
	t.Run("MoveToCurrentParent", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateDoc(t, s, "p", nil)
		c := mustCreateDoc(t, s, "c", &p.ID)
		from := mustLastChangeID(t, s)
		for _, tc := range []struct {
			id     int64
			parent *int64
		}{{p.ID, nil}, {c.ID, &p.ID}} {
			res, err := s.MoveRecord(actx(t, actAlice), store.KindDocument, tc.id, store.Move{Parent: tc.parent})
			if err != nil || !res.Unchanged || res.Record.Version != 1 || res.Record.ID != tc.id {
				t.Errorf("move %d to where it is = %+v, %v; want unchanged at version 1", tc.id, res, err)
			}
		}
		requireNothingWritten(t, s, store.KindDocument, c.ID, 1, from)
		if vs := mustHistory(t, s, store.KindDocument, p.ID); len(vs) != 1 {
			t.Errorf("history = %d versions, want 1", len(vs))
		}
	})
}
