package exchange

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
)

// pagedOnly hides a store's StreamRecords, so that Export pages through FindRecords.
type pagedOnly struct{ store.Records }

// TestExport_StreamMatchesPages: an export through the store's RecordStreamer is byte for
// byte the export through FindRecords pages, in every format, with some or all fields, with
// base columns, on a terminal, with values CSV must quote, over more than one page.
func TestExport_StreamMatchesPages(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		st := open(t)
		if _, ok := st.(store.RecordStreamer); !ok {
			t.Fatalf("%T does not stream", st)
		}
		ctx := as(t, alice)
		odd := []string{"", " lead", "quote \" in", "comma, in", "line\nbreak", `\.`, "\u00a0nbsp", "Ünïcode \u202e", "tab\tin"}
		for i := range PageSize + 7 {
			s := odd[i%len(odd)]
			_, err := st.CreateRecord(ctx, store.KindProduct, store.Values{
				"sku": "S-" + string(rune('a'+i%26)) + "-" + itoa(i), "name": "n " + itoa(i), "description": s,
				"price": int64(i * 37), "stock": int64(i % 11), "categories": store.NormalizeSet([]string{"c" + itoa(i%3), "x"}),
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		export := func(recs store.Records, f Format, o WriterOptions, search string) []byte {
			var b bytes.Buffer
			x, err := NewWriter(&b, f, st.Registry(), store.KindProduct, o)
			if err != nil {
				t.Fatal(err)
			}
			if err := Export(context.Background(), recs, x, store.Filter{Kind: store.KindProduct, Search: search}, nil); err != nil {
				t.Fatal(err)
			}
			if err := x.Close(); err != nil {
				t.Fatal(err)
			}
			return b.Bytes()
		}
		for _, f := range []Format{CSV, JSONL, JSON} {
			for _, o := range []WriterOptions{{}, {Fields: []string{"price", "name", "categories"}}, {Base: true}, {Terminal: true}} {
				for _, search := range []string{"", "s-c"} {
					streamed, paged := export(st, f, o, search), export(pagedOnly{st}, f, o, search)
					if !bytes.Equal(streamed, paged) {
						t.Errorf("%s %+v search %q: streamed export (%d bytes) differs from the paged one (%d bytes)", f, o, search, len(streamed), len(paged))
					}
					if len(bytes.Split(streamed, []byte("product"))) < 20 {
						t.Errorf("%s %+v search %q: export holds almost nothing", f, o, search)
					}
				}
			}
		}
	})
}

// TestExport_ParentsFirst: a tree kind's export puts each record after its parent when the
// parent is in the export (a record moved under a newer one waits for it), streamed and
// paged alike, so that the file imports into an empty store with every parent found; a
// record whose parent the export leaves out goes in id order after the rest.
func TestExport_ParentsFirst(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		st := open(t)
		ctx := as(t, alice)
		doc := func(title string) int64 {
			r, err := st.CreateRecord(ctx, store.KindDocument, store.Values{"title": title})
			if err != nil {
				t.Fatal(err)
			}
			return r.ID
		}
		move := func(id, parent int64) {
			if _, err := st.MoveRecord(ctx, store.KindDocument, id, store.Move{Parent: &parent}); err != nil {
				t.Fatal(err)
			}
		}
		d1, d2, d3, d4 := doc("x one"), doc("two"), doc("three"), doc("x four")
		move(d1, d3)
		move(d3, d2)
		move(d4, d1)
		order := func(recs store.Records, search string) string {
			var b bytes.Buffer
			x, err := NewWriter(&b, JSONL, st.Registry(), store.KindDocument, WriterOptions{Fields: []string{"title", "parent_id"}})
			if err != nil {
				t.Fatal(err)
			}
			if err := Export(context.Background(), recs, x, store.Filter{Kind: store.KindDocument, Search: search}, nil); err != nil {
				t.Fatal(err)
			}
			if err := x.Close(); err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, line := range bytes.Split(bytes.TrimSpace(b.Bytes()), []byte("\n")) {
				var r struct{ ID int64 }
				if err := json.Unmarshal(line, &r); err != nil {
					t.Fatalf("%s: %v", line, err)
				}
				ids = append(ids, itoa(int(r.ID)))
			}
			return strings.Join(ids, ",")
		}
		want := strings.Join([]string{itoa(int(d2)), itoa(int(d3)), itoa(int(d1)), itoa(int(d4))}, ",")
		wantSearch := itoa(int(d1)) + "," + itoa(int(d4))
		for name, recs := range map[string]store.Records{"streamed": st, "paged": pagedOnly{st}} {
			if got := order(recs, ""); got != want {
				t.Errorf("%s export order %s, want parents first: %s", name, got, want)
			}
			if got := order(recs, "x "); got != wantSearch {
				t.Errorf("%s export of a search: order %s, want %s", name, got, wantSearch)
			}
		}
		// The whole export imports into an empty store with the tree as it was.
		data := mustExport(t, st, store.KindDocument, JSONL, WriterOptions{})
		fresh := open(t)
		_, sum := mustImport(t, ctx, fresh, data, JSONL, ImportOptions{})
		if sum[Created] != 4 || sum[Invalid] != 0 {
			t.Fatalf("import of the export into an empty store: %+v", sum)
		}
		for id, parent := range map[int64]int64{d1: d3, d3: d2, d4: d1} {
			r, err := fresh.FindRecord(ctx, store.KindDocument, id)
			if err != nil || r.Fields["parent_id"] != parent {
				t.Errorf("imported document %d: %v parent %v, want %d", id, err, r.Fields["parent_id"], parent)
			}
		}
	})
}

// TestExport_ParentCycle: a tree whose records point at each other in a circle (another
// program's UPDATE of parent_id, which no move would make) is still exported whole: every
// record once, in id order where no parent comes first. An export dropped them all.
func TestExport_ParentCycle(t *testing.T) {
	var b bytes.Buffer
	x, err := NewWriter(&b, JSONL, store.DefaultRegistry(), store.KindDocument, WriterOptions{Fields: []string{"title", "parent_id"}})
	if err != nil {
		t.Fatal(err)
	}
	p := newParentsFirst(x)
	for _, r := range []struct{ id, parent int64 }{{1, 3}, {2, 1}, {3, 2}, {4, 1}, {5, 5}, {6, 9}} {
		rec := &store.Record{Kind: store.KindDocument, ID: r.id, Version: 1, Fields: store.Values{"title": "t", "parent_id": r.parent}}
		if err := p.write(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.finish(); err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, line := range bytes.Split(bytes.TrimSpace(b.Bytes()), []byte("\n")) {
		var r struct{ ID int64 }
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		ids = append(ids, itoa(int(r.ID)))
	}
	if got, want := strings.Join(ids, ","), "6,1,2,3,4,5"; got != want {
		t.Fatalf("export of a tree with cycles: ids %s, want %s (each record once)", got, want)
	}
}
