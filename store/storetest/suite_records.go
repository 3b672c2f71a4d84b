package storetest

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
)

func testCreateRecord(t *testing.T, open Opener) {
	t.Run("OK", func(t *testing.T) {
		s := fresh(t, open)
		got := mustCreateProduct(t, s, "SKU-1")
		if got.ID <= 0 || got.Version != 1 || got.UpdatedBy != "alice" || got.UpdatedAt.IsZero() {
			t.Fatalf("created = id %d v%d by %q at %v, want an id, v1 by alice, a time", got.ID, got.Version, got.UpdatedBy, got.UpdatedAt)
		}
		want := store.Values{
			"sku": "SKU-1", "name": "Product SKU-1", "description": "line one\nline two\n",
			"categories": []string{"tools"}, "price": int64(2999), "stock": int64(10),
			"availability": "in_stock", "thumbnail": "", "search_index": "", "checksum": "", "last_sync_at": nil,
		}
		found := mustFind(t, s, store.KindProduct, got.ID)
		for _, r := range []*store.Record{got, found} {
			for name, w := range want {
				if !store.Equal(r.Fields[name], w) {
					t.Errorf("%s = %#v, want %#v", name, r.Fields[name], w)
				}
			}
		}
		if n, err := s.CountRecords(t.Context(), store.KindProduct); err != nil || n != 1 {
			t.Errorf("count = %d, %v; want 1", n, err)
		}
	})
	t.Run("DocumentUnderParent", func(t *testing.T) {
		s := fresh(t, open)
		root := mustCreateDoc(t, s, "root", nil)
		child := mustCreateDoc(t, s, "child", &root.ID)
		if got := child.Fields["parent_id"]; got != root.ID {
			t.Errorf("parent_id = %v, want %d", got, root.ID)
		}
		if got := root.Fields["parent_id"]; got != nil {
			t.Errorf("root parent_id = %v, want nil", got)
		}
		_, err := s.CreateRecord(actx(t, actAlice), store.KindDocument, store.Values{"title": "orphan", "parent_id": int64(9999)})
		requireCode(t, err, store.ENOTFOUND)
	})
	t.Run("ErrDuplicateSKU", func(t *testing.T) {
		s := fresh(t, open)
		mustCreateProduct(t, s, "DUP")
		_, err := s.CreateRecord(actx(t, actAlice), store.KindProduct, store.Values{"sku": "DUP", "name": "again"})
		requireCode(t, err, store.EINVALID)
		requireMessage(t, err, "sku DUP already exists")
		other := mustCreateProduct(t, s, "OTHER")
		_, err = s.UpdateRecord(actx(t, actAlice), store.KindProduct, other.ID, store.Update{BaseVersion: 1, Set: store.Values{"sku": "DUP"}})
		requireCode(t, err, store.EINVALID)
		requireMessage(t, err, "sku DUP already exists")
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		s := fresh(t, open)
		ctx := actx(t, actAlice)
		for name, vals := range map[string]store.Values{
			"missing required": {"sku": "X"},
			"unknown field":    {"sku": "X", "name": "x", "colour": "red"},
			"wrong type":       {"sku": "X", "name": "x", "stock": "abc"},
			"too long":         {"sku": "X", "name": strings.Repeat("n", 1001)},
			"invalid UTF-8":    {"sku": "X", "name": "bad \xff byte"},
			"control char":     {"sku": "X", "name": "bell \a"},
			"bad enum":         {"sku": "X", "name": "x", "availability": "sold"},
		} {
			if _, err := s.CreateRecord(ctx, store.KindProduct, vals); store.ErrorCode(err) != store.EINVALID {
				t.Errorf("%s: error = %v, want %s", name, err, store.EINVALID)
			}
		}
		_, err := s.CreateRecord(ctx, store.Kind("invoice"), store.Values{"x": "y"})
		requireCode(t, err, store.EINVALID)
		if n, err := s.CountRecords(t.Context(), store.KindProduct); err != nil || n != 0 {
			t.Errorf("count = %d, %v after refused creates; want 0", n, err)
		}
	})
	t.Run("ErrForbidden", func(t *testing.T) {
		s := fresh(t, open)
		_, err := s.CreateRecord(actx(t, actAlice), store.KindProduct, store.Values{"sku": "X", "name": "x", "thumbnail": "x.png"})
		requireCode(t, err, store.EFORBIDDEN)
		_, err = s.CreateRecord(actx(t, actWorker), store.KindProduct, store.Values{"sku": "X", "name": "x"})
		requireCode(t, err, store.EFORBIDDEN)
	})
	t.Run("ErrNoActor", func(t *testing.T) {
		s := fresh(t, open)
		_, err := s.CreateRecord(t.Context(), store.KindProduct, store.Values{"sku": "X", "name": "x"})
		requireCode(t, err, store.EINVALID)
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		s := fresh(t, open)
		_, err := s.FindRecord(t.Context(), store.KindProduct, 12345)
		requireCode(t, err, store.ENOTFOUND)
	})
}

func testFindRecords(t *testing.T, open Opener) {
	t.Run("OK", func(t *testing.T) {
		s := fresh(t, open)
		var ids []int64
		for _, sku := range []string{"HAMMER-1", "SAW-2", "hammer-3", "DRILL-4"} {
			ids = append(ids, mustCreateProduct(t, s, sku).ID)
		}
		find := func(f store.Filter) []int64 {
			t.Helper()
			f.Kind = store.KindProduct
			rs, err := s.FindRecords(t.Context(), f)
			if err != nil {
				t.Fatalf("find %+v: %v", f, err)
			}
			var out []int64
			for _, r := range rs {
				out = append(out, r.ID)
			}
			return out
		}
		for name, tc := range map[string]struct {
			f    store.Filter
			want []int64
		}{
			"all":         {store.Filter{}, ids},
			"search":      {store.Filter{Search: "HaMmEr"}, []int64{ids[0], ids[2]}},
			"ids":         {store.Filter{IDs: []int64{ids[3], ids[1]}}, []int64{ids[1], ids[3]}},
			"after":       {store.Filter{AfterID: ids[1]}, ids[2:]},
			"limit":       {store.Filter{Limit: 2}, ids[:2]},
			"after+limit": {store.Filter{AfterID: ids[0], Limit: 2}, ids[1:3]},
			"no match":    {store.Filter{Search: "nothing"}, nil},
			// A search with ids and paging: the ids bound the search, not its pages.
			"search+ids":         {store.Filter{Search: "hammer", IDs: []int64{ids[2], ids[1]}}, []int64{ids[2]}},
			"search+after+limit": {store.Filter{Search: "hammer", AfterID: ids[0], Limit: 1}, []int64{ids[2]}},
			"search+ids+limit":   {store.Filter{Search: "hammer", IDs: []int64{ids[0], ids[2]}, AfterID: ids[0], Limit: 1}, []int64{ids[2]}},
		} {
			if got := find(tc.f); !slices.Equal(got, tc.want) {
				t.Errorf("%s: ids = %v, want %v", name, got, tc.want)
			}
		}
		if n, err := s.CountRecords(t.Context(), store.KindDocument); err != nil || n != 0 {
			t.Errorf("documents = %d, %v; want 0", n, err)
		}
	})
}

func testUpdateRecord(t *testing.T, open Opener) {
	t.Run("OK", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "P")
		res := mustSave(t, s, actx(t, actBob), store.KindProduct, p.ID, store.Update{
			BaseVersion: 1, Set: store.Values{"price": int64(1999), "categories": []string{"garden", "tools"}},
		})
		got := res.Record
		if got.Version != 2 || got.UpdatedBy != "bob" || res.Replayed {
			t.Fatalf("saved = v%d by %q replayed %v, want v2 by bob", got.Version, got.UpdatedBy, res.Replayed)
		}
		found := mustFind(t, s, store.KindProduct, p.ID)
		if found.Fields["price"] != int64(1999) || !store.Equal(found.Fields["categories"], []string{"garden", "tools"}) {
			t.Errorf("found = %v, want price 1999 and categories garden,tools", found.Fields)
		}
		if found.Fields["name"] != p.Fields["name"] || found.Fields["stock"] != p.Fields["stock"] {
			t.Errorf("unchanged fields changed: %v", found.Fields)
		}
	})
	t.Run("OnlyChangedFieldsWritten", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "P")
		// alice holds version 1 in her editor. bob rewrites the description.
		mustSave(t, s, actx(t, actBob), store.KindProduct, p.ID, store.Update{BaseVersion: 1, Set: store.Values{"description": "bob's text\n"}})
		// alice's relative change carries no stale copy of the description.
		mustSave(t, s, actx(t, actAlice), store.KindProduct, p.ID, store.Update{Add: map[string]int64{"stock": -1}})
		// a worker writes a system field at the current version; bob's text survives again.
		mustSave(t, s, actx(t, actWorker), store.KindProduct, p.ID, store.Update{BaseVersion: 3, Set: store.Values{"thumbnail": "p.png"}})
		// alice, after reloading, changes the name only.
		mustSave(t, s, actx(t, actAlice), store.KindProduct, p.ID, store.Update{BaseVersion: 4, Set: store.Values{"name": "New name"}})
		got := mustFind(t, s, store.KindProduct, p.ID)
		want := store.Values{"description": "bob's text\n", "stock": int64(9), "thumbnail": "p.png", "name": "New name", "price": int64(2999)}
		for name, w := range want {
			if !store.Equal(got.Fields[name], w) {
				t.Errorf("%s = %#v, want %#v", name, got.Fields[name], w)
			}
		}
		if got.Version != 5 {
			t.Errorf("version = %d, want 5", got.Version)
		}
	})
	t.Run("ErrConflict", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "P")
		mustSave(t, s, actx(t, actBob), store.KindProduct, p.ID, store.Update{BaseVersion: 1, Set: store.Values{"price": int64(2499)}})
		_, err := s.UpdateRecord(actx(t, actAlice), store.KindProduct, p.ID, store.Update{
			BaseVersion: 1, Set: store.Values{"price": int64(2799), "description": "alice's text\n"},
		})
		requireCode(t, err, store.ECONFLICT)
		ce := asConflict(t, err)
		if ce.BaseVersion != 1 || ce.Current == nil || ce.Current.Version != 2 || ce.Current.UpdatedBy != "bob" {
			t.Fatalf("conflict = base %d current %+v, want base 1, current v2 by bob", ce.BaseVersion, ce.Current)
		}
		if got := ce.Current.Fields["price"]; got != int64(2499) {
			t.Errorf("current price = %v, want 2499", got)
		}
		if got, want := ce.ChangedFields(), []string{"price"}; !slices.Equal(got, want) {
			t.Errorf("changed fields = %v, want %v", got, want)
		}
		if got, want := ce.Actors(), []string{"bob"}; !slices.Equal(got, want) {
			t.Errorf("actors = %v, want %v", got, want)
		}
		requireMessage(t, err, "version 2", "bob", "price")
		// Nothing of alice's save was written.
		got := mustFind(t, s, store.KindProduct, p.ID)
		if got.Version != 2 || got.Fields["description"] != p.Fields["description"] || got.Fields["price"] != int64(2499) {
			t.Errorf("after the refused save: v%d %v", got.Version, got.Fields)
		}
	})
	t.Run("ErrConflictSeveralWriters", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "P")
		mustSave(t, s, actx(t, actBob), store.KindProduct, p.ID, store.Update{BaseVersion: 1, Set: store.Values{"name": "b"}})
		mustSave(t, s, actx(t, actWorker), store.KindProduct, p.ID, store.Update{BaseVersion: 2, Set: store.Values{"checksum": "abc"}})
		_, err := s.UpdateRecord(actx(t, actAlice), store.KindProduct, p.ID, store.Update{BaseVersion: 1, Set: store.Values{"price": int64(1)}})
		ce := asConflict(t, err)
		if got, want := ce.ChangedFields(), []string{"name", "checksum"}; !slices.Equal(got, want) {
			t.Errorf("changed fields = %v, want %v", got, want)
		}
		if got, want := ce.Actors(), []string{"bob", "worker"}; !slices.Equal(got, want) {
			t.Errorf("actors = %v, want %v", got, want)
		}
		if len(ce.Since) != 2 || ce.Since[0].Version != 2 || ce.Since[1].Version != 3 {
			t.Errorf("since = %+v, want versions 2 and 3", ce.Since)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		s := fresh(t, open)
		_, err := s.UpdateRecord(actx(t, actAlice), store.KindProduct, 777, store.Update{BaseVersion: 1, Set: store.Values{"name": "x"}})
		requireCode(t, err, store.ENOTFOUND)
		_, err = s.UpdateRecord(actx(t, actAlice), store.KindProduct, 777, store.Update{Add: map[string]int64{"stock": 1}})
		requireCode(t, err, store.ENOTFOUND)
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "P")
		ctx := actx(t, actAlice)
		for name, u := range map[string]store.Update{
			"nothing":         {BaseVersion: 1},
			"no base version": {Set: store.Values{"name": "x"}},
			"unknown field":   {BaseVersion: 1, Set: store.Values{"colour": "red"}},
			"wrong type":      {BaseVersion: 1, Set: store.Values{"stock": "abc"}},
			"add non-counter": {Add: map[string]int64{"price": 1}},
			"set and add":     {BaseVersion: 1, Set: store.Values{"stock": int64(1)}, Add: map[string]int64{"stock": 1}},
			"too long":        {BaseVersion: 1, Set: store.Values{"name": strings.Repeat("x", 1001)}},
			"invalid UTF-8":   {BaseVersion: 1, Set: store.Values{"description": "\xff\xfe"}},
			"control char":    {BaseVersion: 1, Set: store.Values{"name": "esc \x1b[31m"}},
			"long key":        {Add: map[string]int64{"stock": 1}, IdempotencyKey: strings.Repeat("k", 201)},
		} {
			if _, err := s.UpdateRecord(ctx, store.KindProduct, p.ID, u); store.ErrorCode(err) != store.EINVALID {
				t.Errorf("%s: error = %v, want %s", name, err, store.EINVALID)
			}
		}
		_, err := s.UpdateRecord(t.Context(), store.KindProduct, p.ID, store.Update{BaseVersion: 1, Set: store.Values{"name": "x"}})
		requireCode(t, err, store.EINVALID) // no actor
		if got := mustFind(t, s, store.KindProduct, p.ID); got.Version != 1 {
			t.Errorf("version = %d after refused updates, want 1", got.Version)
		}
		if cs := mustChanges(t, s, 0); len(cs) != 1 {
			t.Errorf("change log has %d entries after refused updates, want 1 (the create)", len(cs))
		}
	})
}

func testOwnership(t *testing.T, open Opener) {
	s := fresh(t, open)
	p := mustCreateProduct(t, s, "P")
	d := mustCreateDoc(t, s, "doc", nil)
	t.Run("ErrEditorWritesSystemField", func(t *testing.T) {
		_, err := s.UpdateRecord(actx(t, actAlice), store.KindProduct, p.ID, store.Update{BaseVersion: 1, Set: store.Values{"thumbnail": "x.png"}})
		requireCode(t, err, store.EFORBIDDEN)
		var oe *store.OwnershipError
		if !errors.As(err, &oe) || oe.Field != "thumbnail" || oe.Owner != store.OwnerSystem || oe.Role != store.RoleEditor {
			t.Fatalf("error = %#v, want an OwnershipError on thumbnail owned by system", err)
		}
		requireMessage(t, err, "thumbnail", "system")
	})
	t.Run("ErrSystemWritesEditorField", func(t *testing.T) {
		_, err := s.UpdateRecord(actx(t, actWorker), store.KindProduct, p.ID, store.Update{BaseVersion: 1, Set: store.Values{"name": "robot"}})
		requireCode(t, err, store.EFORBIDDEN)
		_, err = s.UpdateRecord(actx(t, actWorker), store.KindDocument, d.ID, store.Update{BaseVersion: 1, Set: store.Values{"body": "robot"}})
		requireCode(t, err, store.EFORBIDDEN)
	})
	t.Run("ErrMixed", func(t *testing.T) {
		// One forbidden field refuses the whole update: the allowed field is not written.
		_, err := s.UpdateRecord(actx(t, actAlice), store.KindProduct, p.ID, store.Update{BaseVersion: 1, Set: store.Values{"name": "ok", "checksum": "no"}})
		requireCode(t, err, store.EFORBIDDEN)
		if got := mustFind(t, s, store.KindProduct, p.ID); got.Version != 1 || got.Fields["name"] != p.Fields["name"] {
			t.Errorf("after a refused mixed update: v%d name %v", got.Version, got.Fields["name"])
		}
	})
	t.Run("ErrParentIDOnlyByMove", func(t *testing.T) {
		other := mustCreateDoc(t, s, "other", nil)
		_, err := s.UpdateRecord(actx(t, actAlice), store.KindDocument, d.ID, store.Update{BaseVersion: 1, Set: store.Values{"parent_id": other.ID}})
		requireCode(t, err, store.EFORBIDDEN)
		requireMessage(t, err, "move")
	})
	t.Run("SharedOK", func(t *testing.T) {
		v := mustSave(t, s, actx(t, actAlice), store.KindProduct, p.ID, store.Update{BaseVersion: 1, Set: store.Values{"availability": "backorder"}}).Record.Version
		v = mustSave(t, s, actx(t, actWorker), store.KindProduct, p.ID, store.Update{BaseVersion: v, Set: store.Values{"availability": "in_stock"}}).Record.Version
		mustSave(t, s, actx(t, actWorker), store.KindProduct, p.ID, store.Update{Add: map[string]int64{"stock": 2}})
		mustSave(t, s, actx(t, actAlice), store.KindProduct, p.ID, store.Update{Add: map[string]int64{"stock": -1}})
		got := mustFind(t, s, store.KindProduct, p.ID)
		if got.Fields["availability"] != "in_stock" || got.Fields["stock"] != int64(11) || got.Version != v+2 {
			t.Errorf("after shared writes: %v v%d", got.Fields, got.Version)
		}
	})
	t.Run("OwnFieldsOK", func(t *testing.T) {
		cur := mustFind(t, s, store.KindProduct, p.ID)
		mustSave(t, s, actx(t, actWorker), store.KindProduct, p.ID, store.Update{BaseVersion: cur.Version, Set: store.Values{"thumbnail": "p.png", "checksum": "c"}})
		mustSave(t, s, actx(t, actAlice), store.KindProduct, p.ID, store.Update{BaseVersion: cur.Version + 1, Set: store.Values{"name": "n", "price": int64(5)}})
	})
}

func testRelative(t *testing.T, open Opener) {
	t.Run("OK", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "P")
		mustSave(t, s, actx(t, actAlice), store.KindProduct, p.ID, store.Update{Add: map[string]int64{"stock": 5}})
		// A relative change applies to whatever version is current, stale base or not.
		mustSave(t, s, actx(t, actBob), store.KindProduct, p.ID, store.Update{BaseVersion: 0, Add: map[string]int64{"stock": -3}})
		got := mustFind(t, s, store.KindProduct, p.ID)
		if got.Fields["stock"] != int64(12) || got.Version != 3 {
			t.Errorf("stock = %v v%d, want 12 v3", got.Fields["stock"], got.Version)
		}
		cs := mustChanges(t, s, 0)
		last := cs[len(cs)-1]
		if last.Event != store.EventSaved || last.Deltas["stock"] != -3 || !slices.Equal(last.Fields, []string{"stock"}) {
			t.Errorf("last change = %+v, want saved with delta stock -3", last)
		}
	})
}

func testUpdateIdempotency(t *testing.T, open Opener) {
	t.Run("Replay", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "P")
		u := store.Update{Add: map[string]int64{"stock": -1}, IdempotencyKey: "order-17"}
		first := mustSave(t, s, actx(t, actAlice), store.KindProduct, p.ID, u)
		second := mustSave(t, s, actx(t, actAlice), store.KindProduct, p.ID, u)
		if first.Replayed || !second.Replayed {
			t.Fatalf("replayed = %v, %v; want false, true", first.Replayed, second.Replayed)
		}
		if second.Record.Version != 2 || second.Record.Fields["stock"] != int64(9) {
			t.Errorf("replayed record = v%d stock %v, want v2 stock 9", second.Record.Version, second.Record.Fields["stock"])
		}
		if got := mustFind(t, s, store.KindProduct, p.ID); got.Fields["stock"] != int64(9) || got.Version != 2 {
			t.Errorf("stock = %v v%d, want 9 v2 (applied once)", got.Fields["stock"], got.Version)
		}
		if cs := mustChanges(t, s, 0); len(cs) != 2 {
			t.Errorf("change log = %d entries, want 2 (create, one save)", len(cs))
		}
		k, err := s.FindKey(t.Context(), store.ScopeAPI, "order-17")
		if err != nil || k.Status != store.KeyCompleted {
			t.Fatalf("key = %+v, %v; want COMPLETED", k, err)
		}
	})
	t.Run("ErrDifferentRequest", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "P")
		mustSave(t, s, actx(t, actAlice), store.KindProduct, p.ID, store.Update{Add: map[string]int64{"stock": -1}, IdempotencyKey: "k1"})
		_, err := s.UpdateRecord(actx(t, actAlice), store.KindProduct, p.ID, store.Update{Add: map[string]int64{"stock": -2}, IdempotencyKey: "k1"})
		requireCode(t, err, store.EINVALID)
		requireMessage(t, err, "idempotency key k1 was already used for a different request")
		if got := mustFind(t, s, store.KindProduct, p.ID); got.Fields["stock"] != int64(9) {
			t.Errorf("stock = %v, want 9", got.Fields["stock"])
		}
	})
	t.Run("FailedSaveLeavesKeyFree", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "P")
		mustSave(t, s, actx(t, actBob), store.KindProduct, p.ID, store.Update{BaseVersion: 1, Set: store.Values{"name": "b"}})
		u := store.Update{BaseVersion: 1, Set: store.Values{"price": int64(1)}, IdempotencyKey: "k2"}
		_, err := s.UpdateRecord(actx(t, actAlice), store.KindProduct, p.ID, u)
		requireCode(t, err, store.ECONFLICT)
		// The conflict wrote nothing, not even the key: the same request conflicts again
		// rather than replaying a result that never happened.
		_, err = s.UpdateRecord(actx(t, actAlice), store.KindProduct, p.ID, u)
		requireCode(t, err, store.ECONFLICT)
	})
}

func testLockedUpdate(t *testing.T, open Opener) {
	t.Run("OK", func(t *testing.T) {
		s := fresh(t, open)
		d := mustCreateDoc(t, s, "doc", nil)
		res, err := s.LockedUpdate(actx(t, actWorker), store.KindDocument, d.ID, func(r *store.Record) (store.Update, error) {
			n := int64(len(strings.Fields(r.Fields["body"].(string))))
			return store.Update{Set: store.Values{"word_count": n}}, nil
		})
		if err != nil {
			t.Fatalf("locked update: %v", err)
		}
		if res.Record.Version != 2 || res.Record.Fields["word_count"] != int64(4) {
			t.Errorf("record = v%d word_count %v, want v2 4", res.Record.Version, res.Record.Fields["word_count"])
		}
	})
	t.Run("NothingToWrite", func(t *testing.T) {
		s := fresh(t, open)
		d := mustCreateDoc(t, s, "doc", nil)
		res, err := s.LockedUpdate(actx(t, actWorker), store.KindDocument, d.ID, func(*store.Record) (store.Update, error) {
			return store.Update{}, nil
		})
		if err != nil || res != nil {
			t.Fatalf("locked update = %v, %v; want nil, nil", res, err)
		}
		if got := mustFind(t, s, store.KindDocument, d.ID); got.Version != 1 {
			t.Errorf("version = %d, want 1", got.Version)
		}
	})
	t.Run("ErrFromFn", func(t *testing.T) {
		s := fresh(t, open)
		d := mustCreateDoc(t, s, "doc", nil)
		boom := errors.New("boom")
		_, err := s.LockedUpdate(actx(t, actWorker), store.KindDocument, d.ID, func(*store.Record) (store.Update, error) {
			return store.Update{}, boom
		})
		if !errors.Is(err, boom) {
			t.Errorf("error = %v, want boom", err)
		}
	})
	t.Run("ErrForbidden", func(t *testing.T) {
		s := fresh(t, open)
		d := mustCreateDoc(t, s, "doc", nil)
		_, err := s.LockedUpdate(actx(t, actWorker), store.KindDocument, d.ID, func(*store.Record) (store.Update, error) {
			return store.Update{Set: store.Values{"title": "robot"}}, nil
		})
		requireCode(t, err, store.EFORBIDDEN)
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		s := fresh(t, open)
		_, err := s.LockedUpdate(actx(t, actWorker), store.KindDocument, 4040, func(*store.Record) (store.Update, error) {
			return store.Update{Set: store.Values{"word_count": int64(1)}}, nil
		})
		requireCode(t, err, store.ENOTFOUND)
	})
}
