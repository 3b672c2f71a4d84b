package exchange

import (
	"bytes"
	"context"
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
