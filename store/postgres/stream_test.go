package postgres_test

import (
	"testing"

	"github.com/tandem-editor/tandem/store/postgres"
	"github.com/tandem-editor/tandem/store/postgres/pgtest"
	"github.com/tandem-editor/tandem/store/storetest"
)

// TestStreamRecords_Pages streams in pages of a few rows: page boundaries (a page ending
// exactly at the last record, searches across pages) change nothing of what is streamed.
func TestStreamRecords_Pages(t *testing.T) {
	pgtest.ServerDSN(t)
	for _, n := range []int{1, 3, 4} {
		old := *postgres.StreamPage
		*postgres.StreamPage = n
		t.Cleanup(func() { *postgres.StreamPage = old })
		storetest.RunStream(t, openFresh)
		*postgres.StreamPage = old
	}
}
