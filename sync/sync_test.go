package sync_test

import (
	"context"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/postgres"
	"github.com/tandem-editor/tandem/store/postgres/pgtest"
	"github.com/tandem-editor/tandem/store/sqlite"
	tsync "github.com/tandem-editor/tandem/sync"
)

// sources opens each kind of source store a working copy is tested against.
var sources = map[string]func(t *testing.T) store.Store{
	"sqlite": func(t *testing.T) store.Store {
		db := openNew(t, filepath.Join(t.TempDir(), "source.db"))
		t.Cleanup(func() { db.Close() })
		return db
	},
	"postgres": func(t *testing.T) store.Store {
		dsn := pgtest.DSN(t)
		db, err := postgres.Open(context.Background(), dsn, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	},
}

func as(name string) context.Context {
	return store.WithActor(context.Background(), store.Actor{Name: name, Role: store.RoleEditor})
}

// mustClone clones src into a new SQLite working copy.
func mustClone(t *testing.T, src store.Store, name string) *sqlite.DB {
	t.Helper()
	db := openNew(t, filepath.Join(t.TempDir(), name+".db"))
	t.Cleanup(func() { db.Close() })
	if _, err := tsync.Clone(context.Background(), src, db, tsync.CloneOptions{Source: "test source"}); err != nil {
		t.Fatalf("clone %s: %v", name, err)
	}
	return db
}

func mustSync(t *testing.T, src store.Store, wc store.WorkingCopy) *tsync.Report {
	t.Helper()
	rep, err := tsync.Sync(context.Background(), src, wc)
	if err != nil {
		t.Fatalf("sync: %v", err)
	}
	return rep
}

func mustGet(t *testing.T, st store.Store, kind store.Kind, id int64) *store.Record {
	t.Helper()
	r, err := st.FindRecord(context.Background(), kind, id)
	if err != nil {
		t.Fatalf("find %s %d: %v", kind, id, err)
	}
	return r
}

// mustSet saves absolute values on st on the record's current version.
func mustSet(t *testing.T, st store.Store, who string, kind store.Kind, id int64, vals store.Values) {
	t.Helper()
	r := mustGet(t, st, kind, id)
	if _, err := st.UpdateRecord(as(who), kind, id, store.Update{BaseVersion: r.Version, Set: vals}); err != nil {
		t.Fatalf("%s sets %s %d: %v", who, kind, id, err)
	}
}

func mustAdjust(t *testing.T, st store.Store, who string, id int64, d int64) {
	t.Helper()
	if _, err := st.UpdateRecord(as(who), store.KindProduct, id, store.Update{Add: map[string]int64{"stock": d}}); err != nil {
		t.Fatalf("%s adjusts product %d: %v", who, id, err)
	}
}

func mustMove(t *testing.T, st store.Store, who string, id, parent int64) {
	t.Helper()
	if _, err := st.MoveRecord(as(who), store.KindDocument, id, store.Move{Parent: &parent}); err != nil {
		t.Fatalf("%s moves document %d under %d: %v", who, id, parent, err)
	}
}

const body = "one\n\ntwo\n\nthree\n\nfour\n\nfive\n"

// fixture is the source's starting state: the ids of what the scenario uses.
type fixture struct {
	counter, disjoint, same, leased int64 // products
	text, overlap                   int64 // documents with body
	root, x, y                      int64 // x and y are siblings under root
}

func seed(t *testing.T, src store.Store) fixture {
	t.Helper()
	ctx := as("root")
	prod := func(sku string) int64 {
		r, err := src.CreateRecord(ctx, store.KindProduct, store.Values{"sku": sku, "name": sku, "price": int64(1000), "stock": int64(50)})
		if err != nil {
			t.Fatal(err)
		}
		return r.ID
	}
	doc := func(title string, parent int64) int64 {
		vals := store.Values{"title": title, "body": body}
		if parent != 0 {
			vals["parent_id"] = parent
		}
		r, err := src.CreateRecord(ctx, store.KindDocument, vals)
		if err != nil {
			t.Fatal(err)
		}
		return r.ID
	}
	var f fixture
	f.counter, f.disjoint, f.same, f.leased = prod("CNT-1"), prod("DIS-1"), prod("SAM-1"), prod("LEA-1")
	f.text, f.overlap = doc("text", 0), doc("overlap", 0)
	f.root = doc("root", 0)
	f.x, f.y = doc("x", f.root), doc("y", f.root)
	return f
}

// TestSync_Converges runs every combination the issue names on two working copies and direct
// writers on the source, syncing the copies in both orders.
func TestSync_Converges(t *testing.T) {
	for name, open := range sources {
		for _, order := range []string{"AB", "BA"} {
			t.Run(name+"/"+order, func(t *testing.T) { testConverges(t, open(t), order) })
		}
	}
}

func testConverges(t *testing.T, src store.Store, order string) {
	ctx := context.Background()
	f := seed(t, src)
	a, b := mustClone(t, src, "a"), mustClone(t, src, "b")
	copies := map[byte]*sqlite.DB{'A': a, 'B': b}

	// Offline work in both copies and direct writes on the source.
	mustAdjust(t, a, "alice", f.counter, -3)
	mustAdjust(t, a, "alice", f.counter, -2)
	mustAdjust(t, b, "bob", f.counter, +7)
	mustAdjust(t, src, "carol", f.counter, -1)

	mustSet(t, a, "alice", store.KindProduct, f.disjoint, store.Values{"name": "from alice"})
	mustSet(t, b, "bob", store.KindProduct, f.disjoint, store.Values{"price": int64(1234)})
	mustSet(t, src, "carol", store.KindProduct, f.disjoint, store.Values{"description": "from carol"})

	mustSet(t, a, "alice", store.KindProduct, f.same, store.Values{"price": int64(1100)})
	mustSet(t, b, "bob", store.KindProduct, f.same, store.Values{"price": int64(1200)})

	mustSet(t, a, "alice", store.KindDocument, f.text, store.Values{"body": strings.Replace(body, "one", "ONE (alice)", 1)})
	mustSet(t, src, "carol", store.KindDocument, f.text, store.Values{"body": strings.Replace(body, "five", "FIVE (carol)", 1)})

	mustSet(t, a, "alice", store.KindDocument, f.overlap, store.Values{"body": strings.Replace(body, "three", "THREE (alice)", 1)})
	mustSet(t, b, "bob", store.KindDocument, f.overlap, store.Values{"body": strings.Replace(body, "three", "three (bob)", 1)})

	mustMove(t, a, "alice", f.x, f.y)
	mustMove(t, b, "bob", f.y, f.x)

	lease, err := src.AcquireLease(as("dave"), store.LeaseRequest{Kind: store.KindProduct, RecordID: f.leased, Group: store.GroupEditor, TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	mustSet(t, a, "alice", store.KindProduct, f.leased, store.Values{"name": "alice while leased"})

	first, second := copies[order[0]], copies[order[1]]
	rep1 := mustSync(t, src, first)
	rep2 := mustSync(t, src, second)

	// The second copy's own move waits as a conflict; the first copy's move, which the
	// source took, must not close a loop with it in the second copy's tree meanwhile.
	assertAcyclic(t, second)

	// The first to sync meets no collision of the copies; only A's leased edit waits.
	if len(rep1.Conflicts) != 0 {
		t.Errorf("first sync: conflicts %v, want none", describe(rep1.Conflicts))
	}
	// The second meets the first's value of every field both changed.
	want2 := []string{
		"document " + itoa(f.overlap) + ": body",
		"document " + itoa(f.y) + ": parent_id",
		"product " + itoa(f.same) + ": price",
	}
	if order == "BA" {
		want2[1] = "document " + itoa(f.x) + ": parent_id"
		slices.Sort(want2)
	}
	if got := fieldConflicts(rep2.Conflicts); !slices.Equal(got, want2) {
		t.Errorf("second sync: conflicts %v, want %v", got, want2)
	}
	repA := rep1
	if order == "BA" {
		repA = rep2
	}
	if len(repA.Waits) != 1 || repA.Waits[0].ID != f.leased || repA.Waits[0].Holder != "dave" {
		t.Errorf("A's sync: waits %+v, want product %d held by dave", repA.Waits, f.leased)
	}
	if got := mustGet(t, src, store.KindProduct, f.leased).Fields["name"]; got != "LEA-1" {
		t.Errorf("leased product written while leased: name %q", got)
	}

	// The lease ends; every copy syncs again in turn, twice, so each sees the others' work.
	if _, err := src.ReleaseLease(as("dave"), lease.Token); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		mustSync(t, src, first)
		mustSync(t, src, second)
	}

	p := mustGet(t, src, store.KindProduct, f.counter)
	if got, want := p.Fields["stock"], int64(50-3-2+7-1); got != want {
		t.Errorf("stock = %v, want %d (start plus every delta once)", got, want)
	}
	d := mustGet(t, src, store.KindProduct, f.disjoint)
	if d.Fields["name"] != "from alice" || d.Fields["price"] != int64(1234) || d.Fields["description"] != "from carol" {
		t.Errorf("disjoint edits: name %q price %v description %q, want all three", d.Fields["name"], d.Fields["price"], d.Fields["description"])
	}
	txt := mustGet(t, src, store.KindDocument, f.text).Fields["body"].(string)
	if !strings.Contains(txt, "ONE (alice)") || !strings.Contains(txt, "FIVE (carol)") {
		t.Errorf("text merge: body %q lacks one side", txt)
	}
	if got := mustGet(t, src, store.KindProduct, f.leased).Fields["name"]; got != "alice while leased" {
		t.Errorf("leased product after release: name %q, want alice's", got)
	}
	if got := mustGet(t, src, store.KindProduct, f.leased).UpdatedBy; got != "alice" {
		t.Errorf("leased product written by %q, want alice (the author, not the sync)", got)
	}

	hist, err := src.FindHistory(ctx, store.KindProduct, f.leased)
	if err != nil {
		t.Fatal(err)
	}
	if got := hist[0].Actor; !strings.HasPrefix(got, "alice (offline copy, edited 20") {
		t.Errorf("source history names %q, want alice, the working copy and when she edited", got)
	}

	// Conflicts: only in the second copy, and only the real collisions; the local value stays.
	if cs, err := first.Conflicts(ctx); err != nil || len(cs) != 0 {
		t.Errorf("first copy conflicts %v (%v)", describe(cs), err)
	}
	cs, err := second.Conflicts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := fieldConflicts(cs); !slices.Equal(got, want2) {
		t.Errorf("second copy conflicts %v, want %v", got, want2)
	}
	samePrice := map[string]int64{"AB": 1200, "BA": 1100}[order]
	if got := mustGet(t, second, store.KindProduct, f.same).Fields["price"]; got != samePrice {
		t.Errorf("second copy's price of the collided product = %v, want its own %d", got, samePrice)
	}

	// Everything without a conflict converged: source and both copies hold the same values.
	assertConverged(t, src, first, nil)
	// The document the first copy moved waits too: under its new parent it would sit below
	// itself in the second copy, whose own move is in conflict (wc_stale).
	held := append(slices.Clone(cs), store.CopyConflict{Kind: store.KindDocument, ID: map[string]int64{"AB": f.x, "BA": f.y}[order], Fields: []string{"parent_id"}})
	assertConverged(t, src, second, held)

	// Resolve: theirs for the price and body, mine for the move (which still forms a cycle,
	// so it comes back), and a value for nothing else.
	for _, c := range cs {
		picks := tsync.Picks{}
		for _, fl := range c.Fields {
			picks[fl] = "theirs"
		}
		if _, err := tsync.Resolve(as("bob"), second, c.Kind, c.ID, picks); err != nil {
			t.Fatalf("resolve %s %d: %v", c.Kind, c.ID, err)
		}
	}
	rep := mustSync(t, src, second)
	if !rep.InSync() {
		t.Fatalf("after resolving: %+v", rep)
	}
	mustSync(t, src, first)
	assertConverged(t, src, first, nil)
	assertConverged(t, src, second, nil)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func fieldConflicts(cs []store.CopyConflict) []string {
	var out []string
	for _, c := range cs {
		out = append(out, string(c.Kind)+" "+itoa(c.ID)+": "+strings.Join(c.Fields, ","))
	}
	slices.Sort(out)
	return out
}

func describe(cs []store.CopyConflict) []string {
	var out []string
	for i := range cs {
		out = append(out, tsync.Describe(&cs[i]))
	}
	return out
}

// assertConverged checks that every record of the copy holds the source's values, except
// the conflicting fields of records in open.
func assertConverged(t *testing.T, src, wc store.Store, open []store.CopyConflict) {
	t.Helper()
	ctx := context.Background()
	for _, kind := range []store.Kind{store.KindProduct, store.KindDocument} {
		srcRecs, err := src.FindRecords(ctx, store.Filter{Kind: kind})
		if err != nil {
			t.Fatal(err)
		}
		wcRecs, err := wc.FindRecords(ctx, store.Filter{Kind: kind})
		if err != nil {
			t.Fatal(err)
		}
		if len(srcRecs) != len(wcRecs) {
			t.Errorf("%s: source has %d, copy %d", kind, len(srcRecs), len(wcRecs))
			continue
		}
		for i, s := range srcRecs {
			w := wcRecs[i]
			var skip []string
			for _, c := range open {
				if c.Kind == kind && c.ID == s.ID {
					skip = c.Fields
				}
			}
			for _, f := range src.Registry().Fields(kind) {
				if slices.Contains(skip, f.Name) {
					continue
				}
				if !store.Equal(s.Fields[f.Name], w.Fields[f.Name]) {
					t.Errorf("%s %d %s: source %v, copy %v", kind, s.ID, f.Name, s.Fields[f.Name], w.Fields[f.Name])
				}
			}
			if len(skip) == 0 && s.Version != w.Version {
				t.Errorf("%s %d: source v%d, copy v%d", kind, s.ID, s.Version, w.Version)
			}
		}
	}
}

// TestSync_Creates pushes records created offline, one of them with a sku the source took
// in the meantime: that one is a conflict on sku until a person renames it.
func TestSync_Creates(t *testing.T) {
	for name, open := range sources {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			src := open(t)
			f := seed(t, src)
			a := mustClone(t, src, "a")
			if _, err := a.CreateRecord(as("alice"), store.KindProduct, store.Values{"sku": "NEW-1", "name": "new", "stock": int64(3)}); err != nil {
				t.Fatal(err)
			}
			clash, err := a.CreateRecord(as("alice"), store.KindProduct, store.Values{"sku": "CLASH-1", "name": "alice's"})
			if err != nil {
				t.Fatal(err)
			}
			doc, err := a.CreateRecord(as("alice"), store.KindDocument, store.Values{"title": "notes from the train", "parent_id": f.root})
			if err != nil {
				t.Fatal(err)
			}
			mustSet(t, a, "alice", store.KindDocument, doc.ID, store.Values{"body": "written offline\n"})
			if _, err := src.CreateRecord(as("carol"), store.KindProduct, store.Values{"sku": "clash-1", "name": "carol's"}); err != nil {
				t.Fatal(err)
			}

			rep := mustSync(t, src, a)
			if got := fieldConflicts(rep.Conflicts); !slices.Equal(got, []string{"product " + itoa(clash.ID) + ": sku"}) {
				t.Fatalf("conflicts %v, want the clashing create on sku: %v", got, describe(rep.Conflicts))
			}
			// mine is allowed; the clash just comes back at the next sync.
			if _, err := tsync.Resolve(as("alice"), a, store.KindProduct, clash.ID, tsync.Picks{"sku": "mine"}); err != nil {
				t.Fatalf("resolve sku=mine: %v", err)
			}
			rep = mustSync(t, src, a)
			if len(rep.Conflicts) != 1 {
				t.Fatalf("sku=mine again: conflicts %v, want the sku conflict back", describe(rep.Conflicts))
			}
			if _, err := tsync.Resolve(as("alice"), a, store.KindProduct, clash.ID, tsync.Picks{"sku": "CLASH-2"}); err != nil {
				t.Fatal(err)
			}
			if rep = mustSync(t, src, a); !rep.InSync() {
				t.Fatalf("after renaming: %+v", rep)
			}
			assertConverged(t, src, a, nil)
			n, _ := src.CountRecords(ctx, store.KindProduct)
			if n != 4+3 {
				t.Errorf("source has %d products, want 7 (4 seeded, carol's, two of alice's)", n)
			}
			docs, _ := src.FindRecords(ctx, store.Filter{Kind: store.KindDocument, Search: "notes from the train"})
			if len(docs) != 1 || docs[0].Fields["body"] != "written offline\n" || docs[0].Fields["parent_id"] != f.root {
				t.Errorf("document created offline on the source: %+v", docs)
			}
		})
	}
}

// TestClone_Subtree copies one document and its descendants, and a sync brings the
// documents created under them on the source, and no others.
func TestClone_Subtree(t *testing.T) {
	ctx := context.Background()
	src := sources["sqlite"](t)
	f := seed(t, src)
	wc := openNew(t, filepath.Join(t.TempDir(), "wc.db"))
	defer wc.Close()
	if _, err := tsync.Clone(ctx, src, wc, tsync.CloneOptions{Kinds: []store.Kind{store.KindDocument}, Subtree: f.root}); err != nil {
		t.Fatal(err)
	}
	ids := func() []int64 {
		recs, err := wc.FindRecords(ctx, store.Filter{Kind: store.KindDocument})
		if err != nil {
			t.Fatal(err)
		}
		var out []int64
		for _, r := range recs {
			out = append(out, r.ID)
		}
		return out
	}
	if got, want := ids(), []int64{f.root, f.x, f.y}; !slices.Equal(got, want) {
		t.Fatalf("cloned documents %v, want the subtree %v", got, want)
	}
	if n, err := wc.CountRecords(ctx, store.KindProduct); err != nil || n != 0 {
		t.Errorf("a document clone copied %d products (%v)", n, err)
	}
	under, err := src.CreateRecord(as("carol"), store.KindDocument, store.Values{"title": "under x", "parent_id": f.x})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.CreateRecord(as("carol"), store.KindDocument, store.Values{"title": "elsewhere"}); err != nil {
		t.Fatal(err)
	}
	mustSync(t, src, wc)
	if got, want := ids(), []int64{f.root, f.x, f.y, under.ID}; !slices.Equal(got, want) {
		t.Errorf("after sync: documents %v, want %v", got, want)
	}
}

// assertAcyclic fails when a document of st sits under itself.
func assertAcyclic(t *testing.T, st store.Store) {
	t.Helper()
	docs, err := st.FindRecords(context.Background(), store.Filter{Kind: store.KindDocument})
	if err != nil {
		t.Fatal(err)
	}
	parent := map[int64]int64{}
	for _, d := range docs {
		if p, ok := d.Fields["parent_id"].(int64); ok {
			parent[d.ID] = p
		}
	}
	for _, d := range docs {
		id := d.ID
		for range len(docs) + 1 {
			p, ok := parent[id]
			if !ok {
				break
			}
			if p == d.ID {
				t.Errorf("document %d sits under itself", d.ID)
				break
			}
			id = p
		}
	}
}
