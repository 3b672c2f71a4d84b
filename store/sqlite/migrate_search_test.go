package sqlite_test

import (
	"database/sql"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/sqlite"
	"github.com/tandem-editor/tandem/store/storetest"
)

// TestOpen_MigrateSearchFolds opens a database written before search folded its text: the
// migration fills the folded columns of the records that exist, in Go, so a non-ASCII search
// finds them as it finds new ones.
func TestOpen_MigrateSearchFolds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v1.db")
	mustVersion1(t, path,
		`INSERT INTO products (id, sku, name, updated_at, updated_by) VALUES
			(1, 'STRASSE-1', 'Ёлка', '2026-01-01T00:00:00.000Z', 'old'),
			(2, 'X-2', 'Straße', '2026-01-01T00:00:00.000Z', 'old'),
			(3, 'Y-3', 'plain', '2026-01-01T00:00:00.000Z', 'old')`,
		`INSERT INTO products (id, sku, name, description, categories, updated_at, updated_by) VALUES
			(4, 'T-4', 'text', 'Ein Tisch aus STRASSBURG, lang beschrieben.', '["GARTEN","Küche"]', '2026-01-01T00:00:00.000Z', 'old')`,
		`INSERT INTO documents (id, title, updated_at, updated_by) VALUES
			(1, 'İzmir', '2026-01-01T00:00:00.000Z', 'old'), (2, 'Ankara', '2026-01-01T00:00:00.000Z', 'old')`,
		`INSERT INTO documents (id, title, body, tags, updated_at, updated_by) VALUES
			(3, 'Notes', 'Line one\nΣΟΦΊΑ in the second line', '["Sécurité"]', '2026-01-01T00:00:00.000Z', 'old')`,
	)

	storetest.CheckMigratedSearch(t, mustOpen(t, path))
}

// TestOpen_MigrateFoldsToSideTables opens a database at schema version 10, whose records
// hold their search folds in their own rows (<field>_fold, the content of the FTS5 indexes),
// as tandem wrote them: the migration moves every fold to its field's side table, drops the
// columns and rebuilds the indexes, so search finds what it found, from then on without
// the folds in the rows. A row another program wrote without folds (NULL) stays unfound
// until tandem saves it.
func TestOpen_MigrateFoldsToSideTables(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v10.db")
	const at = "2026-01-01T00:00:00.000Z"
	product := func(id int64, vals store.Values) []any {
		f := store.DefaultRegistry().Folds(store.KindProduct, vals)
		cats, _ := json.Marshal(vals["categories"])
		if vals["categories"] == nil {
			cats = []byte("[]")
		}
		return []any{`INSERT INTO products (id, sku, sku_key, name, description, categories,
				sku_fold, name_fold, description_fold, categories_fold, updated_at, updated_by)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'old')`,
			id, vals["sku"], store.SKUKey(vals["sku"].(string)), vals["name"], vals["description"], string(cats),
			f["sku_fold"], f["name_fold"], f["description_fold"], f["categories_fold"], at}
	}
	document := func(id int64, vals store.Values) []any {
		f := store.DefaultRegistry().Folds(store.KindDocument, vals)
		tags, _ := json.Marshal(vals["tags"])
		if vals["tags"] == nil {
			tags = []byte("[]")
		}
		return []any{`INSERT INTO documents (id, title, body, tags, title_fold, body_fold, tags_fold, updated_at, updated_by)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'old')`,
			id, vals["title"], vals["body"], string(tags), f["title_fold"], f["body_fold"], f["tags_fold"], at}
	}
	mustVersion(t, path, 10,
		product(1, store.Values{"sku": "STRASSE-1", "name": "Ёлка", "description": ""}),
		product(2, store.Values{"sku": "X-2", "name": "Straße", "description": ""}),
		product(3, store.Values{"sku": "Y-3", "name": "plain", "description": ""}),
		product(4, store.Values{"sku": "T-4", "name": "text", "description": "Ein Tisch aus STRASSBURG, lang beschrieben.",
			"categories": []string{"GARTEN", "Küche"}}),
		[]any{`INSERT INTO products (id, sku, sku_key, name, updated_at, updated_by) VALUES (5, 'F-5', 'f-5', 'Fremd', ?, 'other program')`, at},
		document(1, store.Values{"title": "İzmir", "body": ""}),
		document(2, store.Values{"title": "Ankara", "body": ""}),
		document(3, store.Values{"title": "Notes", "body": "Line one\nΣΟΦΊΑ in the second line", "tags": []string{"Sécurité"}}),
	)

	db := mustOpen(t, path)
	if got, want := db.SchemaVersion(), sqlite.LatestSchemaVersion(); got != want {
		t.Fatalf("schema version = %d, want %d", got, want)
	}
	storetest.CheckMigratedSearch(t, db)

	check, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer check.Close()
	for _, tbl := range []string{"products", "documents"} {
		var n int
		if err := check.QueryRow(`SELECT count(*) FROM pragma_table_info(?) WHERE name LIKE '%\_fold' ESCAPE '\'`, tbl).Scan(&n); err != nil || n != 0 {
			t.Errorf("%s still has %d fold columns (%v)", tbl, n, err)
		}
	}
	mustSearchRows(t, check, map[store.Kind]int{store.KindProduct: 4, store.KindDocument: 3})

	ctx := store.WithActor(t.Context(), store.Actor{Name: "alice", Role: store.RoleEditor})
	find := func(kind store.Kind, q string) []int64 {
		t.Helper()
		rs, err := db.FindRecords(t.Context(), store.Filter{Kind: kind, Search: q})
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, r := range rs {
			ids = append(ids, r.ID)
		}
		return ids
	}
	if got := find(store.KindProduct, "fremd"); len(got) != 0 {
		t.Errorf("the row without folds is found: %v", got)
	}
	if _, err := db.UpdateRecord(ctx, store.KindProduct, 5, store.Update{BaseVersion: 1, Set: store.Values{"name": "Fremdling"}}); err != nil {
		t.Fatal(err)
	}
	if got := find(store.KindProduct, "FREMD"); !slices.Equal(got, []int64{5}) {
		t.Errorf("search after tandem saved the name = %v, want [5]", got)
	}
	// A title edit leaves the body's fold where the migration put it.
	if _, err := db.UpdateRecord(ctx, store.KindDocument, 3, store.Update{BaseVersion: 1, Set: store.Values{"title": "Notizen"}}); err != nil {
		t.Fatal(err)
	}
	if got := find(store.KindDocument, "σοφία in"); !slices.Equal(got, []int64{3}) {
		t.Errorf("body search after a title edit = %v, want [3]", got)
	}
	if got := find(store.KindDocument, "notiz"); !slices.Equal(got, []int64{3}) {
		t.Errorf("title search after a title edit = %v, want [3]", got)
	}
}

// TestOpen_MigrateSearchPerKind opens a database at schema version 16, whose searched
// fields each have a side table of folds and an FTS5 index of their own, as tandem wrote
// them: migration 0017 moves every fold into its kind's one search table, builds the kind's
// index and drops the fields' tables and triggers, so search finds what it found, pages by
// id as before, and follows saves and deletes from then on.
func TestOpen_MigrateSearchPerKind(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v16.db")
	const at = "2026-01-01T00:00:00.000Z"
	var stmts [][]any
	record := func(kind store.Kind, id int64, vals store.Values) {
		tbl := string(kind) + "s"
		for _, f := range store.DefaultRegistry().Fields(kind) {
			if _, ok := vals[f.Name]; !ok && f.Type == store.TypeSet {
				vals[f.Name] = []string{} // tandem wrote every searched field's fold
			}
		}
		cols, marks, args := []string{"id", "updated_at", "updated_by"}, []string{"?", "?", "'old'"}, []any{id, at}
		for _, f := range store.DefaultRegistry().Fields(kind) {
			v, ok := vals[f.Name]
			if !ok {
				continue
			}
			if items, ok := v.([]string); ok {
				b, _ := json.Marshal(items)
				v = string(b)
			}
			cols, marks, args = append(cols, f.Name), append(marks, "?"), append(args, v)
		}
		if kind == store.KindProduct {
			cols, marks, args = append(cols, "sku_key"), append(marks, "?"), append(args, store.SKUKey(vals["sku"].(string)))
		}
		stmts = append(stmts, append([]any{"INSERT INTO " + tbl + " (" + strings.Join(cols, ", ") + ") VALUES (" + strings.Join(marks, ", ") + ")"}, args...))
		for col, fold := range store.DefaultRegistry().Folds(kind, vals) {
			side := tbl + "_" + strings.TrimSuffix(col, "_fold") + "_search"
			stmts = append(stmts, []any{"INSERT INTO " + side + " (id, fold) VALUES (?, ?)", id, fold})
		}
	}
	record(store.KindProduct, 1, store.Values{"sku": "STRASSE-1", "name": "Ёлка", "description": ""})
	record(store.KindProduct, 2, store.Values{"sku": "X-2", "name": "Straße", "description": ""})
	record(store.KindProduct, 3, store.Values{"sku": "Y-3", "name": "plain", "description": ""})
	record(store.KindProduct, 4, store.Values{"sku": "T-4", "name": "text", "description": "Ein Tisch aus STRASSBURG, lang beschrieben.",
		"categories": []string{"GARTEN", "Küche"}})
	record(store.KindDocument, 1, store.Values{"title": "İzmir", "body": ""})
	record(store.KindDocument, 2, store.Values{"title": "Ankara", "body": ""})
	record(store.KindDocument, 3, store.Values{"title": "Notes", "body": "Line one\nΣΟΦΊΑ in the second line", "tags": []string{"Sécurité"}})
	mustVersion(t, path, 16, stmts...)

	db := mustOpen(t, path)
	if got, want := db.SchemaVersion(), sqlite.LatestSchemaVersion(); got != want {
		t.Fatalf("schema version = %d, want %d", got, want)
	}
	storetest.CheckMigratedSearch(t, db)
	check, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer check.Close()
	mustSearchRows(t, check, map[store.Kind]int{store.KindProduct: 4, store.KindDocument: 3})
	var left int
	if err := check.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name GLOB 'products_*_search*' OR name GLOB 'products_*_fts*'
		OR name GLOB 'documents_*_search*' OR name GLOB 'documents_*_fts*'`).Scan(&left); err != nil || left != 0 {
		t.Errorf("%d search objects of single fields are left (%v), want none", left, err)
	}

	find := func(f store.Filter) []int64 {
		t.Helper()
		rs, err := db.FindRecords(t.Context(), f)
		if err != nil {
			t.Fatal(err)
		}
		ids := []int64{}
		for _, r := range rs {
			ids = append(ids, r.ID)
		}
		return ids
	}
	// "ß" is in the sku of 1, the name of 2 and the description of 4: pages of one.
	for _, tc := range []struct {
		after int64
		want  []int64
	}{{0, []int64{1}}, {1, []int64{2}}, {2, []int64{4}}, {4, []int64{}}} {
		for _, q := range []string{"ß", "straß"} { // a scan and an index lookup
			if got := find(store.Filter{Kind: store.KindProduct, Search: q, AfterID: tc.after, Limit: 1}); !slices.Equal(got, tc.want) {
				t.Errorf("search %q after %d, a page of 1 = %v, want %v", q, tc.after, got, tc.want)
			}
		}
	}
	ctx := store.WithActor(t.Context(), store.Actor{Name: "alice", Role: store.RoleEditor})
	if _, err := db.UpdateRecord(ctx, store.KindDocument, 3, store.Update{BaseVersion: 1, Set: store.Values{"title": "Notizen"}}); err != nil {
		t.Fatal(err)
	}
	if got := find(store.Filter{Kind: store.KindDocument, Search: "notiz"}); !slices.Equal(got, []int64{3}) {
		t.Errorf("title search after a title edit = %v, want [3]", got)
	}
	if got := find(store.Filter{Kind: store.KindDocument, Search: "σοφία in"}); !slices.Equal(got, []int64{3}) {
		t.Errorf("body search after a title edit = %v, want [3]", got)
	}
	if _, err := db.DeleteRecord(ctx, store.KindProduct, 2, store.Delete{ExpectVersion: 1}); err != nil {
		t.Fatal(err)
	}
	if got := find(store.Filter{Kind: store.KindProduct, Search: "ß"}); !slices.Equal(got, []int64{1, 4}) {
		t.Errorf("search after a delete = %v, want [1 4]", got)
	}
	mustSearchRows(t, check, map[store.Kind]int{store.KindDocument: 3})
}

// mustSearchRows checks that the search table of each kind of the sample in want has want
// rows of each of its folded fields, and that its FTS5 index agrees with it.
func mustSearchRows(t *testing.T, check *sql.DB, want map[store.Kind]int) {
	t.Helper()
	for kind, want := range want {
		tbl := string(kind) + "s"
		for _, name := range store.DefaultRegistry().FoldedFields(kind) {
			var n int
			if err := check.QueryRow(`SELECT count(*) FROM `+tbl+`_search s JOIN search_slots l ON l.tbl = ? AND l.field = ?
				AND (s.key & 1023) = l.slot`, tbl, name).Scan(&n); err != nil || n != want {
				t.Errorf("%s.%s has %d search rows (%v), want %d: one per record tandem wrote", tbl, name, n, err, want)
			}
		}
		fts := tbl + "_fts"
		if _, err := check.Exec("INSERT INTO " + fts + " (" + fts + ", rank) VALUES ('integrity-check', 1)"); err != nil {
			t.Errorf("%s after the migration: %v", fts, err)
		}
	}
}
