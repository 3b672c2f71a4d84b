package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
)

func mustHistory(t *testing.T, s store.Store, kind store.Kind, id int64) []store.Version {
	t.Helper()
	vs, err := s.FindHistory(t.Context(), kind, id)
	if err != nil {
		t.Fatalf("history of %s %d: %v", kind, id, err)
	}
	return vs
}

func mustOps(t *testing.T, s store.Store, kind store.Kind, id int64) []store.Change {
	t.Helper()
	cs, err := s.FindOps(t.Context(), kind, id)
	if err != nil {
		t.Fatalf("ops of %s %d: %v", kind, id, err)
	}
	return cs
}

func versionsOf(vs []store.Version) []int64 {
	var out []int64
	for _, v := range vs {
		out = append(out, v.Version)
	}
	return out
}

func opVersions(cs []store.Change) []int64 {
	var out []int64
	for _, c := range cs {
		out = append(out, c.Version)
	}
	return out
}

func testHistory(t *testing.T, open Opener) {
	t.Run("EditorSaveAddsVersion", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "P")
		mustSave(t, s, actx(t, actBob), store.KindProduct, p.ID, store.Update{BaseVersion: 1, Set: store.Values{"price": int64(1), "name": "n"}})
		vs := mustHistory(t, s, store.KindProduct, p.ID)
		if got, want := versionsOf(vs), []int64{2, 1}; !slices.Equal(got, want) {
			t.Fatalf("history versions = %v, want %v (newest first)", got, want)
		}
		v := vs[0]
		if v.Actor != "bob" || v.At.IsZero() || !slices.Equal(v.Fields, []string{"name", "price"}) {
			t.Errorf("version 2 = actor %q at %v fields %v, want bob, a time, [name price]", v.Actor, v.At, v.Fields)
		}
		want := mustFind(t, s, store.KindProduct, p.ID).Fields
		for name, w := range want {
			if !store.Equal(v.Snapshot[name], w) {
				t.Errorf("snapshot %s = %#v, want %#v", name, v.Snapshot[name], w)
			}
		}
		if vs[1].Actor != "alice" || vs[1].Snapshot["name"] != p.Fields["name"] {
			t.Errorf("version 1 = %+v, want alice's create", vs[1])
		}
		if ops := mustOps(t, s, store.KindProduct, p.ID); len(ops) != 0 {
			t.Errorf("ops = %+v, want none for editor saves", ops)
		}
	})
	t.Run("SystemWriteAddsOpOnly", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "P")
		mustSave(t, s, actx(t, actWorker), store.KindProduct, p.ID, store.Update{BaseVersion: 1, Set: store.Values{"checksum": "abc"}})
		mustSave(t, s, actx(t, actWorker), store.KindProduct, p.ID, store.Update{Add: map[string]int64{"stock": 1}})
		if got, want := versionsOf(mustHistory(t, s, store.KindProduct, p.ID)), []int64{1}; !slices.Equal(got, want) {
			t.Errorf("history versions = %v, want %v", got, want)
		}
		ops := mustOps(t, s, store.KindProduct, p.ID)
		if got, want := opVersions(ops), []int64{3, 2}; !slices.Equal(got, want) {
			t.Fatalf("op versions = %v, want %v (newest first)", got, want)
		}
		if op := ops[1]; op.Actor != "worker" || op.Role != store.RoleSystem || op.History || !slices.Equal(op.Fields, []string{"checksum"}) {
			t.Errorf("op = %+v, want worker/system checksum without history", op)
		}
	})
	t.Run("Empty", func(t *testing.T) {
		s := fresh(t, open)
		if vs := mustHistory(t, s, store.KindDocument, 99); len(vs) != 0 {
			t.Errorf("history of a missing record = %v, want none", vs)
		}
	})
}

func testSuppression(t *testing.T, open Opener) {
	t.Run("Scopes", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "P")
		base := actx(t, actAlice)
		off := store.WithoutHistory(base)
		steps := []struct {
			name    string
			ctx     context.Context
			history bool
		}{
			{"plain", base, true},
			{"WithoutHistory", off, false},
			{"WithoutHistory inside WithoutHistory", store.WithoutHistory(off), false},
			{"WithHistory inside WithoutHistory", store.WithHistory(off), true},
			{"WithoutHistory inside WithHistory inside WithoutHistory", store.WithoutHistory(store.WithHistory(off)), false},
			{"outer scope again", off, false},
			{"base again", base, true},
		}
		for i, st := range steps {
			v := int64(i + 1)
			mustSave(t, s, st.ctx, store.KindProduct, p.ID, store.Update{BaseVersion: v, Set: store.Values{"name": st.name}})
			hist := slices.Contains(versionsOf(mustHistory(t, s, store.KindProduct, p.ID)), v+1)
			ops := slices.Contains(opVersions(mustOps(t, s, store.KindProduct, p.ID)), v+1)
			if hist != st.history || ops == st.history {
				t.Errorf("%s: history version %v, op log %v; want history %v", st.name, hist, ops, st.history)
			}
		}
	})
	t.Run("ConcurrentEditorDuringSuppressedWrite", func(t *testing.T) {
		s := fresh(t, open)
		quiet := mustCreateProduct(t, s, "QUIET")
		loud := mustCreateProduct(t, s, "LOUD")
		quietCtx := store.WithoutHistory(actx(t, actAlice))
		loudCtx := actx(t, actBob)
		const n = 20
		var wg sync.WaitGroup
		errs := make(chan error, 2*n)
		wg.Add(2)
		go func() {
			defer wg.Done()
			for range n {
				if _, err := s.UpdateRecord(quietCtx, store.KindProduct, quiet.ID, store.Update{Add: map[string]int64{"stock": 1}}); err != nil {
					errs <- err
				}
			}
		}()
		go func() {
			defer wg.Done()
			for range n {
				if _, err := s.UpdateRecord(loudCtx, store.KindProduct, loud.ID, store.Update{Add: map[string]int64{"stock": 1}}); err != nil {
					errs <- err
				}
			}
		}()
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("concurrent save: %v", err)
		}
		if got := len(mustHistory(t, s, store.KindProduct, quiet.ID)); got != 1 {
			t.Errorf("suppressed record has %d history versions, want 1 (its create)", got)
		}
		if got := len(mustOps(t, s, store.KindProduct, quiet.ID)); got != n {
			t.Errorf("suppressed record has %d ops, want %d", got, n)
		}
		if got := len(mustHistory(t, s, store.KindProduct, loud.ID)); got != n+1 {
			t.Errorf("concurrent editor's record has %d history versions, want %d", got, n+1)
		}
		if got := len(mustOps(t, s, store.KindProduct, loud.ID)); got != 0 {
			t.Errorf("concurrent editor's record has %d ops, want 0", got)
		}
	})
	t.Run("SystemNeverKeepsHistory", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "P")
		mustSave(t, s, store.WithHistory(actx(t, actWorker)), store.KindProduct, p.ID, store.Update{BaseVersion: 1, Set: store.Values{"checksum": "x"}})
		if got := len(mustHistory(t, s, store.KindProduct, p.ID)); got != 1 {
			t.Errorf("history versions = %d, want 1: a system write inside WithHistory adds none", got)
		}
	})
}

// testHistoryRebuild makes many saves of different kinds to a document and a product and
// checks that every history version reads back exactly as FindRecord returned the record
// right after that save: through FindVersion and through FindHistory. The saves end many
// chains (store.MaxChain), patch long text fields, and interleave writes that keep no
// history (system writes, WithoutHistory, relative adds), whose values no history row of
// their own holds.
func testHistoryRebuild(t *testing.T, open Opener) {
	s := fresh(t, open)
	rng := rand.New(rand.NewPCG(11, 17))
	editor, quiet, system := actx(t, actAlice), store.WithoutHistory(actx(t, actBob)), actx(t, actWorker)
	longText := func(tag string, lines int) string {
		var b strings.Builder
		for i := range lines {
			fmt.Fprintf(&b, "%s line %d: %s\n", tag, i, strings.Repeat("é–x", 10))
		}
		return b.String()
	}
	// editLines changes, inserts or deletes a few lines somewhere in a long text.
	editLines := func(text string) string {
		lines := strings.SplitAfter(text, "\n")
		for range 1 + rng.IntN(3) {
			i := rng.IntN(len(lines))
			switch rng.IntN(3) {
			case 0:
				lines[i] = fmt.Sprintf("changed %d ✓\n", rng.IntN(1000))
			case 1:
				lines = slices.Insert(lines, i, fmt.Sprintf("inserted %d\n", rng.IntN(1000)))
			default:
				if len(lines) > 10 {
					lines = slices.Delete(lines, i, i+1)
				}
			}
		}
		return strings.Join(lines, "")
	}
	parent := mustCreateDoc(t, s, "Parent", nil)
	doc, err := s.CreateRecord(editor, store.KindDocument, store.Values{"title": "Doc", "body": longText("body", 300), "tags": []string{"a"}})
	if err != nil {
		t.Fatal(err)
	}
	prod := mustCreateProduct(t, s, "P")
	want := map[store.Kind]map[int64]*store.Record{
		store.KindDocument: {1: doc},
		store.KindProduct:  {1: prod},
	}
	cur := map[store.Kind]*store.Record{store.KindDocument: doc, store.KindProduct: prod}
	ids := map[store.Kind]int64{store.KindDocument: doc.ID, store.KindProduct: prod.ID}
	save := func(ctx context.Context, kind store.Kind, history bool, u store.Update) {
		t.Helper()
		if u.BaseVersion == 0 && len(u.Set) > 0 {
			u.BaseVersion = cur[kind].Version
		}
		res := mustSave(t, s, ctx, kind, ids[kind], u)
		cur[kind] = mustFind(t, s, kind, ids[kind])
		if history {
			want[kind][res.Record.Version] = cur[kind]
		}
	}
	for step := range 200 {
		d, p := cur[store.KindDocument].Fields, cur[store.KindProduct].Fields
		switch step % 16 {
		case 0, 5, 11:
			save(editor, store.KindDocument, true, store.Update{Set: store.Values{"body": editLines(d["body"].(string))}})
		case 1:
			save(editor, store.KindDocument, true, store.Update{Set: store.Values{"title": fmt.Sprintf("Title %d", step)}})
		case 2:
			save(system, store.KindDocument, false, store.Update{Set: store.Values{"word_count": int64(step), "checksum": fmt.Sprint(step)}})
		case 3:
			save(editor, store.KindDocument, true, store.Update{Set: store.Values{"tags": []string{"a", fmt.Sprint("t", step)}}})
		case 4:
			// A body edit without history, then an editor save: that version must hold the
			// new body, which no history row holds yet, whether the save edits the body
			// again (no patch against the quiet body will do) or another field.
			save(quiet, store.KindDocument, false, store.Update{Set: store.Values{"body": editLines(d["body"].(string))}})
			if step%32 == 4 {
				save(editor, store.KindDocument, true, store.Update{Set: store.Values{"title": fmt.Sprintf("After quiet %d", step)}})
			} else {
				save(editor, store.KindDocument, true, store.Update{Set: store.Values{"body": editLines(cur[store.KindDocument].Fields["body"].(string))}})
			}
		case 6:
			var to *int64
			if d["parent_id"] == nil {
				to = &parent.ID
			}
			moved, err := s.MoveRecord(editor, store.KindDocument, doc.ID, store.Move{Parent: to})
			if err != nil {
				t.Fatalf("move: %v", err)
			}
			cur[store.KindDocument] = mustFind(t, s, store.KindDocument, doc.ID)
			want[store.KindDocument][moved.Version] = cur[store.KindDocument]
		case 7:
			if rng.IntN(2) == 0 {
				save(editor, store.KindDocument, true, store.Update{Set: store.Values{"body": "short now\n"}})
			} else {
				save(editor, store.KindDocument, true, store.Update{Set: store.Values{"body": longText(fmt.Sprint("new", step), 200)}})
			}
		case 8:
			save(editor, store.KindProduct, true, store.Update{Set: store.Values{"description": editLines(longText("desc", 150)), "price": int64(100 + step)}})
		case 9:
			save(system, store.KindProduct, false, store.Update{Set: store.Values{"search_index": longText(fmt.Sprint("idx", step), 120)}})
			save(system, store.KindProduct, false, store.Update{Add: map[string]int64{"stock": -2}})
		case 10:
			save(editor, store.KindProduct, true, store.Update{Set: store.Values{"description": editLines(p["description"].(string))}})
		case 12:
			save(editor, store.KindProduct, true, store.Update{Add: map[string]int64{"stock": 5}})
		case 13:
			save(editor, store.KindProduct, true, store.Update{Set: store.Values{"categories": []string{fmt.Sprint("c", step), "x"}, "name": "Name é " + fmt.Sprint(step)}})
		case 14:
			save(system, store.KindProduct, false, store.Update{Set: store.Values{"last_sync_at": time.Date(2026, 1, 2, 3, 4, 5, 678000000, time.UTC), "thumbnail": "t.png"}})
			save(quiet, store.KindProduct, false, store.Update{Set: store.Values{"availability": "backorder"}})
		case 15:
			save(editor, store.KindProduct, true, store.Update{Set: store.Values{"availability": "in_stock"}})
		}
	}
	if n := len(want[store.KindDocument]); n < 90 {
		t.Fatalf("only %d document versions, want at least 90", n)
	}
	for kind, versions := range want {
		id := ids[kind]
		hist := mustHistory(t, s, kind, id)
		if len(hist) != len(versions) {
			t.Errorf("%s has %d history versions, want %d", kind, len(hist), len(versions))
		}
		for _, h := range hist {
			w, ok := versions[h.Version]
			if !ok {
				t.Errorf("%s history has version %d, which no editor save wrote", kind, h.Version)
				continue
			}
			requireSameRecord(t, s.Registry(), kind, fmt.Sprintf("FindHistory %s v%d", kind, h.Version), h.Snapshot, w.Fields)
		}
		for v, w := range versions {
			got, err := s.FindVersion(t.Context(), kind, id, v)
			if err != nil {
				t.Fatalf("FindVersion %s v%d: %v", kind, v, err)
			}
			if got.Version != v || got.Actor != w.UpdatedBy || !got.At.Equal(w.UpdatedAt) {
				t.Errorf("FindVersion %s v%d = version %d by %s at %v, want by %s at %v", kind, v, got.Version, got.Actor, got.At, w.UpdatedBy, w.UpdatedAt)
			}
			requireSameRecord(t, s.Registry(), kind, fmt.Sprintf("FindVersion %s v%d", kind, v), got.Snapshot, w.Fields)
		}
		// A version written without history has no history version to read.
		for v := int64(1); v <= cur[kind].Version; v++ {
			if _, ok := versions[v]; !ok {
				_, err := s.FindVersion(t.Context(), kind, id, v)
				requireCode(t, err, store.ENOTFOUND)
			}
		}
		_, err := s.FindVersion(t.Context(), kind, id, cur[kind].Version+1)
		requireCode(t, err, store.ENOTFOUND)
	}
	_, err = s.FindVersion(t.Context(), store.KindDocument, 9999, 1)
	requireCode(t, err, store.ENOTFOUND)
}

// requireSameRecord fails unless got holds exactly the values of want, compared in their
// encoded form (text byte for byte, sets item for item, times to the nanosecond).
func requireSameRecord(t *testing.T, reg *store.Registry, kind store.Kind, what string, got, want store.Values) {
	t.Helper()
	for _, f := range reg.Fields(kind) {
		g, w := got[f.Name], want[f.Name]
		gb, _ := json.Marshal(f.Export(g))
		wb, _ := json.Marshal(f.Export(w))
		if !bytes.Equal(gb, wb) || !store.Equal(g, w) {
			t.Errorf("%s: %s = %.80q, want %.80q", what, f.Name, gb, wb)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%s: %d fields, want %d", what, len(got), len(want))
	}
}

// testHistoryPage pages a history that spans several chains (snapshots and deltas, text
// patches among them) and an operation log, and checks that the pages, with and without
// snapshots, put together are the whole history, and that a query Check refuses is
// refused.
func testHistoryPage(t *testing.T, open Opener) {
	s := fresh(t, open)
	d := mustCreateDoc(t, s, "Paged", nil)
	body := strings.Repeat("a steady line of text\n", 220) // long enough to be stored as patches
	version := d.Version
	for i := range 40 {
		set := store.Values{"body": body + strings.Repeat(fmt.Sprintf("edit %d\n", i), 1+i%9*40)}
		if i%4 == 3 {
			set = store.Values{"title": fmt.Sprintf("Paged %d", i)}
		}
		version = mustSave(t, s, actx(t, actBob), store.KindDocument, d.ID, store.Update{BaseVersion: version, Set: set}).Record.Version
		if i%5 == 4 {
			version = mustSave(t, s, actx(t, actWorker), store.KindDocument, d.ID, store.Update{BaseVersion: version,
				Set: store.Values{"word_count": int64(i)}}).Record.Version
		}
	}
	full := mustHistory(t, s, store.KindDocument, d.ID)
	ops := mustOps(t, s, store.KindDocument, d.ID)
	if len(full) != 41 || len(ops) != 8 {
		t.Fatalf("history %d versions and %d ops, want 41 and 8", len(full), len(ops))
	}
	ctx := t.Context()
	for _, snaps := range []bool{false, true} {
		var got []store.Version
		q := store.HistoryQuery{Limit: 7, Snapshots: snaps}
		for pages := 0; ; pages++ {
			if pages > len(full) {
				t.Fatalf("snapshots %v: paging does not end", snaps)
			}
			page, err := s.FindHistoryPage(ctx, store.KindDocument, d.ID, q)
			if err != nil {
				t.Fatalf("history page %+v: %v", q, err)
			}
			if len(page) > q.Limit {
				t.Fatalf("history page %+v holds %d versions", q, len(page))
			}
			if len(page) == 0 {
				break
			}
			got = append(got, page...)
			q.Before = page[len(page)-1].Version
		}
		if g, w := versionsOf(got), versionsOf(full); !slices.Equal(g, w) {
			t.Fatalf("snapshots %v: paged versions = %v, want %v", snaps, g, w)
		}
		for i, v := range got {
			w := full[i]
			if v.Actor != w.Actor || !v.At.Equal(w.At) || !slices.Equal(v.Fields, w.Fields) || v.Event != w.Event {
				t.Errorf("snapshots %v: v%d = %s %v %v %q, want %s %v %v %q", snaps, v.Version,
					v.Actor, v.At, v.Fields, v.Event, w.Actor, w.At, w.Fields, w.Event)
			}
			switch {
			case !snaps && v.Snapshot != nil:
				t.Errorf("v%d has a snapshot, none asked for", v.Version)
			case snaps:
				requireSameRecord(t, s.Registry(), store.KindDocument, fmt.Sprintf("page v%d", v.Version), v.Snapshot, w.Snapshot)
			}
		}
	}
	t.Run("Bounds", func(t *testing.T) {
		since, before := full[30].Version, full[4].Version
		page, err := s.FindHistoryPage(ctx, store.KindDocument, d.ID, store.HistoryQuery{Since: since, Before: before, Snapshots: true})
		if err != nil {
			t.Fatal(err)
		}
		if g, w := versionsOf(page), versionsOf(full[5:30]); !slices.Equal(g, w) {
			t.Errorf("versions above %d and below %d = %v, want %v", since, before, g, w)
		}
		opsPage, err := s.FindOpsPage(ctx, store.KindDocument, d.ID, store.HistoryQuery{Since: since, Before: before, Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		var want []int64
		for _, op := range ops {
			if op.Version > since && op.Version < before && len(want) < 3 {
				want = append(want, op.Version)
			}
		}
		if g := opVersions(opsPage); !slices.Equal(g, want) {
			t.Errorf("ops above %d and below %d, 3 at most = %v, want %v", since, before, g, want)
		}
	})
	t.Run("Refused", func(t *testing.T) {
		for _, q := range []store.HistoryQuery{{Before: -1}, {Since: -2}, {Limit: -1}, {Since: 5, Before: 5}, {Since: 9, Before: 3}} {
			if _, err := s.FindHistoryPage(ctx, store.KindDocument, d.ID, q); store.ErrorCode(err) != store.EINVALID {
				t.Errorf("history page %+v: err = %v, want EINVALID", q, err)
			}
			if _, err := s.FindOpsPage(ctx, store.KindDocument, d.ID, q); store.ErrorCode(err) != store.EINVALID {
				t.Errorf("ops page %+v: err = %v, want EINVALID", q, err)
			}
		}
	})
}
