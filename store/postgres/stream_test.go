package postgres_test

import (
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/tandem-editor/tandem/store"
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

// TestStreamRecords_PagePlan: with PagePlan, a page of a stream without a search is the
// primary key's index scan, never a sequential scan of the table and a sort, whatever the
// statistics say (here: none, the table never analyzed, as after a large import with
// autovacuum off or not yet round).
func TestStreamRecords_PagePlan(t *testing.T) {
	dsn := pgtest.DSN(t)
	st, err := postgres.Open(t.Context(), dsn, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	tx, err := conn.BeginTx(t.Context(), pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(t.Context()) }()
	if _, err := tx.Exec(t.Context(), postgres.PagePlan); err != nil {
		t.Fatal(err)
	}
	var plan []string
	rows, err := tx.Query(t.Context(), "EXPLAIN SELECT id, version, sku FROM products WHERE id > $1 ORDER BY id LIMIT 5000", int64(7))
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, line)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(plan, "\n")
	if !strings.Contains(got, "Index Scan using products_pkey") || strings.Contains(got, "Seq Scan") || strings.Contains(got, "Sort") {
		t.Errorf("a page's plan:\n%s\nwant the primary key's index scan alone", got)
	}
}
