package store_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
)

// issueExample is the schema issue 24 shows, as a user would write it.
const issueExample = `kinds:
  supplier:
    title: name                  # what lists, pickers and messages show
    fields:
      - {name: code,   type: string, owner: editor, rule: scalar, required: true, unique: true, max_chars: 32}
      - {name: name,   type: string, owner: editor, rule: scalar, required: true, search: true}
      - {name: rating, type: int,    owner: shared, rule: counter, default: 0}
      - {name: notes,  type: text,   owner: editor, rule: text, search: true}
  part:
    title: label
    fields:
      - {name: label,    type: string, owner: editor, rule: scalar, required: true, search: true}
      - {name: supplier, type: ref, to: supplier, owner: editor, rule: scalar}
      - {name: status,   type: enum, values: [draft, active, retired], owner: shared, rule: scalar, default: draft}
  area:
    tree: true                   # a parent field; moves serialized and cycle-checked as documents' are
    title: name
    fields:
      - {name: name, type: string, owner: editor, rule: scalar, required: true}
`

func mustParse(t testing.TB, text string) *store.Registry {
	t.Helper()
	r, err := store.ParseRegistry("test.yaml", []byte(text))
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, text)
	}
	return r
}

func fieldNames(fs []*store.Field) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Name)
	}
	return out
}

// TestParseRegistry_Schema: the issue's example parses into the kinds, tables, titles,
// traits and fields it says, with every default filled in.
func TestParseRegistry_Schema(t *testing.T) {
	r := mustParse(t, issueExample)
	if got, want := fmt.Sprint(r.Kinds()), "[supplier part area]"; got != want {
		t.Errorf("kinds = %s, want %s", got, want)
	}
	for _, tc := range []struct {
		kind   store.Kind
		table  string
		title  string
		tree   bool
		fields []string
		sort   []string
		search []string
	}{
		{"supplier", "suppliers", "name", false, []string{"code", "name", "rating", "notes"}, []string{"code", "name"}, []string{"name", "notes"}},
		{"part", "parts", "label", false, []string{"label", "supplier", "status"}, []string{"label"}, []string{"label"}},
		{"area", "areas", "name", true, []string{"parent_id", "name"}, []string{"name"}, nil},
	} {
		table, err := r.Table(tc.kind)
		if err != nil || table != tc.table || r.TitleField(tc.kind) != tc.title || r.Tree(tc.kind) != tc.tree {
			t.Errorf("%s: table %q (%v), title %q, tree %v; want %q, %q, %v", tc.kind, table, err, r.TitleField(tc.kind), r.Tree(tc.kind), tc.table, tc.title, tc.tree)
		}
		if got := fieldNames(r.Fields(tc.kind)); !slices.Equal(got, tc.fields) {
			t.Errorf("%s fields = %v, want %v", tc.kind, got, tc.fields)
		}
		if got := fieldNames(r.SortFields(tc.kind)); !slices.Equal(got, tc.sort) {
			t.Errorf("%s sort fields = %v, want %v", tc.kind, got, tc.sort)
		}
		if got := fieldNames(r.SearchFields(tc.kind)); !slices.Equal(got, tc.search) {
			t.Errorf("%s search fields = %v, want %v", tc.kind, got, tc.search)
		}
		if got := r.Groups(tc.kind); !slices.Equal(got, []string{"editor", "system"}) {
			t.Errorf("%s groups = %v, want editor and system", tc.kind, got)
		}
	}
	if got := fieldNames(r.UniqueFields("supplier")); !slices.Equal(got, []string{"code"}) {
		t.Errorf("unique fields = %v, want code", got)
	}
	refs := r.Refs("supplier")
	if len(refs) != 1 || refs[0].Kind != "part" || refs[0].Field.Name != "supplier" {
		t.Errorf("refs to supplier = %+v, want part.supplier", refs)
	}
	if refs := r.Refs("area"); len(refs) != 0 {
		t.Errorf("refs to area = %+v, want none (a tree's own parent is not a referrer)", refs)
	}
	parent, err := r.Field("area", store.ParentField)
	if err != nil || parent.Type != store.TypeRef || parent.To != "area" || !parent.ReadOnly {
		t.Errorf("area.parent_id = %+v, %v; want a readonly ref to area", parent, err)
	}
	vals, err := r.CheckCreate("part", store.RoleEditor, store.Values{"label": "Bolt"})
	if err != nil || vals["status"] != "draft" || vals["supplier"] != nil {
		t.Errorf("part defaults = %v, %v; want status draft, no supplier", vals, err)
	}
	vals, err = r.CheckCreate("supplier", store.RoleEditor, store.Values{"code": "A", "name": "B"})
	if err != nil || vals["rating"] != int64(0) || vals["notes"] != "" {
		t.Errorf("supplier defaults = %v, %v; want rating 0, notes empty", vals, err)
	}
	for in, want := range map[string]store.Kind{"supplier": "supplier", "suppliers": "supplier", "Parts": "part", "area": "area"} {
		if got, err := r.ParseKind(in); err != nil || got != want {
			t.Errorf("ParseKind(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := r.ParseKind("product"); store.ErrorCode(err) != store.EINVALID || !strings.Contains(err.Error(), "supplier, part and area") {
		t.Errorf("ParseKind(product) = %v, want EINVALID naming supplier, part and area", err)
	}
	if r.Has(store.KindProduct) || r.Legacy() {
		t.Errorf("has product %v, legacy %v; want neither", r.Has(store.KindProduct), r.Legacy())
	}
}

// TestParseRegistry_SchemaErr: every refusal of a schema file is EINVALID and names the
// file, the line of what is wrong and the problem.
func TestParseRegistry_SchemaErr(t *testing.T) {
	for _, tc := range []struct {
		name     string
		old, new string // replace old with new in the issue's example
		line     string // the line the error must name (found in the result)
		want     string
	}{
		{"unknown key of a field", "{name: code,", "{name: code, colour: red,", "colour: red", `unknown key "colour"`},
		{"unknown key of a kind", "    title: label\n", "    title: label\n    colour: red\n", "colour: red", `kind "part": unknown key "colour"`},
		{"unknown key beside kinds", "      - {name: name, type: string, owner: editor, rule: scalar, required: true}\n", "      - {name: name, type: string, owner: editor, rule: scalar, required: true}\nextra: 1\n", "extra: 1", `unknown key "extra" (a schema has only kinds:)`},
		{"bad kind name", "  part:", "  Part:", "Part:", `kind name "Part"`},
		{"kind name with a dash", "  part:", "  spare-part:", "spare-part:", `kind name "spare-part"`},
		{"bad field name", "{name: label,", "{name: 2label,", "2label", `field name "2label"`},
		{"bad table name", "    title: label\n", "    title: label\n    table: Parts\n", "table: Parts", `table name "Parts"`},
		{"reserved table", "    title: label\n", "    title: label\n    table: history\n", "table: history", `table "history" is one of tandem's own names`},
		{"reserved prefix", "    title: label\n", "    title: label\n    table: tandem_parts\n", "table: tandem_parts", `starts with tandem_`},
		{"reserved suffix", "    title: label\n", "    title: label\n    table: parts_fts\n", "table: parts_fts", `one of tandem's own names`},
		{"two kinds on one table", "    title: label\n", "    title: label\n    table: suppliers\n", "table: suppliers", "kind supplier and kind part would both use the table suppliers"},
		{"kind listed twice", "  area:\n    tree: true", "  supplier:  # again\n    tree: true", "supplier:  # again", `kind "supplier" listed twice`},
		{"field listed twice", "      - {name: notes,", "      - {name: code, type: string, owner: editor, rule: scalar}\n      - {name: notes,", "{name: code, type: string, owner: editor, rule: scalar}", "supplier.code listed twice"},
		{"meta column", "{name: notes,", "{name: version,", "name: version", "version is a column tandem keeps itself"},
		{"ref to an unknown kind", "to: supplier", "to: vendor", "to: vendor", `part.supplier: to "vendor" is not a kind of this schema (it has supplier, part and area)`},
		{"to on a non-ref", "{name: label,    type: string,", "{name: label,    type: string, to: part,", "to: part", "to: is for ref fields"},
		{"unique on an int", "rule: counter, default: 0}", "rule: counter, default: 0, unique: true}", "default: 0, unique: true}", "supplier.rating: only string fields can be unique"},
		{"unique without required", "required: true, unique: true, max_chars: 32}", "unique: true, max_chars: 32}", "unique: true, max_chars: 32}", "supplier.code: a unique field must be required"},
		{"table not a name", "    title: label\n", "    title: label\n    table: [a, b]\n", "table: [a, b]", `kind "part": table: want a name`},
		{"title not a name", "title: label", "title: {field: label}", "title: {field: label}", `kind "part": title: want a field name`},
		{"key of a kind twice", "    title: label\n", "    title: label\n    title: status\n", "title: status", `kind "part": title given twice`},
		{"kind named as another's table", "  area:\n", "  parts:\n    table: spare_parts\n    fields:\n      - {name: label, type: string, owner: editor, rule: scalar}\n  area:\n",
			"  parts:", "kind parts has the name of kind part's table"},
		{"search table name too long", "  area:\n", "  long:\n    table: tttttttttttttttttttttttttttttttttttttttt\n    fields:\n      - {name: a_rather_long_name, type: string, owner: editor, rule: scalar, search: true}\n  area:\n",
			"name: a_rather_long_name", "long.a_rather_long_name's search table would be tttttttttttttttttttttttttttttttttttttttt_a_rather_long_name_search, longer than 63 bytes"},
		{"title naming a missing field", "title: label", "title: nom", "title: nom", `kind part: title "nom" must name one of its string fields`},
		{"title naming a ref", "title: label", "title: supplier", "title: supplier", `title "supplier" must name one of its string fields`},
		{"default of the wrong type", "default: 0}", "default: lots}", "default: lots", `supplier.rating: default "lots"`},
		{"default not in the enum", "default: draft}", "default: gone}", "default: gone", `part.status: default "gone"`},
		{"label with an escape", "{name: notes,", "{name: notes, label: \"n\\e[2J\",", "label: ", `supplier.notes: label "n\x1b[2J": want one line of printable text`},
		{"enum value with an escape", "values: [draft,", "values: [\"\\e[2J\", draft,", "values: ", `part.status: value "\x1b[2J": want one line of printable text`},
		{"label with a bidi override", "{name: notes,", "{name: notes, label: \"a\\u202eb\",", "label: ", `supplier.notes: label "a\u202eb": want one line`},
		{"default of a ref", "to: supplier, owner: editor, rule: scalar}", "to: supplier, owner: editor, rule: scalar, default: 1}", "default: 1}", "a ref or unique field has no default"},
		{"default over the limit", "unique: true, max_chars: 32}", "max_chars: 2, default: long}", "default: long", `supplier.code: default "long"`},
		{"enum without values", "values: [draft, active, retired]", "values: []", "values: []", "part.status: an enum needs values"},
		{"bad type", "{name: rating, type: int,", "{name: rating, type: float,", "type: float", `supplier.rating: type "float"`},
		{"writable parent_id", "      - {name: name, type: string, owner: editor, rule: scalar, required: true}\n",
			"      - {name: parent_id, type: ref, owner: editor, rule: scalar}\n      - {name: name, type: string, owner: editor, rule: scalar, required: true}\n",
			"name: parent_id", `area.parent_id must be a ref with "readonly: true"`},
		{"parent_id of another kind", "      - {name: name, type: string, owner: editor, rule: scalar, required: true}\n",
			"      - {name: parent_id, type: ref, to: supplier, readonly: true, owner: editor, rule: scalar}\n      - {name: name, type: string, owner: editor, rule: scalar, required: true}\n",
			"name: parent_id", "area.parent_id: a tree's parent is a record of the same kind"},
		{"unique key column taken", "      - {name: notes,", "      - {name: code_key, type: string, owner: editor, rule: scalar}\n      - {name: notes,", "name: code_key", "supplier.code_key: the column code_key keeps code's key"},
		{"fold column taken", "      - {name: notes,", "      - {name: name_fold, type: string, owner: editor, rule: scalar}\n      - {name: notes,", "name: name_fold", "supplier.name_fold: the column name_fold keeps name's key or folded copy"},
		{"search side tables collide", "  area:\n",
			"  x:\n    table: aa\n    fields:\n      - {name: b_c, type: string, owner: editor, rule: scalar, search: true}\n" +
				"  y:\n    table: aa_b\n    fields:\n      - {name: c, type: string, owner: editor, rule: scalar, search: true}\n  area:\n",
			"{name: c, type", "x.b_c's search table and y.c's search table would both use the table aa_b_c_search"},
		{"search on an int", "rule: counter, default: 0}", "rule: counter, default: 0, search: true}", "default: 0, search: true}", "only string, text, set and enum fields can be searched"},
		{"no fields", "      - {name: name, type: string, owner: editor, rule: scalar, required: true}\n", "", "area:", `kind "area": want fields: with at least one field`},
		{"tree not a bool", "tree: true ", "tree: maybe ", "tree: maybe", `kind "area": tree:`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := strings.Replace(issueExample, tc.old, tc.new, 1)
			if text == issueExample {
				t.Fatalf("replacement of %q did not apply", tc.old)
			}
			_, err := store.ParseRegistry("test.yaml", []byte(text))
			if store.ErrorCode(err) != store.EINVALID {
				t.Fatalf("error = %v, want %s", err, store.EINVALID)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
			if want := fmt.Sprintf("schema test.yaml:%d: ", lineOf(t, text, tc.line)); !strings.HasPrefix(err.Error(), want) {
				t.Errorf("error %q does not start with the place %q", err, want)
			}
		})
	}
}

// bigSchema returns a schema of kinds kinds with fields fields each, of every type, some
// searched, sorted, unique, with defaults, and refs to the kind before.
func bigSchema(kinds, fields int) string {
	var b strings.Builder
	b.WriteString("kinds:\n")
	for k := range kinds {
		fmt.Fprintf(&b, "  kind%02d:\n", k)
		if k%10 == 9 {
			b.WriteString("    tree: true\n")
		}
		b.WriteString("    fields:\n")
		for f := range fields {
			name := fmt.Sprintf("field%02d", f)
			switch f % 8 {
			case 0:
				fmt.Fprintf(&b, "      - {name: %s, type: string, owner: editor, rule: scalar, required: true, unique: %v, search: true, max_chars: 200}\n", name, f == 0)
			case 1:
				fmt.Fprintf(&b, "      - {name: %s, type: text, owner: editor, rule: text, search: true}\n", name)
			case 2:
				fmt.Fprintf(&b, "      - {name: %s, type: int, owner: shared, rule: counter, default: 7, sort: true}\n", name)
			case 3:
				fmt.Fprintf(&b, "      - {name: %s, type: money, owner: editor, rule: scalar, default: \"1.50\"}\n", name)
			case 4:
				fmt.Fprintf(&b, "      - {name: %s, type: set, owner: editor, rule: set, max_items: 10}\n", name)
			case 5:
				fmt.Fprintf(&b, "      - {name: %s, type: enum, values: [a, b, c], owner: shared, rule: scalar, default: b, group: review}\n", name)
			case 6:
				fmt.Fprintf(&b, "      - {name: %s, type: time, owner: system, rule: scalar}\n", name)
			case 7:
				fmt.Fprintf(&b, "      - {name: %s, type: ref, to: kind%02d, owner: editor, rule: scalar}\n", name, max(k-1, 0))
			}
		}
	}
	return b.String()
}

// TestParseRegistry_Big: a schema of 50 kinds of 40 fields parses, and one kind more than
// MaxKinds, or one field more than MaxFieldsPerKind, is refused naming the line where it
// goes over.
func TestParseRegistry_Big(t *testing.T) {
	r := mustParse(t, bigSchema(50, 40))
	if len(r.Kinds()) != 50 || len(r.Fields("kind03")) != 40 || len(r.Fields("kind09")) != 41 {
		t.Errorf("kinds %d, fields of kind03 %d, of the tree kind09 %d; want 50, 40, 41", len(r.Kinds()), len(r.Fields("kind03")), len(r.Fields("kind09")))
	}
	if again := mustParse(t, string(r.YAML())); !again.Same(r) {
		t.Errorf("the big schema's YAML does not read back as itself")
	}

	text := bigSchema(store.MaxKinds+1, 1)
	_, err := store.ParseRegistry("test.yaml", []byte(text))
	want := fmt.Sprintf("schema test.yaml:%d: more than %d kinds", lineOf(t, text, fmt.Sprintf("kind%02d:", store.MaxKinds)), store.MaxKinds)
	if store.ErrorCode(err) != store.EINVALID || !strings.HasPrefix(fmt.Sprint(err), want) {
		t.Errorf("%d kinds: error = %v, want %q", store.MaxKinds+1, err, want)
	}
	if _, err := store.ParseRegistry("test.yaml", []byte(bigSchema(store.MaxKinds, 1))); err != nil {
		t.Errorf("%d kinds: %v, want them accepted", store.MaxKinds, err)
	}

	// 52 kinds of 40 fields, ten of them searched: 520 searched fields, over the limit.
	text = bigSchema(52, 40)
	_, err = store.ParseRegistry("test.yaml", []byte(text))
	if store.ErrorCode(err) != store.EINVALID || !strings.Contains(fmt.Sprint(err), fmt.Sprintf("more than %d searched fields", store.MaxSearchFields)) {
		t.Errorf("520 searched fields: error = %v, want the limit named", err)
	}

	text = bigSchema(1, store.MaxFieldsPerKind+1)
	_, err = store.ParseRegistry("test.yaml", []byte(text))
	want = fmt.Sprintf("schema test.yaml:%d: kind kind00 has %d fields (at most %d)", lineOf(t, text, "kind00:"), store.MaxFieldsPerKind+1, store.MaxFieldsPerKind)
	if store.ErrorCode(err) != store.EINVALID || !strings.HasPrefix(fmt.Sprint(err), want) {
		t.Errorf("%d fields: error = %v, want %q", store.MaxFieldsPerKind+1, err, want)
	}
}

// TestRegistry_YAML: a schema's YAML spells out every default and reads back as the same
// schema, which writes the same YAML again; the same holds for the sample and for a file
// of the form before schemas.
func TestRegistry_YAML(t *testing.T) {
	legacy, err := store.LoadRegistry("testdata/legacy_fields.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]*store.Registry{
		"issue example": mustParse(t, issueExample),
		"sample":        store.DefaultRegistry(),
		"legacy":        legacy,
	} {
		t.Run(name, func(t *testing.T) {
			text := r.YAML()
			again := mustParse(t, string(text))
			if !again.Same(r) || string(again.YAML()) != string(text) {
				t.Errorf("YAML does not read back as itself:\n%s\nthen\n%s", text, again.YAML())
			}
			for _, k := range r.Kinds() {
				for _, f := range r.Fields(k) {
					g, err := again.Field(k, f.Name)
					if err != nil || fmt.Sprint(g.Zero()) != fmt.Sprint(f.Zero()) || g.Group != f.Group || g.Label != f.Label || g.To != f.To {
						t.Errorf("%s.%s after a round trip = %+v, %v; want %+v", k, f.Name, g, err, f)
					}
				}
			}
		})
	}
	text := string(mustParse(t, issueExample).YAML())
	for _, want := range []string{"table: suppliers", "title: label", "tree: true", "to: supplier", "default: draft", "group: editor", "name: parent_id"} {
		if !strings.Contains(text, want) {
			t.Errorf("YAML lacks %q:\n%s", want, text)
		}
	}
}

// BenchmarkParseSchema50x40 parses a schema of 50 kinds of 40 fields each (issue 24: a
// schema of that size opens in under 100 ms).
func BenchmarkParseSchema50x40(b *testing.B) {
	text := []byte(bigSchema(50, 40))
	for b.Loop() {
		if _, err := store.ParseRegistry("big.yaml", text); err != nil {
			b.Fatal(err)
		}
	}
}
