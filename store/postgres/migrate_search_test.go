package postgres

import (
	"testing"

	"github.com/tandem-editor/tandem/store/postgres/pgtest"
	"github.com/tandem-editor/tandem/store/storetest"
)

// TestOpen_MigrateSearchFolds opens a schema written before search folded its text: the
// migration fills the folded columns of the records that exist, in Go, so a non-ASCII search
// finds them as it finds new ones.
func TestOpen_MigrateSearchFolds(t *testing.T) {
	dsn := pgtest.DSN(t)
	mustVersion1(t, dsn,
		`INSERT INTO products (id, sku, name, updated_at, updated_by) VALUES
			(1, 'STRASSE-1', 'Ёлка', now(), 'old'), (2, 'X-2', 'Straße', now(), 'old'), (3, 'Y-3', 'plain', now(), 'old')`,
		`INSERT INTO products (id, sku, name, description, categories, updated_at, updated_by) VALUES
			(4, 'T-4', 'text', 'Ein Tisch aus STRASSBURG, lang beschrieben.', '{GARTEN,Küche}', now(), 'old')`,
		`INSERT INTO documents (id, title, updated_at, updated_by) VALUES (1, 'İzmir', now(), 'old'), (2, 'Ankara', now(), 'old')`,
		`INSERT INTO documents (id, title, body, tags, updated_at, updated_by) VALUES
			(3, 'Notes', E'Line one\nΣΟΦΊΑ in the second line', '{Sécurité}', now(), 'old')`,
	)
	storetest.CheckMigratedSearch(t, mustOpen(t, dsn))
}
