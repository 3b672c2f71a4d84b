package store_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
)

func field(t *testing.T, kind store.Kind, name string) *store.Field {
	t.Helper()
	f, err := store.DefaultRegistry().Field(kind, name)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestParseMoney(t *testing.T) {
	for in, want := range map[string]int64{
		"29.99": 2999, "29.9": 2990, "29": 2900, "0.05": 5, ".5": 50, "-3.5": -350,
		"+1.00": 100, " 7 ": 700, "0": 0, "92233720368547758.07": 9223372036854775807,
	} {
		if got, err := store.ParseMoney(in); err != nil || got != want {
			t.Errorf("ParseMoney(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "29.999", "abc", "1.", "1,50", "--1", "1e3", "1.2.3", "€5", "92233720368547758.08", "-"} {
		if got, err := store.ParseMoney(in); err == nil {
			t.Errorf("ParseMoney(%q) = %d, want an error", in, got)
		}
	}
}

func TestFormatMoney(t *testing.T) {
	for cents, want := range map[int64]string{2999: "29.99", 5: "0.05", -5: "-0.05", 0: "0.00", 100: "1.00", -12345: "-123.45",
		9223372036854775807: "92233720368547758.07", -9223372036854775808: "-92233720368547758.08"} {
		if got := store.FormatMoney(cents); got != want {
			t.Errorf("FormatMoney(%d) = %q, want %q", cents, got, want)
		}
	}
	// Every amount survives the round trip exactly (no floating point anywhere).
	for cents := int64(-1000); cents <= 100000; cents += 7 {
		got, err := store.ParseMoney(store.FormatMoney(cents))
		if err != nil || got != cents {
			t.Fatalf("round trip of %d = %d, %v", cents, got, err)
		}
	}
}

func TestField_Parse(t *testing.T) {
	price := field(t, store.KindProduct, "price")
	stock := field(t, store.KindProduct, "stock")
	cats := field(t, store.KindProduct, "categories")
	avail := field(t, store.KindProduct, "availability")
	sync := field(t, store.KindProduct, "last_sync_at")
	parent := field(t, store.KindDocument, "parent_id")
	ref := &store.Field{Name: "supplier", Type: store.TypeRef, To: "supplier"}
	for _, tc := range []struct {
		f    *store.Field
		in   string
		want any
		text string // the Format of the parsed value
	}{
		{price, "29.99", int64(2999), "29.99"},
		{price, "29", int64(2900), "29.00"},
		{stock, "-3", int64(-3), "-3"},
		{cats, " tools, garden,tools ,", []string{"garden", "tools"}, "garden,tools"},
		{cats, "", []string{}, ""},
		{avail, "backorder", "backorder", "backorder"},
		{sync, "2026-12-01T10:05:00+01:00", time.Date(2026, 12, 1, 9, 5, 0, 0, time.UTC), "2026-12-01T09:05:00Z"},
		{sync, "", nil, ""},
		{parent, "root", nil, ""},
		{parent, "42", int64(42), "42"},
		{ref, "", nil, ""},
		{ref, "7", int64(7), "7"},
	} {
		got, err := tc.f.Parse(tc.in)
		if err != nil || !store.Equal(got, tc.want) {
			t.Errorf("%s.Parse(%q) = %#v, %v; want %#v", tc.f.Name, tc.in, got, err, tc.want)
			continue
		}
		if text := tc.f.Format(got); text != tc.text {
			t.Errorf("%s.Format(%#v) = %q, want %q", tc.f.Name, got, text, tc.text)
		}
	}
	for _, tc := range []struct {
		f  *store.Field
		in string
	}{
		{stock, "abc"}, {stock, "1.5"}, {price, "-1.00"}, {price, "12.345"}, {avail, "sold"},
		{sync, "yesterday"}, {parent, "0"}, {parent, "x"}, {stock, "\xff"},
		{ref, "root"}, // only a tree's parent has a root; a plain reference is an id or empty
	} {
		if got, err := tc.f.Parse(tc.in); store.ErrorCode(err) != store.EINVALID {
			t.Errorf("%s.Parse(%q) = %#v, %v; want %s", tc.f.Name, tc.in, got, err, store.EINVALID)
		}
	}
}

func TestField_Check(t *testing.T) {
	name := field(t, store.KindProduct, "name")
	desc := field(t, store.KindProduct, "description")
	body := field(t, store.KindDocument, "body")
	cats := field(t, store.KindProduct, "categories")
	stock := field(t, store.KindProduct, "stock")
	ok := []struct {
		f *store.Field
		v any
	}{
		{name, strings.Repeat("é", 1000)}, // characters, not bytes
		{desc, "line one\n\tindented\r\n"},
		{body, strings.Repeat("x", 16<<20)},
		{cats, []string{"a", "b"}},
		{stock, int64(-5)},
	}
	for _, tc := range ok {
		if err := tc.f.Check(tc.v); err != nil {
			t.Errorf("%s.Check(%.20q) = %v, want nil", tc.f.Name, tc.v, err)
		}
	}
	bad := []struct {
		what string
		f    *store.Field
		v    any
		want string
	}{
		{"name over 1,000 characters", name, strings.Repeat("n", 1001), "over the limit of 1000"},
		{"body over 16 MiB", body, strings.Repeat("x", 16<<20+1), "over the limit of 16777216"},
		{"invalid UTF-8", desc, "ok \xc3\x28 not", "not valid UTF-8"},
		{"newline in a one-line field", name, "two\nlines", "control character"},
		{"escape sequence", desc, "\x1b]0;pwned\a", "control character"},
		{"NUL", name, "a\x00b", "control character"},
		{"C1 control", name, "a\u0085b", "control character"},
		{"empty required", name, "  ", "cannot be empty"},
		{"wrong Go type", stock, "5", "want a whole number"},
		{"float", stock, 5.0, "want a whole number"},
		{"null", name, nil, "cannot be empty"},
		{"unsorted set", cats, []string{"b", "a"}, "not normalized"},
		{"set item with comma", cats, []string{"a,b"}, "without commas"},
		{"too many items", cats, make([]string, 65), "over the limit of 64"},
	}
	for _, tc := range bad {
		err := tc.f.Check(tc.v)
		if store.ErrorCode(err) != store.EINVALID || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error = %v, want %s containing %q", tc.what, err, store.EINVALID, tc.want)
		}
	}
}

func TestField_ExportImport(t *testing.T) {
	when := time.Date(2026, 12, 1, 10, 5, 0, 123_000_000, time.UTC)
	for _, tc := range []struct {
		f    *store.Field
		v    any
		json string
	}{
		{field(t, store.KindProduct, "price"), int64(2999), `"29.99"`},
		{field(t, store.KindProduct, "stock"), int64(-3), `-3`},
		{field(t, store.KindProduct, "categories"), []string{"a", "b"}, `["a","b"]`},
		{field(t, store.KindProduct, "categories"), []string(nil), `[]`},
		{field(t, store.KindProduct, "last_sync_at"), when, `"2026-12-01T10:05:00.123Z"`},
		{field(t, store.KindProduct, "last_sync_at"), nil, `null`},
		{field(t, store.KindDocument, "parent_id"), int64(7), `7`},
	} {
		b, err := json.Marshal(tc.f.Export(tc.v))
		if err != nil || string(b) != tc.json {
			t.Errorf("%s export of %#v = %s, %v; want %s", tc.f.Name, tc.v, b, err, tc.json)
			continue
		}
		var decoded any
		if err := json.Unmarshal(b, &decoded); err != nil {
			t.Fatal(err)
		}
		back, err := tc.f.Import(decoded)
		want := tc.v
		if s, ok := want.([]string); ok && s == nil {
			want = []string{}
		}
		if err != nil || !store.Equal(back, want) {
			t.Errorf("%s import of %s = %#v, %v; want %#v", tc.f.Name, b, back, err, want)
		}
	}
	price := field(t, store.KindProduct, "price")
	if _, err := price.Import(29.99); store.ErrorCode(err) != store.EINVALID {
		t.Errorf("money as a JSON number = %v, want %s (floats are never money)", err, store.EINVALID)
	}
}
