package store_test

import (
	"os"
	"reflect"
	"testing"

	"github.com/tandem-editor/tandem/store"
)

// TestParseStoredRegistry: a schema as a store keeps it (YAML's form) is read without the
// YAML parser, to what ParseRegistry reads from the same text, quoted strings, lists and
// every key included; other text goes to ParseRegistry.
func TestParseStoredRegistry(t *testing.T) {
	parts, err := os.ReadFile("testdata/parts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tricky := `kinds:
  note:
    table: notes
    title: text
    fields:
      - {name: text, label: "Text: the \"body\", all of it", type: text, owner: editor, rule: text, search: true}
      - {name: mood, type: enum, values: [fine, "not, really", "a]b"], owner: shared, rule: scalar, default: "not, really", group: review}
      - {name: n, type: int, owner: system, rule: counter, default: "-3", sort: true}
      - {name: tags, type: set, owner: editor, rule: set, max_items: 5, unique: false}
`
	for name, text := range map[string]string{"sample": string(store.DefaultRegistry().YAML()), "parts": string(parts),
		"big": bigSchema(50, 40), "tricky": tricky} {
		t.Run(name, func(t *testing.T) {
			want, err := store.ParseRegistry(name, []byte(text))
			if err != nil {
				t.Fatal(err)
			}
			stored := want.YAML()
			if store.ParseWritten(stored) == nil {
				t.Fatalf("the stored form of %s is not read without the YAML parser:\n%s", name, stored)
			}
			got, err := store.ParseStoredRegistry(name, stored)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Same(want) {
				t.Fatalf("read back:\n%s\nwant:\n%s", got.YAML(), stored)
			}
			for _, k := range want.Kinds() {
				for i, f := range want.Fields(k) {
					g := got.Fields(k)[i]
					if !reflect.DeepEqual(g.Zero(), f.Zero()) || !reflect.DeepEqual(g.Values, f.Values) || g.Label != f.Label {
						t.Errorf("%s.%s = %+v, want %+v", k, f.Name, g, f)
					}
				}
			}
		})
	}
	// Not the stored form: ParseRegistry reads it, and says where it is wrong.
	if store.ParseWritten([]byte(tricky)) != nil {
		t.Error("a schema file with an unknown key read as the stored form")
	}
	if _, err := store.ParseStoredRegistry("bad", []byte("kinds:\n  a:\n    fields:\n      - {name: x, type: nope, owner: editor, rule: scalar}\n")); store.ErrorCode(err) != store.EINVALID {
		t.Errorf("a bad schema = %v, want EINVALID", err)
	}
}

// BenchmarkParseStoredSchema50x40 reads the stored form of a schema of 50 kinds of 40
// fields, as opening a store does (compare BenchmarkParseSchema50x40).
func BenchmarkParseStoredSchema50x40(b *testing.B) {
	reg, err := store.ParseRegistry("big.yaml", []byte(bigSchema(50, 40)))
	if err != nil {
		b.Fatal(err)
	}
	text := reg.YAML()
	for b.Loop() {
		if _, err := store.ParseStoredRegistry("big.yaml", text); err != nil {
			b.Fatal(err)
		}
	}
}

// TestYAMLStringPlain: the written-out tests of a plain YAML string agree with the regular
// expressions they stand for.
func TestYAMLStringPlain(t *testing.T) {
	for _, s := range []string{"", "a", "_", "1", "a1", "a b", "a ", " a", "a-b", "a.b/c", "a,b", "a:b", "é", "aé", "Name x",
		"a\n", "-a", ".a", "ab-", "a b c", "yes", "x_y_z"} {
		if got, want := store.PlainString(s), store.PlainYAML.MatchString(s); got != want {
			t.Errorf("plainString(%q) = %v, want %v", s, got, want)
		}
	}
	for _, s := range []string{"y", "N", "Yes", "no", "ON", "off", "True", "false", "NULL", "nulls", "yess", "o", "", "truth"} {
		if got, want := store.YAMLWord(s), store.YAMLWords.MatchString(s); got != want {
			t.Errorf("yamlWord(%q) = %v, want %v", s, got, want)
		}
	}
}
