package exchange

import (
	"bytes"
	"encoding/csv"
	"slices"
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/memory"
)

// TestCells_DefuseIsUndone: import reads back every string export writes, whatever it
// starts with, and no cell export writes starts with a formula trigger. The table holds the
// cases by name; then every string of up to five characters from the triggers, the quote
// and a letter is tried.
func TestCells_DefuseIsUndone(t *testing.T) {
	check := func(s string) {
		t.Helper()
		c := defuse(s)
		if got := undefuse(c); got != s {
			t.Errorf("%q is written %q and read back %q", s, c, got)
		}
		if c != "" && formulaTrigger(c[0]) {
			t.Errorf("%q is written %q, which a spreadsheet reads as a formula", s, c)
		}
		if b := appendDefused([]byte("x,"+s), 2); string(b[2:]) != c {
			t.Errorf("appendDefused(%q) = %q, want %q", s, b[2:], c)
		}
	}
	for _, s := range []string{"", "'", "''", "'''", "''=", "'=", "'=x", "''=x", "'a", "'-5", "-5", "-", "=",
		`=HYPERLINK("http://x","y")`, `+cmd|' /C calc'!A0`, "@SUM(A1)", "\tx", "\rx", "'\tx", "'\r",
		"a=b", "plain", " =1+1", "5", "'5", "\u00a0=x"} {
		check(s)
	}
	alphabet := "'=+-@\t\ra"
	var walk func(prefix string)
	walk = func(prefix string) {
		check(prefix)
		if len(prefix) == 5 {
			return
		}
		for i := range len(alphabet) {
			walk(prefix + alphabet[i:i+1])
		}
	}
	walk("")
}

// TestCells_ExportImportIdentity: a CSV export defuses text cells that a spreadsheet would
// run (with a quote in front, as OWASP recommends) and leaves numbers alone; its import
// into a fresh store gives every record back unchanged. With RawCells on both sides the
// cells are written and read as they are.
func TestCells_ExportImportIdentity(t *testing.T) {
	values := []string{`=HYPERLINK("http://x","y")`, `+cmd|' /C calc'!A0`, "-5", "@SUM(A1)", "'", "''=",
		"'=x", "'-5", "plain", "'quoted'"}
	texts := append(slices.Clone(values), "\tindented", "\rcarriage", "'\tquoted tab")
	src := memory.New(store.Options{})
	ctx := as(t, alice)
	for i, v := range texts {
		name := strings.NewReplacer("\t", "_", "\r", "_").Replace(v) // one line: no tab, no CR
		vals := store.Values{"sku": "S-" + itoa(i), "name": name, "description": v, "stock": int64(-5 - i),
			"price": int64(150 * i)}
		if i < len(values) {
			vals["categories"] = []string{strings.ReplaceAll(values[i], ",", ";"), "z"}
		}
		if _, err := src.CreateRecord(ctx, store.KindProduct, vals); err != nil {
			t.Fatalf("create %q: %v", v, err)
		}
	}
	for _, raw := range []bool{false, true} {
		out := mustExport(t, src, store.KindProduct, CSV, WriterOptions{RawCells: raw})
		recs, err := csv.NewReader(bytes.NewReader(out)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		col := map[string]int{}
		for i, h := range recs[0] {
			col[h] = i
		}
		for i, rec := range recs[1:] {
			desc := rec[col["description"]]
			wantDesc := texts[i]
			if !raw {
				wantDesc = defuse(texts[i])
			}
			if desc != wantDesc {
				t.Errorf("raw %v: description %q written as %q, want %q", raw, texts[i], desc, wantDesc)
			}
			if !raw && desc != "" && formulaTrigger(desc[0]) {
				t.Errorf("description %q starts with a formula trigger", desc)
			}
			if got, want := rec[col["stock"]], itoa(-5-i); got != want {
				t.Errorf("raw %v: stock written %q, want %q (numbers are never touched)", raw, got, want)
			}
		}
		dst := memory.New(store.Options{})
		var res []Result
		if raw {
			res = mustImportRaw(t, dst, out)
		} else {
			res, _ = mustImport(t, ctx, dst, out, CSV, ImportOptions{})
		}
		for _, r := range res {
			if r.Outcome != Created {
				t.Fatalf("raw %v: import row %d: %s %s", raw, r.Row, r.Outcome, r.Message)
			}
		}
		for i := range texts {
			id := int64(i + 1)
			a, _ := src.FindRecord(ctx, store.KindProduct, id)
			b, _ := dst.FindRecord(ctx, store.KindProduct, id)
			for _, f := range []string{"sku", "name", "description", "categories", "stock", "price"} {
				if !store.Equal(a.Fields[f], b.Fields[f]) {
					t.Errorf("raw %v: product %d %s: exported %#v, imported %#v", raw, id, f, a.Fields[f], b.Fields[f])
				}
			}
		}
	}
}

// mustImportRaw imports CSV data with its cells read as they are.
func mustImportRaw(t *testing.T, st store.Store, data []byte) []Result {
	t.Helper()
	src, err := NewSource(bytes.NewReader(data), CSV, st.Registry())
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	src.ReadRawCells()
	rep, err := NewReport()
	if err != nil {
		t.Fatal(err)
	}
	defer rep.Close()
	if err := NewImporter(st, ImportOptions{KeyPrefix: "raw"}).ApplyAll(as(t, alice), src, false, nil, rep); err != nil {
		t.Fatal(err)
	}
	var res []Result
	if err := rep.Each(func(r Result) error { res = append(res, r); return nil }); err != nil {
		t.Fatal(err)
	}
	return res
}
