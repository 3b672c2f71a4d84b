package exchange

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/internal/sample"
	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/memory"
	"github.com/tandem-editor/tandem/store/postgres"
	"github.com/tandem-editor/tandem/store/postgres/pgtest"
	"github.com/tandem-editor/tandem/store/sqlite"
)

var (
	alice  = store.Actor{Name: "alice", Role: store.RoleEditor}
	bob    = store.Actor{Name: "bob", Role: store.RoleEditor}
	worker = store.Actor{Name: "worker", Role: store.RoleSystem}
)

func as(t testing.TB, a store.Actor) context.Context {
	return store.WithActor(context.Background(), a)
}

// mustSQLite opens a fresh SQLite store in a temporary directory.
func mustSQLite(t testing.TB) store.Store {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "t.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// opener opens a fresh store for a test.
type opener func(t testing.TB) store.Store

// forEachStore runs fn on a SQLite file and, when TANDEM_TEST_POSTGRES names a server, on a
// fresh PostgreSQL schema.
func forEachStore(t *testing.T, fn func(t *testing.T, open opener)) {
	t.Run("sqlite", func(t *testing.T) { fn(t, mustSQLite) })
	if os.Getenv("TANDEM_TEST_POSTGRES") != "" {
		t.Run("postgres", func(t *testing.T) { fn(t, mustPostgres) })
	}
}

// mustPostgres opens a store in a fresh schema of the test server.
func mustPostgres(t testing.TB) store.Store {
	t.Helper()
	db, err := postgres.Open(context.Background(), pgtest.DSN(t), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// mustProducts creates n sample products (ids 1..n on a fresh store).
func mustProducts(t testing.TB, st store.Store, n int) {
	t.Helper()
	ctx := as(t, alice)
	for _, p := range sample.Products(n, 0) {
		_, err := st.CreateRecord(ctx, store.KindProduct, store.Values{
			"sku": p.SKU, "name": p.Name, "description": p.Description, "categories": p.Categories,
			"price": p.PriceCents, "stock": p.Stock, "availability": p.Availability,
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// mustExport exports every record of kind in format.
func mustExport(t testing.TB, st store.Store, kind store.Kind, f Format, o WriterOptions) []byte {
	t.Helper()
	var b bytes.Buffer
	x, err := NewWriter(&b, f, st.Registry(), kind, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := Export(context.Background(), st, x, store.Filter{Kind: kind}, nil); err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// mustImport imports data and returns the report.
func mustImport(t testing.TB, ctx context.Context, st store.Store, data []byte, f Format, o ImportOptions) ([]Result, Summary) {
	t.Helper()
	if o.KeyPrefix == "" {
		o.KeyPrefix = "test"
	}
	res, sum, err := importAll(ctx, st, bytes.NewReader(data), f, o, false)
	if err != nil {
		t.Fatal(err)
	}
	return res, sum
}

// importAll imports r through a Source and a Report, as the import command does, and
// returns the report's rows and summary.
func importAll(ctx context.Context, st store.Store, r io.Reader, f Format, o ImportOptions, allOrNothing bool) ([]Result, Summary, error) {
	src, err := NewSource(r, f, st.Registry())
	if err != nil {
		return nil, nil, err
	}
	defer src.Close()
	rep, err := NewReport()
	if err != nil {
		return nil, nil, err
	}
	defer rep.Close()
	err = NewImporter(st, o).ApplyAll(ctx, src, allOrNothing, nil, rep)
	var res []Result
	if eerr := rep.Each(func(r Result) error { res = append(res, r); return nil }); eerr != nil {
		return nil, nil, eerr
	}
	return res, rep.Summary(), err
}

// ReadAll reads every row of x into memory (the tests look at rows; import never holds
// them all). A problem of the file returns no rows.
func ReadAll(x *Reader) ([]*Row, error) {
	var rows []*Row
	for {
		row, err := x.Next()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
}

func TestWriter_CSV(t *testing.T) {
	st := memory.New(store.Options{})
	ctx := as(t, alice)
	_, err := st.CreateRecord(ctx, store.KindProduct, store.Values{
		"sku": "A-1", "name": `Lamp, "brass"`, "description": "line one\nline two\n",
		"categories": []string{"lighting", "office"}, "price": int64(2999),
	})
	if err != nil {
		t.Fatal(err)
	}
	out := mustExport(t, st, store.KindProduct, CSV, WriterOptions{Fields: []string{"name", "description", "categories", "price"}})
	recs, err := csv.NewReader(bytes.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatalf("export is not RFC 4180 CSV: %v\n%s", err, out)
	}
	want := [][]string{
		{"kind", "id", "version", "name", "description", "categories", "price", "updated_by", "updated_at"},
		{"product", "1", "1", `Lamp, "brass"`, "line one\nline two\n", "lighting,office", "29.99", "alice", recs[1][8]},
	}
	if len(recs) != 2 || strings.Join(recs[0], "|") != strings.Join(want[0], "|") || strings.Join(recs[1], "|") != strings.Join(want[1], "|") {
		t.Fatalf("export rows:\n got %q\nwant %q", recs, want)
	}
	for _, s := range []string{`"line one` + "\nline two\n" + `"`, `"lighting,office"`, `"Lamp, ""brass"""`} {
		if !bytes.Contains(out, []byte(s)) {
			t.Errorf("export lacks the quoted cell %s:\n%s", s, out)
		}
	}
}

// TestExport_RoundTrip: export, import into a fresh store, export again: the same file apart
// from versions and writers. 10,000 products under TANDEM_LONG_TESTS=1 (.ci/run; about 45 s
// here), 1,000 otherwise.
func TestExport_RoundTrip(t *testing.T) {
	n := 1000
	if os.Getenv("TANDEM_LONG_TESTS") == "1" {
		n = 10000
	}
	src := mustSQLite(t)
	mustProducts(t, src, n)
	for _, f := range []Format{CSV, JSONL, JSON} {
		t.Run(string(f), func(t *testing.T) {
			first := mustExport(t, src, store.KindProduct, f, WriterOptions{})
			dst := mustSQLite(t)
			_, sum := mustImport(t, as(t, alice), dst, first, f, ImportOptions{})
			if sum[Created] != n {
				t.Fatalf("editor import into a fresh store: %v, want %d created", sum, n)
			}
			again := mustExport(t, dst, store.KindProduct, f, WriterOptions{})
			if got, want := normalize(again), normalize(first); got != want {
				t.Errorf("export → import → export differs apart from versions and writers:\n%s", firstDiff(got, want))
			}
		})
	}
}

// The parts of an export that an import does not keep: versions and writers.
var (
	jsonMeta   = regexp.MustCompile(`"version":\d+|"updated_by":"[^"]*","updated_at":"[^"]*"`)
	csvVersion = regexp.MustCompile(`(?m)^(product|document),(\d+),\d+,`)
	csvWriter  = regexp.MustCompile(`(?m),[a-z]+,\d{4}-\d\d-\d\dT[0-9:.]+Z$`)
)

func normalize(b []byte) string {
	s := jsonMeta.ReplaceAllString(string(b), "<meta>")
	s = csvVersion.ReplaceAllString(s, "$1,$2,<v>,")
	return csvWriter.ReplaceAllString(s, ",<writer>")
}

func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return "got:  " + al[i] + "\nwant: " + bl[i]
		}
	}
	return "lengths differ"
}

// TestImport_RerunChangesNothing: an edited export imported twice: the second time every
// row is unchanged and no record gets a new version.
func TestImport_RerunChangesNothing(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		st := open(t)
		mustProducts(t, st, 20)
		data := mustExport(t, st, store.KindProduct, CSV, WriterOptions{Fields: []string{"name", "price"}})
		// Every price gets a 1 in front: 116.90 becomes 1116.90.
		edited := regexp.MustCompile(`(?m)^(product,\d+,\d+,[^\n]*),(\d+\.\d\d),`).ReplaceAll(data, []byte("$1,1$2,"))
		ctx := as(t, alice)
		_, sum := mustImport(t, ctx, st, edited, CSV, ImportOptions{})
		if sum[Updated] != 20 {
			t.Fatalf("first import: %v, want 20 updated", sum)
		}
		before := versionsOf(t, st)
		res, sum := mustImport(t, ctx, st, edited, CSV, ImportOptions{})
		if sum[Unchanged] != 20 || len(sum) != 1 {
			t.Fatalf("second import: %v (%+v), want every row unchanged", sum, res[0])
		}
		if after := versionsOf(t, st); after != before {
			t.Errorf("the second import added versions:\n before %s\n after  %s", before, after)
		}
	})
}

// versionsOf lists every product's id, version and last writer.
func versionsOf(t *testing.T, st store.Store) string {
	t.Helper()
	recs, err := st.FindRecords(context.Background(), store.Filter{Kind: store.KindProduct})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, r := range recs {
		fmt.Fprintf(&b, "%d:v%d:%s ", r.ID, r.Version, r.UpdatedBy)
	}
	return b.String()
}

func TestImport_CreateRerun(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		st := open(t)
		data := []byte("kind,sku,name,price\nproduct,N-1,One,1.00\nproduct,N-2,Two,2.00\n")
		ctx := as(t, alice)
		_, sum := mustImport(t, ctx, st, data, CSV, ImportOptions{})
		if sum[Created] != 2 {
			t.Fatalf("first import: %v", sum)
		}
		_, sum = mustImport(t, ctx, st, data, CSV, ImportOptions{})
		if sum[Unchanged] != 2 {
			t.Fatalf("second import: %v, want 2 unchanged", sum)
		}
		if n, _ := st.CountRecords(ctx, store.KindProduct); n != 2 {
			t.Errorf("%d products after importing two rows twice, want 2", n)
		}
	})
}

// The seeds' story: an import program ignored a person's lease and overwrote their edit.
func TestImport_Lease(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		st := open(t)
		mustProducts(t, st, 50)
		ctx := as(t, alice)
		l, err := st.AcquireLease(as(t, bob), store.LeaseRequest{Kind: store.KindProduct, RecordID: 42, Group: store.GroupEditor, TTL: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		b.WriteString("kind,id,version,price\n")
		for id := 40; id <= 44; id++ {
			b.WriteString("product," + itoa(id) + ",1,99.00\n")
		}
		for _, dry := range []bool{true, false} {
			res, sum := mustImport(t, ctx, st, []byte(b.String()), CSV, ImportOptions{DryRun: dry})
			if sum[Leased] != 1 || sum[Updated] != 4 {
				t.Fatalf("dry run %v: %v, want 4 updated and 1 leased", dry, sum)
			}
			if r := res[2]; r.ID != 42 || r.Outcome != Leased || r.Holder != "bob" || r.Line != 4 {
				t.Errorf("dry run %v: row of product 42 = %+v, want leased by bob on line 4", dry, r)
			}
		}
		for id := int64(40); id <= 44; id++ {
			r, _ := st.FindRecord(ctx, store.KindProduct, id)
			if got, want := r.Fields["price"], int64(9900); (id == 42) == (got == want) {
				t.Errorf("product %d: price %v after the import", id, got)
			}
		}
		// The holder's own save still goes through.
		if _, err := st.UpdateRecord(as(t, bob), store.KindProduct, 42, store.Update{BaseVersion: 1,
			Set: store.Values{"price": int64(4200)}, LeaseToken: l.Token}); err != nil {
			t.Fatalf("the lease holder's save after the import: %v", err)
		}
	})
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestImport_Conflict(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		st := open(t)
		mustProducts(t, st, 3)
		ctx := as(t, alice)
		old := mustExport(t, st, store.KindProduct, CSV, WriterOptions{Fields: []string{"name", "price"}})
		// Two saves by bob: the store is at version 3, changing the name.
		for v := int64(1); v <= 2; v++ {
			if _, err := st.UpdateRecord(as(t, bob), store.KindProduct, 2, store.Update{BaseVersion: v,
				Set: store.Values{"name": "Renamed " + itoa(int(v))}}); err != nil {
				t.Fatal(err)
			}
		}
		// Alice edits the price of product 2 in the old export (version 1).
		edited := regexp.MustCompile(`(?m)^(product,2,1,.*),\d+\.\d\d,alice,`).ReplaceAll(old, []byte("${1},1.23,alice,"))
		if bytes.Equal(edited, old) {
			t.Fatal("the edit did not apply")
		}
		res, sum := mustImport(t, ctx, st, edited, CSV, ImportOptions{})
		if sum[Conflict] != 1 || res[1].Outcome != Conflict {
			t.Fatalf("stale row: %v %+v, want a conflict", sum, res[1])
		}
		if r, _ := st.FindRecord(ctx, store.KindProduct, 2); r.Version != 3 || r.Fields["price"] == int64(123) {
			t.Fatalf("a conflicting row changed the record: %+v", r)
		}
		// With --merge the disjoint change lands: the name stays bob's, the price is alice's.
		res, sum = mustImport(t, ctx, st, edited, CSV, ImportOptions{Merge: true, KeyPrefix: "m"})
		if sum[Updated] != 1 || res[1].Outcome != Updated {
			t.Fatalf("--merge: %v %+v, want it updated", sum, res[1])
		}
		r, _ := st.FindRecord(ctx, store.KindProduct, 2)
		if r.Fields["price"] != int64(123) || r.Fields["name"] != "Renamed 2" || r.Version != 4 {
			t.Errorf("after --merge: price %v name %v version %d, want 123, Renamed 2, 4", r.Fields["price"], r.Fields["name"], r.Version)
		}
		// The base may travel in the file (export --base) instead of the store's history.
		withBase := mustExport(t, st, store.KindProduct, CSV, WriterOptions{Fields: []string{"name", "price"}, Base: true})
		if _, err := st.UpdateRecord(as(t, bob), store.KindProduct, 3, store.Update{BaseVersion: 1,
			Set: store.Values{"name": "Bob's"}}); err != nil {
			t.Fatal(err)
		}
		edited = regexp.MustCompile(`(?m)^(product,3,1,[^\n]*?),\d+\.\d\d,`).ReplaceAll(withBase, []byte("${1},7.77,"))
		res, _ = mustImport(t, ctx, st, edited, CSV, ImportOptions{Merge: true, KeyPrefix: "base"})
		if r, _ := st.FindRecord(ctx, store.KindProduct, 3); res[2].Outcome != Updated || r.Fields["price"] != int64(777) || r.Fields["name"] != "Bob's" {
			t.Errorf("--merge with base columns: %+v, record %v", res[2], r.Fields)
		}

		// Both changed the name: a conflict even with --merge.
		both := regexp.MustCompile(`(?m)^product,2,1,("[^"]*"|[^,]*),`).ReplaceAll(old, []byte("product,2,1,Mine,"))
		res, _ = mustImport(t, ctx, st, both, CSV, ImportOptions{Merge: true, KeyPrefix: "b"})
		if res[1].Outcome != Conflict || !strings.Contains(res[1].Message, "name") {
			t.Errorf("both changed the name, --merge: %+v, want a conflict naming name", res[1])
		}
	})
}

func TestImport_Ownership(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		st := open(t)
		mustProducts(t, st, 1)
		data := []byte("kind,id,name,checksum\nproduct,1,New name,abc\n")
		res, _ := mustImport(t, as(t, alice), st, data, CSV, ImportOptions{})
		r, _ := st.FindRecord(context.Background(), store.KindProduct, 1)
		if res[0].Outcome != Updated || r.Fields["checksum"] != "" || r.Fields["name"] != "New name" {
			t.Fatalf("editor import of a system field: %+v, record %v", res[0], r.Fields)
		}
		if !strings.Contains(res[0].Message, "checksum") {
			t.Errorf("report %q does not name the field left alone", res[0].Message)
		}
	})
}

// TestReader_BadFiles: every bad file gets a clear message, per row or for the file, and a
// file refused as a whole yields no rows to import.
func TestReader_BadFiles(t *testing.T) {
	reg := store.DefaultRegistry()
	read := func(f Format, data string) ([]*Row, error) {
		x, err := NewReader(strings.NewReader(data), f, reg)
		if err != nil {
			t.Fatal(err)
		}
		return ReadAll(x)
	}
	fileErrs := []struct {
		name, data string
		f          Format
		want       string
	}{
		{"EmptyCSV", "", CSV, "empty"},
		{"EmptyJSONL", "", JSONL, "empty"},
		{"EmptyJSON", "", JSON, "empty"},
		{"NoKindColumn", "id,name\n1,x\n", CSV, "no kind column"},
		{"UnknownColumn", "kind,id,colour\nproduct,1,red\n", CSV, `unknown column "colour"`},
		{"ColumnOfOtherKind", "kind,id,title\nproduct,1,x\n", CSV, `"title" is not a field of product`},
		{"BadQuote", "kind,name\nproduct,a\"b\"\n", CSV, "not valid CSV"},
		{"NotAnArray", `{"kind":"product"}`, JSON, "array"},
		{"MoreAfterTheArray", `[{"kind":"product","fields":{"name":"x"}}] junk`, JSON, "more follows the array of records"},
	}
	for _, tc := range fileErrs {
		t.Run(tc.name, func(t *testing.T) {
			rows, err := read(tc.f, tc.data)
			if err == nil || !strings.Contains(err.Error(), tc.want) || rows != nil {
				t.Fatalf("err %v, rows %d; want an error with %q and no rows", err, len(rows), tc.want)
			}
			if store.ErrorCode(err) != store.EINVALID {
				t.Errorf("code %s, want EINVALID", store.ErrorCode(err))
			}
		})
	}
	t.Run("HugeLine", func(t *testing.T) {
		huge := "kind,name\nproduct," + strings.Repeat("x", 100<<20) + "\n"
		for _, f := range []Format{CSV, JSONL, JSON} {
			data := huge
			switch f {
			case JSONL:
				data = `{"kind":"product","fields":{"name":"` + strings.Repeat("x", 100<<20) + `"}}` + "\n"
			case JSON:
				// Just over the limit, after a small row: the decoder reads ahead in large
				// pieces, so only the row's own length can tell.
				data = `[{"kind":"product","fields":{"name":"ok"}},{"kind":"product","fields":{"name":"` + strings.Repeat("x", 65<<20) + `"}}]`
			}
			rows, err := read(f, data)
			if err == nil || !strings.Contains(err.Error(), "longer than 64 MiB") || rows != nil {
				t.Errorf("%s: a row over 64 MiB: err %v, rows %d", f, err, len(rows))
			}
		}
	})
	rowErrs := []struct {
		name, data string
		f          Format
		line       int
		want       string
	}{
		{"WrongType", "kind,id,price\nproduct,1,1.00\nproduct,2,cheap\n", CSV, 3, `"cheap" is not an amount`},
		{"TwoObjectsOnALine", `{"kind":"product","id":1,"fields":{"stock":1}} {"x":1}` + "\n", JSONL, 1, "more follows the record object on its line"},
		{"CommentAfterTheObject", `{"kind":"product","id":1,"fields":{"stock":1}} // c` + "\n", JSONL, 1, "more follows the record object on its line"},
		{"WrongTypeJSON", `{"kind":"product","id":1,"fields":{"stock":"many"}}`, JSONL, 1, `stock: "many" is a JSON string`},
		{"MoneyAsNumberJSON", `{"kind":"product","id":1,"fields":{"price":1.5}}`, JSONL, 1, `price: 1.5 is a JSON number; write money as a decimal string like "1.50"`},
		{"MoneyAsIntegerJSON", `{"kind":"product","id":1,"fields":{"price":2999}}`, JSONL, 1, `price: 2999 is a JSON number; write money as a decimal string`},
		{"IntOverInt64JSON", `{"kind":"product","id":1,"fields":{"stock":9223372036854775808}}`, JSONL, 1, "stock: 9223372036854775808 is out of range"},
		{"IntOverInt64ExpJSON", `{"kind":"product","id":1,"fields":{"stock":1e19}}`, JSONL, 1, "stock: 1e19 is out of range"},
		{"IntFractionJSON", `{"kind":"product","id":1,"fields":{"stock":2.5}}`, JSONL, 1, "stock: 2.5 is not a whole number"},
		{"IntOverInt64CSV", "kind,id,stock\nproduct,1,9223372036854775808\n", CSV, 2, "stock: 9223372036854775808 is out of range"},
		{"DuplicateFieldJSON", `{"kind":"product","id":1,"fields":{"name":"a","name":"b"}}`, JSONL, 1, `"name" appears twice in "fields"`},
		{"DuplicateEscapedJSON", `{"kind":"product","id":1,"fields":{"name":"a","n\u0061me":"b"}}`, JSONL, 1, `"name" appears twice in "fields"`},
		{"NoDuplicateInStringsJSON", `{"kind":"product","id":1,"fields":{"name":"a\"{,\"name\":","price":2}}`, JSONL, 1, `price: 2 is a JSON number`},
		{"DuplicateMemberJSON", `{"kind":"product","id":1,"id":2,"fields":{"name":"a"}}`, JSONL, 1, `"id" appears twice in the row`},
		{"UnknownFieldJSON", `{"kind":"product","fields":{"colour":"red"}}`, JSONL, 1, "colour"},
		{"MemberCaseJSON", `{"kind":"product","id":4,"ID":5,"fields":{"name":"a"}}`, JSONL, 1, `member "ID" differs from "id" only by case`},
		{"KindCaseJSON", `{"kind":"product","KIND":"document","id":1,"fields":{"title":"a"}}`, JSONL, 1, `member "KIND" differs from "kind" only by case`},
		{"KelvinKindJSON", `{"kind":"product","\u212aind":"document","id":1}`, JSONL, 1, "member \"\u212aind\" (with U+212A) differs from \"kind\" only by case"},
		{"FieldsCaseJSON", `{"kind":"product","id":1,"fields":{"name":"a"},"Fields":{"stock":7}}`, JSONL, 1, `member "Fields" differs from "fields" only by case`},
		{"FieldCaseJSON", `{"kind":"product","id":1,"fields":{"Stock":7}}`, JSONL, 1, `fields: member "Stock" differs from the field "stock" only by case`},
		{"BaseFieldCaseJSON", `{"kind":"product","id":1,"fields":{"stock":7},"base":{"STOCK":5}}`, JSONL, 1, `base: member "STOCK" differs from the field "stock" only by case`},
		{"UnknownMemberJSON", `{"kind":"product","id":1,"colour":"red"}`, JSONL, 1, `unknown field "colour"`},
		{"InvalidUTF8", "kind,id,name\nproduct,1,ok\nproduct,2,bad\xff\n", CSV, 3, "UTF-8"},
		{"InvalidUTF8JSON", "{\"kind\":\"product\",\"fields\":{\"name\":\"bad\xff\"}}\n", JSONL, 1, "UTF-8"},
		{"LoneSurrogateJSON", `{"kind":"product","fields":{"name":"a\ud800b"}}`, JSONL, 1, "U+D800, half of a UTF-16 surrogate pair"},
		{"CellCount", "kind,id,name\nproduct,1,a\nproduct,2\n", CSV, 3, "2 cells"},
		{"BadKind", "kind,id,name\nproduct,1,a\nwidget,2,b\n", CSV, 3, "widget"},
		{"IDTooLarge", "kind,id,name\nproduct,1,a\nproduct,9007199254740992,b\n", CSV, 3, "id: 9007199254740992 is too large (at most 9007199254740991)"},
		{"IDMaxInt64JSON", `{"kind":"product","id":9223372036854775807,"fields":{"name":"b"}}`, JSONL, 1, "id: 9223372036854775807 is too large"},
		{"IDOverInt64", "kind,id,name\nproduct,99999999999999999999,b\n", CSV, 2, "id: 99999999999999999999 is too large"},
		{"IDAsStringJSON", `{"kind":"product","id":"3","fields":{"name":"b"}}`, JSONL, 1, `id: "3" is a JSON string; write the id as a JSON number, without quotes`},
		{"VersionAsStringJSON", `{"kind":"product","id":3,"version":"2","fields":{"name":"b"}}`, JSONL, 1, `version: "2" is a JSON string; write the version as a JSON number, without quotes`},
		{"IDAsStringArrayJSON", `[{"kind":"product","id":1,"fields":{"name":"a"}},` + "\n" + `{"kind":"product","id":"2","fields":{"name":"b"}}]`, JSON, 2, `id: "2" is a JSON string`},
		{"IDAsBoolJSON", `{"kind":"product","id":true,"fields":{"name":"b"}}`, JSONL, 1, `id: true is not a JSON number`},
		{"BothAsStringsJSON", `{"kind":"product","id":"3","version":"x","fields":{"stock":"many"}}`, JSONL, 1, `id: "3" is a JSON string; write the id as a JSON number, without quotes; version: "x" is a JSON string; write the version as a JSON number, without quotes; stock: "many" is a JSON string`},
	}
	for _, tc := range rowErrs {
		t.Run(tc.name, func(t *testing.T) {
			rows, err := read(tc.f, tc.data)
			if err != nil {
				t.Fatalf("a bad row made the file fail: %v", err)
			}
			var bad *Row
			for _, r := range rows {
				if r.Err != nil {
					bad = r
				}
			}
			if bad == nil || bad.Line != tc.line || !strings.Contains(bad.Err.Error(), tc.want) {
				t.Fatalf("bad row = %+v, want line %d with %q", bad, tc.line, tc.want)
			}
		})
	}
	t.Run("BOMAndCRLF", func(t *testing.T) {
		rows, err := read(CSV, "\xef\xbb\xbfkind,id,name,description\r\nproduct,1,Lamp,\"a\r\nb\"\r\nproduct,2,Desk,x\r\n")
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 2 || rows[0].Err != nil || rows[0].Set["name"] != "Lamp" || rows[1].Line != 4 {
			t.Fatalf("rows %+v", rows)
		}
		// Inside quotes every byte is data: the CRLF stays (encoding/csv would make it LF).
		if got := rows[0].Set["description"]; got != "a\r\nb" {
			t.Errorf("description %q, want %q", got, "a\r\nb")
		}
	})
	t.Run("ExactWholeNumbersJSON", func(t *testing.T) {
		// 2^53+1 and 1e3: read exactly, never through a float64.
		rows, err := read(JSONL, `{"kind":"product","id":1,"fields":{"stock":9007199254740993}}`+"\n"+`{"kind":"product","id":2,"fields":{"stock":1e3}}`)
		if err != nil {
			t.Fatal(err)
		}
		if rows[0].Err != nil || rows[0].Set["stock"] != int64(9007199254740993) || rows[1].Err != nil || rows[1].Set["stock"] != int64(1000) {
			t.Fatalf("stock %v (%v), %v (%v); want 9007199254740993 and 1000", rows[0].Set["stock"], rows[0].Err, rows[1].Set["stock"], rows[1].Err)
		}
	})
	t.Run("OneLineJSONArray", func(t *testing.T) {
		rows, err := read(JSON, `[{"kind":"product","id":1,"fields":{"name":"a"}},{"kind":"product","id":2,"fields":{"price":1.5}},{"kind":"product","id":3,"fields":{"name":"c"}}]`)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range rows {
			if r.Line != 1 || r.Pos != i+1 {
				t.Errorf("row %d: line %d, position %d; want line 1, position %d", i, r.Line, r.Pos, i+1)
			}
		}
		if len(rows) != 3 || rows[1].Err == nil {
			t.Fatalf("rows %+v, want 3 with the second invalid", rows)
		}
	})
	t.Run("JSONLines", func(t *testing.T) {
		rows, err := read(JSON, "[\n{\"kind\":\"product\",\"id\":1,\"fields\":{\"name\":\"a\"}},\n\n{\"kind\":\"product\",\"id\":2,\n\"fields\":{\"name\":\"b\"}}\n]\n")
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 2 || rows[0].Line != 2 || rows[1].Line != 4 {
			t.Fatalf("lines %d %d, want 2 and 4", rows[0].Line, rows[1].Line)
		}
	})
}

// TestImport_BadRowsLandNothing: invalid rows write nothing, the others land.
func TestImport_BadRowsLandNothing(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		st := open(t)
		mustProducts(t, st, 2)
		data := []byte("kind,id,version,price,stock\nproduct,1,1,2.00,5\nproduct,2,1,-1.00,5\n")
		res, sum := mustImport(t, as(t, alice), st, data, CSV, ImportOptions{})
		if sum[Invalid] != 1 || sum[Updated] != 1 || res[1].Line != 3 {
			t.Fatalf("report %v %+v", sum, res)
		}
		if r, _ := st.FindRecord(context.Background(), store.KindProduct, 2); r.Version != 1 {
			t.Errorf("an invalid row wrote: version %d", r.Version)
		}
	})
}

// TestImport_EmptyCells: an empty cell of an enum, int or money field is "not given" on a
// row that creates a record (the default, said in the report) and invalid on a row that
// updates one (nothing written).
func TestImport_EmptyCells(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		st := open(t)
		mustProducts(t, st, 1)
		data := []byte("kind,id,version,sku,name,availability,stock,price\n" +
			"product,,,E-1,Empty cells,,,\n" +
			"product,1,1,E-2,Renamed,,,\n")
		res, sum := mustImport(t, as(t, alice), st, data, CSV, ImportOptions{})
		if sum[Created] != 1 || sum[Invalid] != 1 {
			t.Fatalf("report %v %+v", sum, res)
		}
		if !strings.Contains(res[0].Message, "availability=in_stock") || res[0].Row != 1 {
			t.Errorf("create row: %+v, want row 1 with a message naming the default availability=in_stock", res[0])
		}
		r, err := st.FindRecord(t.Context(), store.KindProduct, res[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		if r.Fields["availability"] != "in_stock" || r.Fields["stock"] != int64(0) || r.Fields["price"] != int64(0) {
			t.Errorf("created %v, want the defaults", r.Fields)
		}
		if res[1].Outcome != Invalid || res[1].Row != 2 || !strings.Contains(res[1].Message, "availability, price, stock: an empty cell") {
			t.Errorf("update row: %+v, want invalid naming the empty cells", res[1])
		}
		if r, _ := st.FindRecord(t.Context(), store.KindProduct, 1); r.Version != 1 || r.Fields["name"] == "Renamed" {
			t.Errorf("an invalid update row wrote: %v", r.Fields)
		}
	})
}

func TestWriter_Terminal(t *testing.T) {
	st := memory.New(store.Options{})
	if _, err := st.CreateRecord(as(t, alice), store.KindProduct, store.Values{"sku": "E-1", "name": "evil \u202egnp.exe"}); err != nil {
		t.Fatal(err)
	}
	for _, tty := range []bool{false, true} {
		out := mustExport(t, st, store.KindProduct, CSV, WriterOptions{Fields: []string{"name"}, Terminal: tty})
		if got := bytes.Contains(out, []byte("\u202e")); got == tty {
			t.Errorf("Terminal %v: bidi override written raw: %v\n%q", tty, got, out)
		}
	}
}

// conflictingStore answers every save with a conflict, as a record another writer keeps
// changing would.
type conflictingStore struct{ store.Store }

func (c conflictingStore) UpdateRecord(ctx context.Context, kind store.Kind, id int64, u store.Update) (*store.UpdateResult, error) {
	cur, err := c.Store.FindRecord(ctx, kind, id)
	if err != nil {
		return nil, err
	}
	return nil, &store.ConflictError{Kind: kind, ID: id, BaseVersion: u.BaseVersion, Current: cur}
}

// TestImport_GivesUp: a row without a version is retried against a fresh read when another
// writer got in, and reported as a conflict (never as updated) when it keeps losing.
func TestImport_GivesUp(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		st := open(t)
		mustProducts(t, st, 1)
		res, sum := mustImport(t, as(t, alice), conflictingStore{st}, []byte("kind,id,price\nproduct,1,3.00\n"), CSV, ImportOptions{})
		if sum[Conflict] != 1 || !strings.Contains(res[0].Message, "kept changing") {
			t.Fatalf("report %v %+v, want a conflict after the retries", sum, res[0])
		}
	})
}

// TestImport_PipeLeavesNoFiles: an import from a pipe reads it three times (the file check,
// --all-or-nothing's check, the writes) through a temporary copy, and the copy and the
// report's file are unlinked as soon as they are made, so not even a killed import leaves
// them behind.
func TestImport_PipeLeavesNoFiles(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	st := memory.New(store.Options{})
	pipe := struct{ io.Reader }{strings.NewReader("kind,sku,name\nproduct,P-1,One\nproduct,P-2,Two\n")}
	src, err := NewSource(pipe, CSV, st.Registry())
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	rep, err := NewReport()
	if err != nil {
		t.Fatal(err)
	}
	defer rep.Close()
	if err := NewImporter(st, ImportOptions{KeyPrefix: "p"}).ApplyAll(as(t, alice), src, true, nil, rep); err != nil {
		t.Fatal(err)
	}
	if s := rep.Summary(); rep.Len() != 2 || s[Created] != 2 {
		t.Errorf("%d rows, %v; want 2 created", rep.Len(), s)
	}
	if left, err := os.ReadDir(tmp); err != nil || len(left) != 0 {
		t.Errorf("temporary files left during the import: %v %v", left, err)
	}
}

// TestImport_KeyHoldsContent: a row's key holds its content, not only the prefix and its
// position. Changed content at the same position under the same prefix applies; the same
// content again applies nothing twice, even where applying it again would add a counter's
// delta again (--merge of a stale row).
func TestImport_KeyHoldsContent(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		st := open(t)
		ctx := as(t, alice)
		if _, err := st.CreateRecord(ctx, store.KindProduct, store.Values{"sku": "K-1", "name": "Keyed", "stock": int64(12)}); err != nil {
			t.Fatal(err)
		}
		stock := func() int64 {
			t.Helper()
			r, err := st.FindRecord(ctx, store.KindProduct, 1)
			if err != nil {
				t.Fatal(err)
			}
			return r.Fields["stock"].(int64)
		}
		const head = "kind,id,version,stock,base.stock\n"
		first := []byte(head + "product,1,1,5,12\n") // 12 → 5, edited from version 1
		second := []byte(head + "product,1,2,3,5\n") // 5 → 3, edited from version 2
		opt := ImportOptions{Merge: true, KeyPrefix: "same"}
		for _, step := range []struct {
			name      string
			data      []byte
			want      Outcome
			wantStock int64
		}{
			{"first content", first, Updated, 5},
			{"first content again", first, Unchanged, 5},
			{"changed content, same position", second, Updated, 3},
			{"changed content again", second, Unchanged, 3},
			{"first content a third time", first, Unchanged, 3},
		} {
			res, _ := mustImport(t, ctx, st, step.data, CSV, opt)
			if res[0].Outcome != step.want || stock() != step.wantStock {
				t.Fatalf("%s: %s (%s), stock %d; want %s, stock %d", step.name, res[0].Outcome, res[0].Message, stock(), step.want, step.wantStock)
			}
		}
	})
}
