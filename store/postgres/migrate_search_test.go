package postgres

import (
	"slices"
	"testing"

	"github.com/tandem-editor/tandem/store/postgres/pgtest"

	"github.com/jackc/pgx/v5"
	"github.com/tandem-editor/tandem/store"
)

// TestOpen_MigrateSearchFolds opens a schema written before search folded its text: the
// migration fills the folded columns of the records that exist, in Go, so a non-ASCII search
// finds them as it finds new ones.
func TestOpen_MigrateSearchFolds(t *testing.T) {
	dsn := pgtest.DSN(t)
	ms, err := migrations()
	if err != nil || len(ms) == 0 || ms[0].version != 1 {
		t.Fatalf("migrations = %v, %v", ms, err)
	}
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		ms[0].sql,
		"CREATE TABLE schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
		"INSERT INTO schema_migrations (version) VALUES (1)",
		`INSERT INTO products (id, sku, name, updated_at, updated_by) VALUES
			(1, 'STRASSE-1', 'Ёлка', now(), 'old'), (2, 'X-2', 'Straße', now(), 'old'), (3, 'Y-3', 'plain', now(), 'old')`,
		`INSERT INTO products (id, sku, name, description, categories, updated_at, updated_by) VALUES
			(4, 'T-4', 'text', 'Ein Tisch aus STRASSBURG, lang beschrieben.', '{GARTEN,Küche}', now(), 'old')`,
		`INSERT INTO documents (id, title, updated_at, updated_by) VALUES (1, 'İzmir', now(), 'old'), (2, 'Ankara', now(), 'old')`,
		`INSERT INTO documents (id, title, body, tags, updated_at, updated_by) VALUES
			(3, 'Notes', E'Line one\nΣΟΦΊΑ in the second line', '{Sécurité}', now(), 'old')`,
	} {
		if _, err := conn.Exec(t.Context(), q); err != nil {
			t.Fatalf("build a version 1 schema: %v", err)
		}
	}
	conn.Close(t.Context())

	db := mustOpen(t, dsn)
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
		rs, err := db.FindRecords(t.Context(), store.Filter{Kind: tc.kind, Search: tc.query})
		if err != nil {
			t.Fatalf("search %q: %v", tc.query, err)
		}
		var got []int64
		for _, r := range rs {
			got = append(got, r.ID)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("search %s %q = %v, want %v", tc.kind, tc.query, got, tc.want)
		}
	}
}
