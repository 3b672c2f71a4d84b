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
