package sqlite_test

import (
	"path/filepath"
	"testing"

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
