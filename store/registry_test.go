package store_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
)

// defaultYAML is the embedded registry's text, as a base for broken variants.
func defaultYAML(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("testdata/legacy_fields.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// lineOf returns the 1-based line number of the first line containing s.
func lineOf(t *testing.T, text, s string) int {
	t.Helper()
	for i, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) {
			return i + 1
		}
	}
	t.Fatalf("%q not in the text", s)
	return 0
}

func TestDefaultRegistry(t *testing.T) {
	r := store.DefaultRegistry()
	for _, tc := range []struct {
		kind  store.Kind
		names []string
	}{
		{store.KindProduct, []string{"sku", "name", "description", "categories", "price", "stock", "availability", "thumbnail", "search_index", "checksum", "last_sync_at"}},
		{store.KindDocument, []string{"parent_id", "title", "body", "tags", "word_count", "checksum"}},
	} {
		var got []string
		for _, f := range r.Fields(tc.kind) {
			got = append(got, f.Name)
		}
		if !slices.Equal(got, tc.names) {
			t.Errorf("%s fields = %v, want %v", tc.kind, got, tc.names)
		}
	}
	price, err := r.Field(store.KindProduct, "price")
	if err != nil || price.Type != store.TypeMoney || price.Owner != store.OwnerEditor || price.Group != store.GroupEditor {
		t.Errorf("price = %+v, %v", price, err)
	}
	thumb, _ := r.Field(store.KindProduct, "thumbnail")
	if thumb.Group != store.GroupSystem || thumb.Label != "thumbnail" {
		t.Errorf("thumbnail group %q label %q, want system and a default label", thumb.Group, thumb.Label)
	}
	if got, want := r.Groups(store.KindProduct), []string{"editor", "system"}; !slices.Equal(got, want) {
		t.Errorf("groups = %v, want %v", got, want)
	}
	_, err = r.Field(store.KindProduct, "colour")
	if store.ErrorCode(err) != store.EINVALID || !strings.Contains(err.Error(), "unknown field product.colour") || !strings.Contains(err.Error(), "sku") {
		t.Errorf("unknown field error = %v, want EINVALID naming the field and the known ones", err)
	}
}

func TestParseRegistry_Err(t *testing.T) {
	base := defaultYAML(t)
	for _, tc := range []struct {
		name     string
		old, new string // replace old with new in the default file
		line     string // the line the error must name (found in the result); "" for none
		want     string
	}{
		{"unknown kind", "document:", "invoice:", "invoice:", `unknown kind "invoice"`},
		{"unknown key", "{name: sku,", "{colour: red, name: sku,", "colour: red", `unknown key "colour"`},
		{"wrong type", "{name: stock,        type: int,", "{name: stock,        type: text,", "name: stock", "product.stock has type int"},
		{"bad owner", "{name: thumbnail,    type: string, owner: system,", "{name: thumbnail,    type: string, owner: boss,", "owner: boss", `owner "boss"`},
		{"bad rule", "{name: name,         type: string, owner: editor, rule: scalar,", "{name: name,         type: string, owner: editor, rule: fancy,", "rule: fancy", `rule "fancy"`},
		{"counter on text", "{name: description,  type: text,   owner: editor, rule: text,", "{name: description,  type: text,   owner: editor, rule: counter,", "rule: counter,", "rule counter needs an int or money field"},
		{"unknown field", "{name: checksum,   type: string, owner: system, rule: scalar, max_chars: 128}", "{name: checksum,   type: string, owner: system, rule: scalar, max_chars: 128}\n  - {name: colour, type: string, owner: editor, rule: scalar}", "name: colour", "unknown field document.colour"},
		{"listed twice", "  - {name: word_count", "  - {name: title, type: string, owner: editor, rule: scalar}\n  - {name: word_count", "", "document.title listed twice"},
		{"negative limit", "max_chars: 64}", "max_chars: -1}", "max_chars: -1", "limits cannot be negative"},
		{"enum without values", "values: [in_stock, backorder, discontinued]}", "values: []}", "values: []", "an enum needs values"},
		{"missing field", "  - {name: checksum,     type: string, owner: system, rule: scalar, max_chars: 128}\n", "", "", "product.checksum is missing"},
		{"not a list", "document:\n", "document: 3\nlater:\n", "document: 3", "want a list of fields"},
		{"syntax", "product:\n", "product: [\n", "", "schema test.yaml"},
		{"parent_id not readonly", "readonly: true, label: parent}", "label: parent}", "name: parent_id", `document.parent_id must be a ref with "readonly: true"`},
		{"parent_id readonly false", "readonly: true, label: parent}", "readonly: false, label: parent}", "name: parent_id", "a set could make a cycle"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := strings.Replace(base, tc.old, tc.new, 1)
			if text == base {
				t.Fatalf("replacement of %q did not apply", tc.old)
			}
			_, err := store.ParseRegistry("test.yaml", []byte(text))
			if store.ErrorCode(err) != store.EINVALID {
				t.Fatalf("error = %v, want %s", err, store.EINVALID)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
			if tc.line != "" {
				if want := fmt.Sprintf("test.yaml:%d:", lineOf(t, text, tc.line)); !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name the place %q", err, want)
				}
			}
		})
	}
	t.Run("missing kind", func(t *testing.T) {
		_, err := store.ParseRegistry("test.yaml", []byte(base[:strings.Index(base, "document:")]))
		if err == nil || !strings.Contains(err.Error(), `kind "document" is missing`) {
			t.Errorf("error = %v, want the missing kind named", err)
		}
	})
	t.Run("empty", func(t *testing.T) {
		if _, err := store.ParseRegistry("test.yaml", nil); store.ErrorCode(err) != store.EINVALID {
			t.Errorf("error = %v, want %s", err, store.EINVALID)
		}
	})
}

func TestLoadRegistry(t *testing.T) {
	t.Run("Default", func(t *testing.T) {
		r, err := store.LoadRegistry("")
		if err != nil || len(r.Fields(store.KindProduct)) == 0 {
			t.Fatalf("load default = %v, %v", r, err)
		}
	})
	t.Run("Override", func(t *testing.T) {
		// A file may move price into its own lease group and hand stock to the workers.
		text := strings.Replace(defaultYAML(t), "{name: price,        type: money,  owner: editor, rule: scalar}",
			"{name: price,        type: money,  owner: editor, rule: scalar, group: pricing}", 1)
		text = strings.Replace(text, "{name: stock,        type: int,    owner: shared,", "{name: stock,        type: int,    owner: system,", 1)
		path := filepath.Join(t.TempDir(), "fields.yaml")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := store.LoadRegistry(path)
		if err != nil {
			t.Fatalf("load: %v", err)
		}
		if got, want := r.Groups(store.KindProduct), []string{"editor", "pricing", "system"}; !slices.Equal(got, want) {
			t.Errorf("groups = %v, want %v", got, want)
		}
		u := store.Update{BaseVersion: 1, Set: store.Values{"price": int64(1), "name": "x"}}
		if got, want := r.UpdateGroups(store.KindProduct, u), []string{"editor", "pricing"}; !slices.Equal(got, want) {
			t.Errorf("update groups = %v, want %v", got, want)
		}
		err = r.CheckUpdate(store.KindProduct, store.RoleEditor, store.Update{Add: map[string]int64{"stock": 1}})
		var oe *store.OwnershipError
		if !errors.As(err, &oe) || oe.Owner != store.OwnerSystem {
			t.Errorf("editor adjusting a system-owned stock = %v, want an ownership error", err)
		}
	})
	t.Run("ErrParentIDWritable", func(t *testing.T) {
		// A --fields file that makes parent_id an ordinary field would let "set parent_id"
		// skip the cycle and depth checks of a move: it is refused, naming file and field.
		text := strings.Replace(defaultYAML(t), "readonly: true, label: parent}", "label: parent}", 1)
		path := filepath.Join(t.TempDir(), "loose.yaml")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := store.LoadRegistry(path)
		if store.ErrorCode(err) != store.EINVALID || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "document.parent_id") {
			t.Errorf("error = %v, want EINVALID naming %s and document.parent_id", err, path)
		}
	})
	t.Run("ErrMissingFile", func(t *testing.T) {
		_, err := store.LoadRegistry(filepath.Join(t.TempDir(), "nope.yaml"))
		if store.ErrorCode(err) != store.EINVALID || !strings.Contains(err.Error(), "nope.yaml") {
			t.Errorf("error = %v, want EINVALID naming the file", err)
		}
	})
}

func TestRegistry_CheckCreate(t *testing.T) {
	r := store.DefaultRegistry()
	got, err := r.CheckCreate(store.KindDocument, store.RoleEditor, store.Values{"title": "t"})
	if err != nil {
		t.Fatal(err)
	}
	want := store.Values{"parent_id": nil, "title": "t", "body": "", "tags": []string{}, "word_count": int64(0), "checksum": ""}
	for name, w := range want {
		if !store.Equal(got[name], w) {
			t.Errorf("%s = %#v, want %#v", name, got[name], w)
		}
	}
	if _, err := r.CheckCreate(store.KindDocument, store.RoleEditor, store.Values{"body": "no title"}); store.ErrorCode(err) != store.EINVALID {
		t.Errorf("create without the required title = %v, want %s", err, store.EINVALID)
	}
}

func TestParseKind(t *testing.T) {
	for in, want := range map[string]store.Kind{"product": store.KindProduct, "Products": store.KindProduct, "documents": store.KindDocument} {
		if got, err := store.DefaultRegistry().ParseKind(in); err != nil || got != want {
			t.Errorf("ParseKind(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := store.DefaultRegistry().ParseKind("invoice"); store.ErrorCode(err) != store.EINVALID {
		t.Errorf("ParseKind(invoice) error = %v, want %s", err, store.EINVALID)
	}
}
