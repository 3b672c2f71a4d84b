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

// TestStreamRecords_EachSearchPlan runs the stream contract with a streamed search always
// read through the search tables (unless every row matches) and always by scanning the
// record table (whenever a row matches): both find what FindRecords finds.
func TestStreamRecords_EachSearchPlan(t *testing.T) {
	pgtest.ServerDSN(t)
	for _, share := range []int64{1, 1 << 40} {
		old := *postgres.ScanShare
		*postgres.ScanShare = share
		t.Cleanup(func() { *postgres.ScanShare = old })
		storetest.RunStream(t, openFresh)
		*postgres.ScanShare = old
	}
}
