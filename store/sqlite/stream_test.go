package sqlite_test

import (
	"testing"

	"github.com/tandem-editor/tandem/store/sqlite"
	"github.com/tandem-editor/tandem/store/storetest"
)

// TestStreamRecords_Pages streams in pages of three rows: page boundaries (a page ending
// exactly at the last record, searches across pages) change nothing of what is streamed.
func TestStreamRecords_Pages(t *testing.T) {
	for _, n := range []int{1, 3, 4} {
		old := *sqlite.StreamPage
		*sqlite.StreamPage = n
		t.Cleanup(func() { *sqlite.StreamPage = old })
		storetest.RunStream(t, openTemp)
		*sqlite.StreamPage = old
	}
}

// TestStreamRecords_EachSearchPlan runs the stream contract with a streamed search always
// read through the trigram index (unless every row matches) and always by scanning the
// table (whenever a row matches): both find what FindRecords finds.
func TestStreamRecords_EachSearchPlan(t *testing.T) {
	for _, share := range []int64{1, 1 << 40} {
		old := *sqlite.ScanShare
		*sqlite.ScanShare = share
		t.Cleanup(func() { *sqlite.ScanShare = old })
		storetest.RunStream(t, openTemp)
		*sqlite.ScanShare = old
	}
}
