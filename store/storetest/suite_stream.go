package storetest

import (
	"errors"
	"maps"
	"reflect"
	"slices"
	"testing"

	"github.com/tandem-editor/tandem/store"
)

// RunStream runs the StreamRecords part of the contract on its own, so that a backend can
// run it again with a page size of a few rows and show that paging changes nothing.
func RunStream(t *testing.T, open Opener) {
	run(t, open, []suiteTest{{"StreamRecords", testStream}})
}

// testStream: a store that implements store.RecordStreamer streams exactly what FindRecords
// finds, value for value, in id order, for every filter StreamRecords takes; a consumer's
// error ends the stream and comes back as it is; filters it does not take are refused.
func testStream(t *testing.T, open Opener) {
	s := fresh(t, open)
	rs, ok := s.(store.RecordStreamer)
	if !ok {
		t.Skipf("%T does not implement store.RecordStreamer", s)
	}
	ctx := actx(t, actAlice)
	sets := [][]string{{"tools"}, {}, {"zeta", "alpha", "mid"}, {`quote " and \ back`}, {"Ünïcode", "slash/and<html>"}, {"a;b", "c"}, {"hammer"}}
	var ids []int64
	for i, sku := range []string{"HAMMER-1", "SAW-2", "hammer-3", "DRILL-4", "NAIL-5", "HAMMER-6", "SCREW-7", "FILE-8"} {
		r, err := s.CreateRecord(ctx, store.KindProduct, store.Values{
			"sku": sku, "name": "Product " + sku, "description": "line one\nline two\n",
			"price": int64(i*1001 + 3), "stock": int64(i), "categories": store.NormalizeSet(sets[i%len(sets)]),
		})
		if err != nil {
			t.Fatalf("create %s: %v", sku, err)
		}
		ids = append(ids, r.ID)
	}
	// One record changed after its creation: the stream shows the latest version.
	mustSave(t, s, ctx, store.KindProduct, ids[1], store.Update{BaseVersion: 1, Set: store.Values{"stock": int64(77), "name": "renamed"}})
	stream := func(f store.Filter, fields []string) []*store.Record {
		t.Helper()
		var out []*store.Record
		err := rs.StreamRecords(t.Context(), f, fields, func(r *store.Record) error {
			c := *r // the record is reused: keep a copy
			c.Fields = maps.Clone(r.Fields)
			out = append(out, &c)
			return nil
		})
		if err != nil {
			t.Fatalf("stream %+v: %v", f, err)
		}
		return out
	}
	for name, f := range map[string]store.Filter{
		"all":          {},
		"search":       {Search: "HaMmEr"},
		"after":        {AfterID: ids[2]},
		"search+after": {Search: "hammer", AfterID: ids[0]},
		"no match":     {Search: "nothing"},
	} {
		f.Kind = store.KindProduct
		want, err := s.FindRecords(t.Context(), f)
		if err != nil {
			t.Fatalf("%s: find: %v", name, err)
		}
		got := stream(f, nil)
		if len(got) != len(want) {
			t.Errorf("%s: streamed %d records, FindRecords finds %d", name, len(got), len(want))
			continue
		}
		for i := range want {
			if !reflect.DeepEqual(got[i], want[i]) {
				t.Errorf("%s: record %d streamed as\n%+v\nFindRecords finds\n%+v", name, i, got[i], want[i])
			}
		}
	}
	// Some fields only: the records hold those, with the values FindRecords finds.
	all, err := s.FindRecords(t.Context(), store.Filter{Kind: store.KindProduct})
	if err != nil {
		t.Fatal(err)
	}
	some := []string{"price", "sku", "categories"}
	got := stream(store.Filter{Kind: store.KindProduct}, some)
	if len(got) != len(all) {
		t.Fatalf("fields %v: streamed %d records, want %d", some, len(got), len(all))
	}
	for i, r := range got {
		want := *all[i]
		want.Fields = store.Values{}
		for _, name := range some {
			want.Fields[name] = all[i].Fields[name]
		}
		if !reflect.DeepEqual(r, &want) {
			t.Errorf("fields %v: record %d streamed as\n%+v\nwant\n%+v", some, i, r, &want)
		}
	}
	err = rs.StreamRecords(t.Context(), store.Filter{Kind: store.KindProduct}, []string{"sku", "no_such_field"}, func(*store.Record) error { return nil })
	if store.ErrorCode(err) != store.EINVALID {
		t.Errorf("unknown field: err = %v, want EINVALID", err)
	}

	if got := stream(store.Filter{Kind: store.KindProduct}, nil); len(got) != len(ids) || !slices.IsSortedFunc(got, func(a, b *store.Record) int { return int(a.ID - b.ID) }) {
		t.Errorf("stream of all: %d records (want %d) in id order", len(got), len(ids))
	}

	stop := errors.New("consumer stops")
	n := 0
	err = rs.StreamRecords(t.Context(), store.Filter{Kind: store.KindProduct}, nil, func(*store.Record) error {
		n++
		if n == 4 {
			return stop
		}
		return nil
	})
	if err != stop || n != 4 {
		t.Errorf("consumer error at record 4: err = %v after %d records, want the consumer's error after 4", err, n)
	}
	for name, f := range map[string]store.Filter{
		"ids":   {IDs: ids[:1]},
		"sort":  {Sort: "price"},
		"limit": {Limit: 2},
	} {
		f.Kind = store.KindProduct
		err := rs.StreamRecords(t.Context(), f, nil, func(*store.Record) error { return nil })
		if store.ErrorCode(err) != store.EINVALID {
			t.Errorf("%s: err = %v, want EINVALID", name, err)
		}
	}
}
