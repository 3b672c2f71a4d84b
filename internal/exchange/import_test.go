package exchange

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/memory"
)

// creates is a CSV file of n rows that create products S-00001... (all rows the same length),
// with price "bad!" on the rows from bad on (none when bad is 0).
func creates(n, bad int, name string) []byte {
	var b bytes.Buffer
	b.WriteString("kind,sku,name,price\n")
	for i := 1; i <= n; i++ {
		price := "1.00"
		if bad > 0 && i >= bad {
			price = "bad!"
		}
		fmt.Fprintf(&b, "product,S-%05d,%s %05d %s,%s\n", i, name, i, strings.Repeat("x", 60), price)
	}
	return b.Bytes()
}

// countProducts counts the products with ids 1..n in st.
func countProducts(t *testing.T, st store.Store, n int) (count, last int) {
	t.Helper()
	for id := 1; id <= n; id++ {
		_, err := st.FindRecord(as(t, alice), store.KindProduct, int64(id))
		if err == nil {
			count, last = count+1, id
		} else if store.ErrorCode(err) != store.ENOTFOUND {
			t.Fatal(err)
		}
	}
	return count, last
}

// TestImport_FileChangedBetweenPasses: a file rewritten in place after the first pass (or
// during a later one) stops the import at the first changed chunk with a clear error (bad
// input), before any changed row is applied: --all-or-nothing writes nothing when the change
// comes during its check pass or before the first chunk's rows are written, and a write
// pass stops at once, its report holding exactly the rows that landed.
func TestImport_FileChangedBetweenPasses(t *testing.T) {
	const n, bad = 1600, 1000 // about 150 KiB: the changed rows are in the second chunk
	orig := creates(n, 0, "Name")
	if len(orig) < 2*chunkSize {
		t.Fatalf("the file is %d bytes, want two chunks or more", len(orig))
	}
	cases := []struct {
		name         string
		allOrNothing bool
		change       []byte
		// when is the progress count at which the file is rewritten: 0 between the first
		// pass and ApplyAll, -1 at the end of --all-or-nothing's check pass.
		when  int
		lands bool // some rows (those before the change) land
	}{
		{"write pass", false, creates(n, bad, "Name"), 0, true},
		{"all-or-nothing, during the check", true, creates(n, bad, "Name"), 1, false},
		{"all-or-nothing, after the check", true, creates(n, 0, "Else"), -1, false},
		{"all-or-nothing, after the check, in the tail", true, creates(n, bad, "Name"), -1, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "many.csv")
			if err := os.WriteFile(path, orig, 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			st := memory.New(store.Options{})
			src, err := NewSource(f, CSV, st.Registry())
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			total, err := src.Scan()
			if err != nil || total != n {
				t.Fatalf("first pass: %d rows, %v", total, err)
			}
			rewrite := func() {
				if err := os.WriteFile(path, c.change, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if c.when == 0 {
				rewrite()
			}
			calls := 0
			progress := func(done int) {
				calls++
				if c.when > 0 && calls == c.when || c.when == -1 && calls == total {
					rewrite()
				}
			}
			rep, err := NewReport()
			if err != nil {
				t.Fatal(err)
			}
			defer rep.Close()
			err = NewImporter(st, ImportOptions{KeyPrefix: "t"}).ApplyAll(as(t, alice), src, c.allOrNothing, progress, rep)
			if !errors.Is(err, errFileChanged) || store.ErrorCode(err) != store.EINVALID || !strings.Contains(err.Error(), "the file changed while it was imported") {
				t.Fatalf("ApplyAll = %v, want the file-changed error (bad input)", err)
			}
			count, last := countProducts(t, st, n)
			sum := rep.Summary()
			if sum[Invalid] != 0 || sum[Created] != count {
				t.Errorf("report %v with %d products in the store: every created row in the report, no changed row read", sum, count)
			}
			if !c.lands && count != 0 {
				t.Errorf("%d products created, want none", count)
			}
			if c.when > 0 {
				if sum[NotWritten] == 0 {
					t.Errorf("report %v, want the rows checked before the change not-written", sum)
				}
				rep.Each(func(r Result) error {
					if r.Outcome == NotWritten && !strings.Contains(r.Message, "the file changed during the check") {
						t.Errorf("row %d: %q, want it to say the file changed", r.Row, r.Message)
					}
					return nil
				})
			}
			if c.lands {
				if count == 0 || last >= bad || count != last {
					t.Errorf("%d products created (the last id %d), want the rows before row %d", count, last, bad)
				}
				if !strings.Contains(err.Error(), fmt.Sprintf("the %d rows reported above were applied", count)) {
					t.Errorf("the error does not say which rows landed: %v", err)
				}
			}
		})
	}
}

// TestImport_JSONLCutShort: JSON Lines whose last line has no line end and does not parse
// was cut short (a pipe closed early): it is refused whole. A last line without a line end
// that parses is a row; a bad line with a line end is an invalid row.
func TestImport_JSONLCutShort(t *testing.T) {
	st := memory.New(store.Options{})
	mustProducts(t, st, 2)
	ctx := as(t, alice)
	row1 := `{"kind":"product","id":1,"version":1,"fields":{"name":"T2"}}` + "\n"
	pipe := func(s string) io.Reader { return struct{ io.Reader }{strings.NewReader(s)} }
	_, _, err := importAll(ctx, st, pipe(row1+`{"kind":"prod`), JSONL, ImportOptions{KeyPrefix: "a"}, false)
	if store.ErrorCode(err) != store.EINVALID || !strings.Contains(err.Error(), "line 2: the file ends in the middle of a row") {
		t.Fatalf("cut-short JSONL: %v, want it refused whole", err)
	}
	if r, _ := st.FindRecord(ctx, store.KindProduct, 1); r.Version != 1 {
		t.Fatalf("a refused file wrote product 1: %+v", r)
	}
	res, sum, err := importAll(ctx, st, pipe(row1+`{"kind":"product","id":2,"version":1,"fields":{"name":"T3"}}`), JSONL, ImportOptions{KeyPrefix: "b"}, false)
	if err != nil || sum[Updated] != 2 {
		t.Fatalf("a whole last line without a line end: %v %v %+v", err, sum, res)
	}
	res, sum, err = importAll(ctx, st, pipe(row1+"{\"kind\":\"prod\n"), JSONL, ImportOptions{KeyPrefix: "c"}, false)
	if err != nil || sum[Invalid] != 1 || res[1].Outcome != Invalid {
		t.Fatalf("a bad last line with its line end: %v %v %+v", err, sum, res)
	}
}

// TestImport_ReplayedShowsCurrentVersion: a row imported before is unchanged, and when the
// record moved on since, the report gives the current version and says so, never the
// version the import wrote back then.
func TestImport_ReplayedShowsCurrentVersion(t *testing.T) {
	st := memory.New(store.Options{})
	mustProducts(t, st, 1)
	ctx := as(t, alice)
	file := []byte("kind,id,version,name\nproduct,1,1,Mine\n")
	res, _ := mustImport(t, ctx, st, file, CSV, ImportOptions{})
	if res[0].Outcome != Updated || res[0].Version != 2 {
		t.Fatalf("first import: %+v", res[0])
	}
	res, _ = mustImport(t, ctx, st, file, CSV, ImportOptions{})
	if res[0].Outcome != Unchanged || res[0].Version != 2 || res[0].Message != "imported before (same row, same key)" {
		t.Fatalf("again, the record as the import left it: %+v", res[0])
	}
	if _, err := st.UpdateRecord(as(t, bob), store.KindProduct, 1, store.Update{BaseVersion: 2, Set: store.Values{"name": "Bob's"}}); err != nil {
		t.Fatal(err)
	}
	res, _ = mustImport(t, ctx, st, file, CSV, ImportOptions{})
	if r := res[0]; r.Outcome != Unchanged || r.Version != 3 || !strings.Contains(r.Message, "as version 2; the record has moved on since (v3 now, last written by bob)") {
		t.Fatalf("again after bob's save: %+v, want version 3 and the move named", r)
	}
}

// TestImport_ConflictNamesTheRowsChanges: a stale row's conflict names the fields the row
// changes against what it was edited from (the store's history version, or its base
// columns), not the fields others changed since.
func TestImport_ConflictNamesTheRowsChanges(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		st := open(t)
		mustProducts(t, st, 2)
		ctx := as(t, alice)
		for _, withBase := range []bool{false, true} {
			old := mustExport(t, st, store.KindProduct, CSV, WriterOptions{Fields: []string{"name", "price"}, Base: withBase})
			r, _ := st.FindRecord(ctx, store.KindProduct, 2)
			edited := regexp.MustCompile(`(?m)^product,2,(\d+),("[^"]*"|[^,]*),`).ReplaceAll(old, []byte("product,2,${1},Renamed,"))
			if bytes.Equal(edited, old) {
				t.Fatal("the edit did not apply")
			}
			// Bob changes the price meanwhile.
			if _, err := st.UpdateRecord(as(t, bob), store.KindProduct, 2, store.Update{BaseVersion: r.Version,
				Set: store.Values{"price": r.Fields["price"].(int64) + 100}}); err != nil {
				t.Fatal(err)
			}
			res, _ := mustImport(t, ctx, st, edited, CSV, ImportOptions{KeyPrefix: fmt.Sprint(withBase)})
			if m := res[1].Message; res[1].Outcome != Conflict || !strings.Contains(m, "the row changes name;") || strings.Contains(m, "price") {
				t.Errorf("base columns %v: %+v, want a conflict naming name only", withBase, res[1])
			}
		}
	})
}

// TestImport_StaleUntouchedRowIsUnchanged: an export imported again, untouched, after
// someone else changed a record edits nothing of the version it was exported at: it is
// unchanged, not a conflict, and the newer values stay.
func TestImport_StaleUntouchedRowIsUnchanged(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		st := open(t)
		mustProducts(t, st, 2)
		ctx := as(t, alice)
		for _, withBase := range []bool{false, true} {
			old := mustExport(t, st, store.KindProduct, CSV, WriterOptions{Fields: []string{"name", "price"}, Base: withBase})
			r, _ := st.FindRecord(ctx, store.KindProduct, 2)
			if _, err := st.UpdateRecord(as(t, bob), store.KindProduct, 2, store.Update{BaseVersion: r.Version,
				Set: store.Values{"price": r.Fields["price"].(int64) + 100}}); err != nil {
				t.Fatal(err)
			}
			res, _ := mustImport(t, ctx, st, old, CSV, ImportOptions{KeyPrefix: "u" + fmt.Sprint(withBase)})
			if res[1].Outcome != Unchanged || !strings.Contains(res[1].Message, "edits nothing of version") {
				t.Errorf("base columns %v: %+v, want unchanged (the row edits nothing)", withBase, res[1])
			}
			after, _ := st.FindRecord(ctx, store.KindProduct, 2)
			if after.Version != r.Version+1 || after.Fields["price"] != r.Fields["price"].(int64)+100 {
				t.Errorf("base columns %v: product 2 at v%d price %v, want bob's v%d price kept", withBase, after.Version, after.Fields["price"], r.Version+1)
			}
		}
	})
}

// TestImport_AllOrNothingHeldBack: rows an --all-or-nothing import held back because
// another row would not land are reported not-written, saying what they would have done,
// and counted as such (not unchanged).
func TestImport_AllOrNothingHeldBack(t *testing.T) {
	st := memory.New(store.Options{})
	mustProducts(t, st, 3)
	ctx := as(t, alice)
	skus := []string{""}
	for id := int64(1); id <= 3; id++ {
		r, err := st.FindRecord(ctx, store.KindProduct, id)
		if err != nil {
			t.Fatal(err)
		}
		skus = append(skus, r.Fields["sku"].(string))
	}
	file := "kind,id,version,sku,name,price\nproduct,1,1," + skus[1] + ",One,1.00\nproduct,,,N-1,New,2.00\nproduct,3,1," + skus[3] + ",Three,oops\n"
	res, sum, err := importAll(ctx, st, strings.NewReader(file), CSV, ImportOptions{KeyPrefix: "a"}, true)
	if err != nil {
		t.Fatal(err)
	}
	if sum[NotWritten] != 2 || sum[Invalid] != 1 || sum[Unchanged] != 0 || sum[Created]+sum[Updated] != 0 {
		t.Fatalf("summary %v, want 2 not-written and 1 invalid: %+v", sum, res)
	}
	for i, want := range []string{"would be updated; not written: --all-or-nothing", "would be created; not written: --all-or-nothing"} {
		if res[i].Outcome != NotWritten || !strings.HasPrefix(res[i].Message, want) {
			t.Errorf("row %d: %+v, want not-written: %q", i+1, res[i], want)
		}
	}
	if c, _ := countProducts(t, st, 10); c != 3 {
		t.Errorf("%d products, want the 3 there were", c)
	}
}

// TestImport_LeaseMessageSameInDryRun: a dry run reports a leased row in the words of a
// real run's refusal.
func TestImport_LeaseMessageSameInDryRun(t *testing.T) {
	st := mustSQLite(t)
	mustProducts(t, st, 2)
	if _, err := st.AcquireLease(as(t, bob), store.LeaseRequest{Kind: store.KindProduct, RecordID: 2, Group: store.GroupEditor, TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	file := []byte("kind,id,version,price\nproduct,2,1,5.00\n")
	dry, _ := mustImport(t, as(t, alice), st, file, CSV, ImportOptions{DryRun: true})
	real, _ := mustImport(t, as(t, alice), st, file, CSV, ImportOptions{})
	if dry[0].Outcome != Leased || real[0].Outcome != Leased || dry[0].Message != real[0].Message || dry[0].Version != real[0].Version {
		t.Errorf("dry run %+v\nreal run %+v\nwant the same leased message and version", dry[0], real[0])
	}
}

// TestImport_WrongTypesAndVersions: in JSON a string where a whole number belongs is a wrong
// type (the row is invalid), as a number is for money; CSV cells are text and parse. A row
// edited from a version the store never reached is invalid, not a conflict --merge could
// settle. A dry run reports an update at the version the write would make.
func TestImport_WrongTypesAndVersions(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		st := open(t)
		mustProducts(t, st, 3)
		ctx := as(t, alice)
		cur, err := st.FindRecord(ctx, store.KindProduct, 3)
		if err != nil {
			t.Fatal(err)
		}

		res, _ := mustImport(t, ctx, st, []byte(`{"kind":"product","id":3,"fields":{"stock":"77"}}`+"\n"), JSONL, ImportOptions{KeyPrefix: "s"})
		if r := res[0]; r.Outcome != Invalid || !strings.Contains(r.Message, `stock: "77" is a JSON string`) {
			t.Errorf("stock as a JSON string: %+v, want invalid", r)
		}
		for _, row := range []string{
			fmt.Sprintf(`{"kind":"product","id":"3","version":%d,"fields":{"name":"Quoted"}}`, cur.Version),
			fmt.Sprintf(`{"kind":"product","id":3,"version":"%d","fields":{"name":"Quoted"}}`, cur.Version),
		} {
			res, _ = mustImport(t, ctx, st, []byte(row+"\n"), JSONL, ImportOptions{KeyPrefix: "q"})
			if r := res[0]; r.Outcome != Invalid || !strings.Contains(r.Message, `" is a JSON string; write the`) {
				t.Errorf("id or version as a JSON string (%s): %+v, want invalid naming the field", row, r)
			}
		}
		if got, _ := st.FindRecord(ctx, store.KindProduct, 3); got.Version != cur.Version {
			t.Errorf("a row with a quoted id or version wrote product 3 (v%d, was v%d)", got.Version, cur.Version)
		}
		res, _ = mustImport(t, ctx, st, []byte("kind,id,stock\nproduct,3,77\n"), CSV, ImportOptions{KeyPrefix: "c"})
		if r := res[0]; r.Outcome != Updated {
			t.Errorf("stock as a CSV cell: %+v, want updated", r)
		}
		cur, _ = st.FindRecord(ctx, store.KindProduct, 3)

		for _, merge := range []bool{false, true} {
			file := fmt.Sprintf("kind,id,version,name\nproduct,3,%d,Renamed\n", cur.Version+96)
			res, _ = mustImport(t, ctx, st, []byte(file), CSV, ImportOptions{KeyPrefix: fmt.Sprint("v", merge), Merge: merge})
			if r := res[0]; r.Outcome != Invalid || !strings.Contains(r.Message, "has never been at that version") {
				t.Errorf("merge %v: a version the store never had: %+v, want invalid", merge, r)
			}
		}

		file := fmt.Sprintf("kind,id,version,name\nproduct,3,%d,Renamed\n", cur.Version)
		dry, _ := mustImport(t, ctx, st, []byte(file), CSV, ImportOptions{KeyPrefix: "d", DryRun: true})
		real, _ := mustImport(t, ctx, st, []byte(file), CSV, ImportOptions{KeyPrefix: "d"})
		if dry[0].Outcome != Updated || real[0].Outcome != Updated || dry[0].Version != real[0].Version || real[0].Version != cur.Version+1 {
			t.Errorf("dry run %+v, real run %+v: want both updated at version %d", dry[0], real[0], cur.Version+1)
		}
	})
}
