package sqlite_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/sqlite"
)

// TestSearch_SortedPage: a page of a search sorted by a field is the first of all matches in
// that order, for an indexed query and a short one. Each field's lookup stops after a page
// of ids only when the listing is in id order; in another order the page's records may have
// any ids (here the names run against the ids).
func TestSearch_SortedPage(t *testing.T) {
	ctx := store.WithActor(t.Context(), store.Actor{Name: "alice", Role: store.RoleEditor})
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "t.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i := range 10 {
		if _, err := db.CreateRecord(ctx, store.KindProduct, store.Values{"sku": fmt.Sprintf("S-%d", i), "name": fmt.Sprintf("Lamp %c", 'z'-i)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{"LAMP", "la"} {
		rs, err := db.FindRecords(ctx, store.Filter{Kind: store.KindProduct, Search: q, Sort: "name", Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, r := range rs {
			ids = append(ids, r.ID)
		}
		if want := []int64{10, 9, 8}; !slices.Equal(ids, want) {
			t.Errorf("search %q sorted by name, first 3 = %v, want %v (Lamp q, r, s)", q, ids, want)
		}
	}
}
