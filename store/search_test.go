package store

import (
	"slices"
	"strings"
	"testing"
)

func TestSearchFold(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Émile", "émile"},
		{"E\u0301MILE", "émile"}, // decomposed: NFKC composes it
		{"Straße", "strasse"},
		{"STRAẞE", "strasse"},
		{"İstanbul", "istanbul"},          // the dot of a folded İ is dropped
		{"i\u0307\u0301", "í"},            // and a mark after it composes with the i
		{"ΣΊΣΥΦΟΣ", "σίσυφοσ"},            // capital and final sigma are both σ
		{"Σίσυφος", "σίσυφοσ"},            //
		{"ЁЛКА", "ёлка"},                  //
		{"Ham\u200bmer\ufeff", "hammer"},  // format characters go
		{"Café\u00a0Royal", "café royal"}, // a non-breaking space is a space
		{"ＡＢＣ", "abc"},                    // width
		{"ﬁne", "fine"},                   // ligature
		{" 50% off_sale ", " 50% off_sale "},
	} {
		if got := SearchFold(tc.in); got != tc.want {
			t.Errorf("SearchFold(%+q) = %+q, want %+q", tc.in, got, tc.want)
		}
	}
}

func TestRegistry_Search(t *testing.T) {
	def := DefaultRegistry()
	names := func(fs []*Field) string {
		var out []string
		for _, f := range fs {
			out = append(out, f.Name)
		}
		return strings.Join(out, ",")
	}
	if got := names(def.SearchFields(KindProduct)); got != "sku,name,description,categories" {
		t.Errorf("product search fields = %s, want sku,name,description,categories", got)
	}
	if got := names(def.SearchFields(KindDocument)); got != "title,body,tags" {
		t.Errorf("document search fields = %s, want title,body,tags", got)
	}

	// A registry file may turn search off, and one without the key keeps the default; a field
	// without a folded column cannot be searched.
	yaml := func(name, thumbnail string) string {
		var b strings.Builder
		b.WriteString("product:\n")
		for _, f := range def.Fields(KindProduct) {
			line := "  - {name: " + f.Name + ", type: " + string(f.Type) + ", owner: " + string(f.Owner) + ", rule: " + string(f.Rule)
			if f.Type == TypeEnum {
				line += ", values: [" + strings.Join(f.Values, ", ") + "]"
			}
			switch f.Name {
			case "name":
				line += name
			case "thumbnail":
				line += thumbnail
			}
			b.WriteString(line + "}\n")
		}
		b.WriteString("document:\n")
		for _, f := range def.Fields(KindDocument) {
			line := "  - {name: " + f.Name + ", type: " + string(f.Type) + ", owner: " + string(f.Owner) + ", rule: " + string(f.Rule)
			if f.ReadOnly {
				line += ", readonly: true"
			}
			b.WriteString(line + "}\n")
		}
		return b.String()
	}
	r, err := ParseRegistry("t.yaml", []byte(yaml(", search: false", "")))
	if err != nil {
		t.Fatal(err)
	}
	if got := names(r.SearchFields(KindProduct)); got != "sku,description,categories" {
		t.Errorf("with name off: product search fields = %s, want sku,description,categories", got)
	}
	if got := names(r.SearchFields(KindDocument)); got != "title,body,tags" {
		t.Errorf("without the key: document search fields = %s, want title,body,tags", got)
	}
	_, err = ParseRegistry("t.yaml", []byte(yaml("", ", search: true")))
	if ErrorCode(err) != EINVALID || !strings.Contains(err.Error(), "product.thumbnail: search needs a folded column") {
		t.Errorf("search on thumbnail = %v, want EINVALID naming product.thumbnail", err)
	}
}

func TestPlanUpdate_Folds(t *testing.T) {
	r := DefaultRegistry()
	cur := &Record{Kind: KindProduct, Version: 3, Fields: Values{"sku": "A-1", "name": "Straße", "stock": int64(1)}}
	p, err := r.PlanUpdate(cur, Update{BaseVersion: 3, Set: Values{"name": "STRAẞE", "sku": "A-1"}, Add: map[string]int64{"stock": 1}})
	if err != nil {
		t.Fatal(err)
	}
	// The sku is set to the value it has, so it is not written, nor is its folded column.
	if len(p.Folds) != 1 || p.Folds["name_fold"] != "strasse" {
		t.Errorf("folds = %v, want only name_fold = strasse", p.Folds)
	}
	p, err = r.PlanUpdate(cur, Update{Add: map[string]int64{"stock": 1}})
	if err != nil || p.Folds != nil {
		t.Errorf("relative save: folds = %v, %v; want none", p.Folds, err)
	}
}

func TestFoldValue(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want string
	}{
		{"STRAẞE", "strasse"},
		{[]string{"Küche", "GARTEN"}, "küche\ngarten"}, // one item a line
		{nil, ""},
		{int64(3), ""},
	} {
		if got := FoldValue(tc.v); got != tc.want {
			t.Errorf("FoldValue(%#v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

func TestFoldedFieldsAddedBy(t *testing.T) {
	// Every folded field is added by exactly one migration, so each is filled once.
	reg := DefaultRegistry()
	for _, kind := range reg.Kinds() {
		var all []string
		for _, m := range []string{"0005_search_fold.sql", "0008_search_text.sql"} {
			all = append(all, FoldedFieldsAddedBy(m, kind)...)
		}
		if !slices.Equal(all, reg.FoldedFields(kind)) {
			t.Errorf("%s: migrations add %v, folded fields are %v", kind, all, reg.FoldedFields(kind))
		}
	}
	if FoldedFieldsAddedBy("0003_sku_key.sql", KindProduct) != nil || AddsFoldedColumns("0003_sku_key.sql") {
		t.Error("sku_key adds no folded columns")
	}
	if !IndexedQuery("abc") || IndexedQuery("ab") || !IndexedQuery("αβγ") || IndexedQuery("ßß") {
		t.Error("IndexedQuery counts characters, from TrigramSize")
	}
}

// TestIsFoldColumn checks IsFoldColumn against the name FoldColumn builds.
func TestIsFoldColumn(t *testing.T) {
	names := []string{"", "name", "name_fold", "sku", "n", "_fold", "description"}
	for _, col := range append(names, "name_fold_fold", "sku_fold", "_fold_fold", "name_folx", "nam_fold") {
		for _, field := range names {
			if got, want := IsFoldColumn(col, field), col == FoldColumn(field); got != want {
				t.Errorf("IsFoldColumn(%q, %q) = %v, want %v", col, field, got, want)
			}
		}
	}
}
