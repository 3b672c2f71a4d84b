package exchange

import (
	"bytes"
	"encoding/csv"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
)

// TestCSVFieldMatchesEncodingCSV: the export's own CSV line building writes every field as
// encoding/csv does, quotes, spaces and line ends included.
func TestCSVFieldMatchesEncodingCSV(t *testing.T) {
	fields := []string{"", "plain", `\.`, `\.x`, `a"b`, `"`, "a,b", ",", "line\nbreak", "cr\rlf\r\n",
		" lead", "\tlead", "\u00a0nbsp", "\u3000ideographic", "trail ", "Ünïcode", "\xff\xfe bad", "\xe3\x80",
		"€5", "-0.05", "2026-12-01T10:00:00Z", "a\"\"b\n,\r"}
	for _, f := range fields {
		var want bytes.Buffer
		w := csv.NewWriter(&want)
		if err := w.Write([]string{f, f}); err != nil {
			t.Fatal(err)
		}
		w.Flush()
		got := appendCSVField(nil, f)
		got = append(appendCSVField(append(got, ','), []byte(f)), '\n')
		if string(got) != want.String() {
			t.Errorf("field %q: wrote %q, encoding/csv writes %q", f, got, want.String())
		}
	}
}

// TestCSVLineMatchesEncodingCSV: a record's whole CSV line, its updated_at formatted straight
// into the line included, is what encoding/csv writes of the same cells (cell, formatTime),
// for times with and without fractions, before year 1000, far ahead, in another zone, and
// unset.
func TestCSVLineMatchesEncodingCSV(t *testing.T) {
	reg := store.DefaultRegistry()
	times := []time.Time{
		time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC),
		time.Date(2026, 12, 1, 10, 0, 0, 123456789, time.UTC),
		time.Date(2026, 12, 1, 10, 0, 0, 120000000, time.FixedZone("x", 5*3600)),
		time.Date(999, 1, 2, 3, 4, 5, 6, time.UTC),
		time.Date(12345, 1, 2, 3, 4, 5, 0, time.UTC),
		{},
	}
	for _, at := range times {
		r := &store.Record{Kind: store.KindProduct, ID: 7, Version: 3, UpdatedBy: "a, \"b\"", UpdatedAt: at,
			Fields: store.Values{"sku": "S-1", "price": int64(1999), "categories": []string{"a", "b"}}}
		var got bytes.Buffer
		x, err := NewWriter(&got, CSV, reg, store.KindProduct, WriterOptions{Fields: []string{"sku", "price", "categories"}})
		if err != nil {
			t.Fatal(err)
		}
		if err := x.Write(r); err != nil {
			t.Fatal(err)
		}
		if err := x.Close(); err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		w := csv.NewWriter(&want)
		line := []string{"product", "7", "3"}
		for _, name := range []string{"sku", "price", "categories"} {
			f, err := reg.Field(store.KindProduct, name)
			if err != nil {
				t.Fatal(err)
			}
			line = append(line, cell(f, r.Fields[name]))
		}
		if err := w.WriteAll([][]string{x.header(), append(line, r.UpdatedBy, formatTime(r))}); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("updated_at %v: wrote\n%q\nencoding/csv writes\n%q", at, got.String(), want.String())
		}
	}
}
