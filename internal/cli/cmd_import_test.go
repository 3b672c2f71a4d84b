package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/tandem-editor/tandem/internal/exchange"
)

// importChanges creates n products with ids above the base (as an export of another store
// would), updates every base product (edited from version 1), then creates n products
// without an id (new rows added at the end of an edited export).
func importChanges(n int) string {
	var b strings.Builder
	b.WriteString("kind,id,version,sku,name,price,stock,categories\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "product,%d,7,I-%d,\"With id %d, from elsewhere\",2.00,2,x\n", n+i, i, i)
	}
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "product,%d,1,B-%d,\"Changed %d, \"\"quoted\"\"\",%d.99,%d,\"b,c\"\n", i, i, i, i, i+1)
	}
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "product,,,N-%d,New %d,1.00,1,\n", i, i)
	}
	return b.String()
}

// productState is every product by sku: its version and values, without ids (PostgreSQL's
// sequence may skip ids a killed transaction took) and without times. Two products with one
// sku fail the test: every sku in these tests is one row's, applied once.
func productState(t *testing.T, dsn string) map[string]string {
	t.Helper()
	var recs []record
	if err := json.Unmarshal([]byte(mustTandem(t, dsn, "list", "products", "--json")), &recs); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range recs {
		b, _ := json.Marshal(r.Fields)
		sku := fmt.Sprint(r.Fields["sku"])
		if _, twice := out[sku]; twice {
			t.Fatalf("two products have sku %s: a row was applied twice", sku)
		}
		out[sku] = fmt.Sprintf("v%d %s", r.Version, b)
	}
	return out
}

// TestCLI_ImportKilled: an import SIGKILLed at random points, again and again, then run to
// its end, leaves the store as one uninterrupted import does: no row applied twice, none
// lost (the idempotency key of each row, in the row's own transaction).
func TestCLI_ImportKilled(t *testing.T) {
	besideOthers(t)
	n, kills := 100, 12
	if longTests() {
		n, kills = 300, 20
	}
	base := writeFile(t, "base.csv", importBase(n))
	changes := writeFile(t, "changes.csv", importChanges(n))
	for _, be := range backends(t) {
		t.Run(be.name, func(t *testing.T) {
			want := be.dsn(t)
			mustTandem(t, want, "import", base)
			mustTandem(t, want, "import", changes)

			wantState := productState(t, want)
			// fresh is a store with the base imported, where the changes start.
			fresh := func() string {
				dsn := be.dsn(t)
				mustTandem(t, dsn, "import", base)
				return dsn
			}
			got := fresh()
			start0 := productState(t, got)
			killed, midway := 0, false
			rng := testRand(t)
			// Kills land at random points up to window after the start. Each run finishes
			// what the killed ones left, so runs get shorter: a run that finished before its
			// kill narrows the window to most of its own length, and a kill before the
			// first create widens it, so the next kills land inside a run again, however
			// fast or loaded the machine.
			window := 160 * time.Millisecond
			for i := 0; killed < kills && i < 10*kills; i++ {
				// Batches of 7 rows, so that a kill lands between two commits.
				cmd := tandemCmd(got, "import", changes, "--batch", "7")
				start := time.Now()
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				time.Sleep(time.Duration(rng.Int64N(int64(window))) + time.Millisecond)
				if err := cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
					t.Fatal(err)
				}
				err := cmd.Wait()
				if err == nil {
					window = max(time.Since(start)*3/4, 2*time.Millisecond)
				}
				if err != nil {
					killed++ // killed before it finished (a finished run is not counted)
					if !midway {
						// Some kill must land between the first row applied and the last,
						// or the test shows nothing about finishing a half-done import. A
						// kill before the first row (a loaded machine starts the process
						// slowly) moves the next kills later; one after the last (batches
						// are fast) starts again on a fresh store with earlier kills.
						st := productState(t, got)
						switch {
						case maps.Equal(st, start0):
							window = min(window*2, 20*time.Second)
						case maps.Equal(st, wantState):
							got = fresh()
							window = max(window/2, 2*time.Millisecond)
						default:
							midway = true
						}
					}
				}
			}
			if killed < kills {
				t.Fatalf("only %d of the runs were killed before they finished", killed)
			}
			if !midway {
				t.Fatalf("no kill of %d landed halfway through the import (between its first row applied and its last)", killed)
			}
			r := tandem(t, got, "import", changes, "--json", "--batch", "7")
			if r.code != 0 {
				t.Fatalf("re-run after %d kills: exit %d\n%s\n%s", killed, r.code, r.stdout, r.stderr)
			}
			// The re-run's report says which rows the killed runs had applied (imported
			// before), and applies the others: every row is one or the other.
			var rep struct {
				Rows []exchange.Result `json:"rows"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
				t.Fatalf("re-run report: %v\n%s", err, r.stdout)
			}
			before, applied := 0, 0
			for _, row := range rep.Rows {
				switch {
				case row.Outcome == exchange.Unchanged && strings.HasPrefix(row.Message, "imported before"):
					before++
				case row.Outcome == exchange.Created || row.Outcome == exchange.Updated:
					applied++
				default:
					t.Errorf("re-run row %d: %s %s", row.Row, row.Outcome, row.Message)
				}
			}
			if before == 0 || before+applied != 3*n {
				t.Errorf("re-run: %d rows imported before, %d applied; want some before and %d in all", before, applied, 3*n)
			}
			if w, g := wantState, productState(t, got); !mapsEqual(w, g) {
				for k, v := range w {
					if g[k] != v {
						t.Errorf("after %d kills, %s: got %s, want %s", killed, k, g[k], v)
						break
					}
				}
				t.Fatalf("after %d kills and a re-run: %d products, want %d", killed, len(g), len(w))
			}
			t.Logf("%d runs killed, then finished", killed)
		})
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// importReport is the JSON report of an import.
type importReport struct {
	DryRun  bool           `json:"dry_run"`
	Summary map[string]int `json:"summary"`
	Rows    []struct {
		Line    int    `json:"line"`
		ID      int64  `json:"id"`
		Outcome string `json:"outcome"`
		Holder  string `json:"holder"`
		Message string `json:"message"`
	} `json:"rows"`
}

func mustReport(t *testing.T, r result) importReport {
	t.Helper()
	var rep importReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("decode import --json: %v\n%s\n%s", err, r.stdout, r.stderr)
	}
	return rep
}

// TestCLI_ImportExitCodes: 0 when every row landed, 2 invalid, 4 leased, 3 conflict, with
// the other rows landing; --dry-run and --all-or-nothing write nothing.
func TestCLI_ImportExitCodes(t *testing.T) {
	besideOthers(t)
	dsn := newSQLiteStore(t)
	mustTandem(t, dsn, "import", writeFile(t, "base.csv", importBase(5)))
	mustTandem(t, dsn, "set", "product", "3", "name=Moved on", "--expect-version", "1")
	mustTandem(t, dsn, "--user", "bob", "lease", "acquire", "product", "4")

	file := func(rows ...string) string {
		return writeFile(t, "f.csv", "kind,id,version,price\n"+strings.Join(rows, "\n")+"\n")
	}
	cases := []struct {
		name string
		rows []string
		code int
		want []string // outcome per row
	}{
		{"OK", []string{"product,1,1,9.00"}, 0, []string{"updated"}},
		{"Invalid", []string{"product,2,1,9.00", "product,1,2,lots"}, 2, []string{"updated", "invalid"}},
		{"Conflict", []string{"product,3,1,9.00"}, 3, []string{"conflict"}},
		{"Leased", []string{"product,4,1,9.00", "product,5,1,9.00"}, 4, []string{"leased", "updated"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := tandem(t, dsn, "import", file(tc.rows...), "--json", "--key-prefix", tc.name)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d\n%s\n%s", r.code, tc.code, r.stdout, r.stderr)
			}
			var got []string
			for _, row := range mustReport(t, r).Rows {
				got = append(got, row.Outcome)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("outcomes %v, want %v", got, tc.want)
			}
		})
	}
	if r := mustGet(t, dsn, "product", 4); r.Version != 1 {
		t.Errorf("the leased product was written: version %d", r.Version)
	}
	leased := tandem(t, dsn, "import", file("product,4,1,1.00"))
	if !strings.Contains(leased.stdout, "bob") || !strings.Contains(leased.stdout, "leased") {
		t.Errorf("the table does not say who holds the lease:\n%s", leased.stdout)
	}

	t.Run("DryRun", func(t *testing.T) {
		f := writeFile(t, "dry.csv", "kind,id,version,sku,name,price\nproduct,1,2,B-1,Base 1,1.00\nproduct,,,,,\nproduct,99,,D-99,New,1.00\n")
		r := tandem(t, dsn, "import", f, "--dry-run", "--json")
		rep := mustReport(t, r)
		if !rep.DryRun || rep.Summary["updated"] != 1 || rep.Summary["invalid"] != 1 || rep.Summary["created"] != 1 || r.code != 2 {
			t.Fatalf("dry run: exit %d %+v", r.code, rep)
		}
		if g := mustGet(t, dsn, "product", 1); g.Version != 2 {
			t.Errorf("a dry run wrote: version %d", g.Version)
		}
	})
	t.Run("AllOrNothing", func(t *testing.T) {
		r := tandem(t, dsn, "import", file("product,1,2,1.00", "product,3,1,1.00"), "--all-or-nothing", "--json")
		if r.code != 3 {
			t.Fatalf("exit %d, want 3\n%s", r.code, r.stderr)
		}
		if g := mustGet(t, dsn, "product", 1); g.Version != 2 {
			t.Errorf("--all-or-nothing wrote the good row of a failing file: version %d", g.Version)
		}
	})
	t.Run("BadFile", func(t *testing.T) {
		r := tandem(t, dsn, "import", writeFile(t, "bad.csv", "kind,id,colour\nproduct,1,red\n"))
		if r.code != 2 || !strings.Contains(r.stderr, `unknown column "colour"`) {
			t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
		}
		r = tandem(t, dsn, "import", writeFile(t, "empty.csv", ""))
		if r.code != 2 || !strings.Contains(r.stderr, "empty") {
			t.Fatalf("empty file: exit %d, stderr %q", r.code, r.stderr)
		}
	})
}

// TestPrintImport_AsWholeReport: the report printed a row at a time from the spooled Report
// is byte for byte what a tabwriter and writeJSON made of the whole report held in memory:
// the summary first (counts, time, rows per second), then a table of the rows that need
// attention (every row with --all; JSON always has every row): widths from the widest cell
// listed, runes counted, cut fields, defused messages, C1 controls escaped in JSON, an
// empty report.
func TestPrintImport_AsWholeReport(t *testing.T) {
	whole := func(res []exchange.Result, sum exchange.Summary, dryRun, asJSON, every bool) string {
		var b bytes.Buffer
		if asJSON {
			if res == nil {
				res = []exchange.Result{}
			}
			if err := writeJSON(&b, jsonImport{DryRun: dryRun, Summary: sum, Rows: res}); err != nil {
				t.Fatal(err)
			}
			return b.String()
		}
		var parts []string
		for _, o := range []exchange.Outcome{exchange.Created, exchange.Updated, exchange.Unchanged,
			exchange.Conflict, exchange.Leased, exchange.Invalid} {
			if sum[o] > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", sum[o], o))
			}
		}
		what := rows(len(res))
		if dryRun {
			what += " (dry run: nothing written)"
		}
		if len(parts) == 0 {
			parts = []string{"nothing to import"}
		}
		// Under ten rows a second the rate keeps a decimal (0.7 rows/s, not 1).
		rate := fmt.Sprintf("%.0f", float64(len(res))/1.5)
		if n := len(res); n > 0 && n < 15 {
			rate = fmt.Sprintf("%.1f", float64(n)/1.5)
		}
		fmt.Fprintf(&b, "%s in 1.5s (%s rows/s): %s\n", what, rate, strings.Join(parts, ", "))
		tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
		listed := 0
		for _, r := range res {
			if every || len(r.LeftAlone) > 0 || r.Outcome != exchange.Created && r.Outcome != exchange.Updated && r.Outcome != exchange.Unchanged {
				if listed == 0 {
					fmt.Fprintln(tw, "ROW\tLINE\tOUTCOME\tKIND\tID\tVERSION\tFIELDS\tMESSAGE")
				}
				cells, msg := importCells(r)
				fmt.Fprintln(tw, strings.Join(cells[:], "\t")+"\t"+msg)
				listed++
			}
		}
		tw.Flush()
		return b.String()
	}
	all := []exchange.Result{
		{Row: 1, Line: 2, Kind: "product", ID: 1, Outcome: exchange.Updated, Version: 2, Fields: []string{"price"}},
		{Row: 2, Line: 3, Kind: "product", ID: 2, Outcome: exchange.Updated, Version: 4, Fields: []string{"price"},
			LeftAlone: []string{"checksum"}, Message: "not written, owned by system: checksum"},
		{Row: 2, Line: 3, Outcome: exchange.Invalid, Message: "price: \"lots\" is not money"},
		{Row: 3, Line: 4, Kind: "product", ID: 123456789, Outcome: exchange.Leased, Version: 7, Holder: "bøb", Message: "bøb holds a lease <&> \x1b[2J\u202e"},
		{Row: 4, Line: 9, Kind: "document", ID: 12, Outcome: exchange.Created, Version: 1,
			Fields: []string{"body", "categories", "description", "name", "parent_id", "sku", "title"}, Message: "ünïcödé → naïve\u0085"},
		{Row: 10000, Line: 123456, Kind: "product", ID: 5, Outcome: exchange.Unchanged, Version: 3, Message: "imported before"},
		{Row: 10001, Line: 123457, Kind: "product", ID: 6, Outcome: exchange.Conflict, Version: 9, Message: "edited from version 1\tand\nmore"},
	}
	for n := 0; n <= len(all); n++ {
		rep, err := exchange.NewReport()
		if err != nil {
			t.Fatal(err)
		}
		sum := exchange.Summary{}
		for _, r := range all[:n] {
			if err := rep.Add(r); err != nil {
				t.Fatal(err)
			}
			sum[r.Outcome]++
		}
		for _, dryRun := range []bool{false, true} {
			for _, asJSON := range []bool{false, true} {
				for _, every := range []bool{false, true} {
					var got bytes.Buffer
					if err := printImport(&got, rep, importPrint{dryRun: dryRun, asJSON: asJSON, all: every, took: 1500 * time.Millisecond}); err != nil {
						t.Fatal(err)
					}
					if want := whole(all[:n], sum, dryRun, asJSON, every); got.String() != want {
						t.Errorf("%d rows, dry run %v, JSON %v, all %v:\ngot\n%s\nwant\n%s", n, dryRun, asJSON, every, got.String(), want)
					}
				}
			}
		}
		rep.Close()
	}
}

// TestCLI_ImportFromPipe: an import read from a pipe (stdin, "-") is read more than once
// (the file check, --all-or-nothing's check, the writes) through a temporary copy, and
// lands as the same file does; a file refused as a whole on stdin writes nothing.
func TestCLI_ImportFromPipe(t *testing.T) {
	besideOthers(t)
	dsn := newSQLiteStore(t)
	data := importBase(3) + "product,,,,,,,\n" + "product,9,1,X-9,Nine,1.00,1,\n"
	run := func(stdin string, args ...string) result {
		t.Helper()
		cmd := tandemCmd(dsn, append([]string{"import", "-", "--format", "csv", "--json"}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		return runResult(t, cmd, args)
	}
	r := run(data, "--all-or-nothing")
	rep := mustReport(t, r)
	if r.code != 2 || rep.Summary["invalid"] != 1 || rep.Summary["not-written"] != 4 || countRecords(t, dsn, "product") != 0 {
		t.Fatalf("all-or-nothing from a pipe with an invalid row: exit %d %+v, %d products", r.code, rep, countRecords(t, dsn, "product"))
	}
	r = run(data)
	rep = mustReport(t, r)
	if r.code != 2 || rep.Summary["created"] != 4 || rep.Summary["invalid"] != 1 || len(rep.Rows) != 5 {
		t.Fatalf("import from a pipe: exit %d %+v", r.code, rep)
	}
	if r = run(data); mustReport(t, r).Summary["unchanged"] != 4 {
		t.Errorf("the same import again from a pipe: %s", r.stdout)
	}
	r = run(data + "\"bad\n")
	if r.code != exitUsage || !strings.Contains(r.stderr, "not valid CSV") || r.stdout != "" {
		t.Errorf("a bad file on stdin: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if n := countRecords(t, dsn, "product"); n != 4 {
		t.Errorf("%d products after the refused file, want 4", n)
	}
}

// TestCLI_ImportBadInputs: a directory is refused as bad input (exit 2) with a clear
// message, and JSON on stdin without --format is refused saying stdin is read as CSV.
func TestCLI_ImportBadInputs(t *testing.T) {
	dsn := newSQLiteStore(t)
	wantExit(t, "import .", tandem(t, dsn, "import", "."), exitUsage, ". is a directory")
	for _, in := range []string{
		`{"kind":"product","sku":"J-1","name":"J"}` + "\n",
		"  [" + `{"kind":"product","sku":"J-1","name":"J"}]`,
	} {
		cmd := tandemCmd(dsn, "import", "-")
		cmd.Stdin = strings.NewReader(in)
		wantExit(t, "JSON on stdin", runResult(t, cmd, nil), exitUsage, "stdin is read as CSV", "--format jsonl")
	}
	if n := countRecords(t, dsn, "product"); n != 0 {
		t.Errorf("%d products after refused imports", n)
	}
	// A file named .txt holding JSON Lines says it starts like JSON.
	path := writeFile(t, "rows.txt", `{"kind":"product","sku":"J-1","name":"J"}`+"\n")
	wantExit(t, "JSON in rows.txt", tandem(t, dsn, "import", path), exitUsage, "starts like JSON", "--format jsonl")
}

// TestCLI_ImportKeyIsContent: what makes two imports the same is their rows' content and
// position, not the file's name. A row edited from version 1 (stock 12 → 5) lands by
// --merge after someone renamed the product, and someone then sells one (5 → 4); the same
// rows again, under another name or on stdin, must not merge the stock's delta of −7 in a
// second time (4 → −3). Content changed at the same position applies.
func TestCLI_ImportKeyIsContent(t *testing.T) {
	besideOthers(t)
	for _, be := range backends(t) {
		t.Run(be.name, func(t *testing.T) {
			dsn := be.dsn(t)
			p := mustCreate(t, dsn, "product", "sku=KEY-1", "name=Keyed", "stock=12")
			id := fmt.Sprint(p.ID)
			mustTandem(t, dsn, "set", "product", id, "name=Renamed", "--expect-version", "1")
			const head = "kind,id,version,name,stock,base.name,base.stock\n"
			edit := fmt.Sprintf(head+"product,%d,1,Keyed,5,Keyed,12\n", p.ID) // stock 12 → 5, from version 1
			dir := t.TempDir()
			file := func(name, data string) func() result {
				return func() result {
					path := filepath.Join(dir, name)
					if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
						t.Fatal(err)
					}
					return tandem(t, dsn, "import", path, "--merge")
				}
			}
			stdin := func(data string) func() result {
				return func() result {
					cmd := tandemCmd(dsn, "import", "-", "--merge")
					cmd.Stdin = strings.NewReader(data)
					return runResult(t, cmd, []string{"import", "-", "--merge"})
				}
			}
			check := func(what string, r result, wantStock float64) record {
				t.Helper()
				if r.code != 0 {
					t.Fatalf("%s: exit %d\n%s%s", what, r.code, r.stdout, r.stderr)
				}
				got := mustGet(t, dsn, "product", p.ID)
				if got.Fields["stock"] != wantStock || got.Fields["name"] != "Renamed" {
					t.Fatalf("%s: stock %v name %v, want %v and Renamed\n%s", what, got.Fields["stock"], got.Fields["name"], wantStock, r.stdout)
				}
				return got
			}
			check("the file", file("export.csv", edit)(), 5)
			mustTandem(t, dsn, "adjust", "product", id, "stock", "-1")
			check("a copy under another name", file("export (1).csv", edit)(), 4)
			cur := check("the same rows on stdin", stdin(edit)(), 4)
			// The same position, new content: edited from the current version, 4 → 3.
			changed := fmt.Sprintf(head+"product,%d,%d,Renamed,3,Renamed,4\n", p.ID, cur.Version)
			check("content changed at the same position", file("export (2).csv", changed)(), 3)
			mustTandem(t, dsn, "adjust", "product", id, "stock", "10")
			check("the changed content on stdin", stdin(changed)(), 13)
			check("the first file once more", file("export.csv", edit)(), 13)
		})
	}
}

// TestCLI_ImportJSONMembersExact: a JSON row's members are matched exactly. A member that
// differs from a known one only by case ("ID" beside "id", "KIND", "Fields" beside
// "fields", a field "Stock") makes its row invalid with the reason, and writes nothing;
// encoding/json alone would update product "ID" names, or merge the two "fields".
func TestCLI_ImportJSONMembersExact(t *testing.T) {
	for _, be := range backends(t) {
		t.Run(be.name, func(t *testing.T) {
			dsn := be.dsn(t)
			a := mustCreate(t, dsn, "product", "sku=CASE-A", "name=A", "stock=1")
			b := mustCreate(t, dsn, "product", "sku=CASE-B", "name=B", "stock=2")
			rows := []string{
				fmt.Sprintf(`{"kind":"product","id":%d,"ID":%d,"fields":{"name":"by ID"}}`, a.ID, b.ID),
				fmt.Sprintf(`{"kind":"product","KIND":"document","id":%d,"fields":{"name":"by KIND"}}`, a.ID),
				fmt.Sprintf(`{"kind":"product","id":%d,"fields":{"name":"by fields"},"Fields":{"stock":99}}`, a.ID),
				fmt.Sprintf(`{"kind":"product","id":%d,"fields":{"Stock":99}}`, b.ID),
			}
			r := tandem(t, dsn, "import", writeFile(t, "rows.jsonl", strings.Join(rows, "\n")+"\n"), "--json")
			wantExit(t, "import of case twins", r, 2)
			var rep struct {
				Rows []exchange.Result `json:"rows"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
				t.Fatalf("import --json: %v\n%s", err, r.stdout)
			}
			wants := []string{`member "ID" differs from "id" only by case`, `member "KIND" differs from "kind" only by case`,
				`member "Fields" differs from "fields" only by case`, `fields: member "Stock" differs from the field "stock" only by case`}
			if len(rep.Rows) != len(wants) {
				t.Fatalf("%d rows reported, want %d:\n%s", len(rep.Rows), len(wants), r.stdout)
			}
			for i, want := range wants {
				if got := rep.Rows[i]; got.Outcome != exchange.Invalid || !strings.Contains(got.Message, want) {
					t.Errorf("row %d: %s %q; want invalid with %q", i+1, got.Outcome, got.Message, want)
				}
			}
			for _, p := range []record{a, b} {
				if got := mustGet(t, dsn, "product", p.ID); got.Version != 1 || got.Fields["name"] != p.Fields["name"] {
					t.Errorf("product %d: version %d name %v; a refused row wrote it", p.ID, got.Version, got.Fields["name"])
				}
			}
		})
	}
}
