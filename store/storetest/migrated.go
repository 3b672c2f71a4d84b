package storetest

import (
	"slices"
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
)

// The checks of a store migrated from schema version 1: each SQL store's test builds a
// version 1 database in its own dialect, with the rows the check names, opens it (which
// migrates it) and hands the store here, so both stores are held to one expectation.

// CheckMigratedSearch checks search on a store migrated from version 1 whose records were
// written before search folded its text: products 1 (sku STRASSE-1, name Ёлка), 2 (name
// Straße), 3 (name plain) and 4 (description with STRASSBURG, categories GARTEN and Küche);
// documents 1 (title İzmir), 2 (title Ankara) and 3 (body with ΣΟΦΊΑ, tag Sécurité). The
// migrations must have filled their folded columns and text indexes, so a non-ASCII search
// finds them as it finds new ones.
func CheckMigratedSearch(t *testing.T, st store.Store) {
	t.Helper()
	for _, tc := range []struct {
		kind  store.Kind
		query string
		want  []int64
	}{
		{store.KindProduct, "straße", []int64{1, 2}}, // sku of 1, name of 2
		{store.KindProduct, "ЁЛКА", []int64{1}},
		{store.KindProduct, "PLAIN", []int64{3}},
		{store.KindDocument, "izmir", []int64{1}},
		{store.KindDocument, "ANKARA", []int64{2}},
		// The text fields' folded columns (migration search_text), through the index.
		{store.KindProduct, "straßburg", []int64{4}},
		{store.KindProduct, "KÜCHE", []int64{4}},
		{store.KindProduct, "garten", []int64{4}},
		{store.KindProduct, "ß", []int64{1, 2, 4}},
		{store.KindDocument, "σοφία in", []int64{3}},
		{store.KindDocument, "SÉCURITÉ", []int64{3}},
	} {
		rs, err := st.FindRecords(t.Context(), store.Filter{Kind: tc.kind, Search: tc.query})
		if err != nil {
			t.Fatalf("search %q: %v", tc.query, err)
		}
		got := make([]int64, 0, len(rs))
		for _, r := range rs {
			got = append(got, r.ID)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("search %s %q = %v, want %v", tc.kind, tc.query, got, tc.want)
		}
	}
}

// CheckMigratedSKUKeys checks a store migrated from version 1 that held products 1 (sku
// ABC-1), 2 (a lookalike of ABC-1) and 3 (XYZ-9): keys holds the sku_key column the
// migration wrote, by product id. The oldest lookalike keeps the plain key, the later one
// gets the key joined to its id, and no new lookalike can join them.
func CheckMigratedSKUKeys(t *testing.T, st store.Store, keys map[int64]string) {
	t.Helper()
	if keys[1] != "abc-1" || keys[3] != "xyz-9" || keys[2] != "abc-1"+store.SKUKeySeparator+"2" {
		t.Errorf("keys = %+v, want abc-1, abc-1+separator+2, xyz-9", keys)
	}
	ctx := store.WithActor(t.Context(), store.Actor{Name: "alice", Role: store.RoleEditor})
	_, err := st.CreateRecord(ctx, store.KindProduct, store.Values{"sku": "Abc-1", "name": "third"})
	if store.ErrorCode(err) != store.EINVALID || !strings.Contains(err.Error(), "(product 1 has ABC-1") {
		t.Errorf("create of a third lookalike = %v, want EINVALID naming product 1", err)
	}
}
