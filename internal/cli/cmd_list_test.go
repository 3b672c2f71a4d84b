package cli

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestCLI_ListSearchUnicode: "tandem list --search" finds the same records on SQLite and on
// PostgreSQL for non-ASCII text, whatever case it was typed in (issue 11: "--search émile"
// found a record on PostgreSQL and nothing on SQLite), also after a save changes a name.
func TestCLI_ListSearchUnicode(t *testing.T) {
	besideOthers(t)
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			for _, p := range [][2]string{{"E-1", "Émile Zola"}, {"E-2", "EMILE"}, {"S-1", "Straße"}, {"S-2", "STRASSE"}, {"C-1", "Ёлка"}} {
				mustCreate(t, dsn, "product", "sku="+p[0], "name="+p[1])
			}
			search := func(q string) []string { return searchSKUs(t, dsn, q) }
			for q, want := range map[string][]string{
				"émile":   {"E-1"},
				"ÉMILE":   {"E-1"},
				"emile":   {"E-2"},
				"straße":  {"S-1", "S-2"},
				"STRASSE": {"S-1", "S-2"},
				"ёлка":    {"C-1"},
			} {
				if got := search(q); !slices.Equal(got, want) {
					t.Errorf("list --search %q = %q, want %q", q, got, want)
				}
			}
			mustTandem(t, dsn, "set", "product", "2", "name=Émile", "--expect-version", "1")
			if got, want := search("émile"), []string{"E-1", "E-2"}; !slices.Equal(got, want) {
				t.Errorf("after the rename: list --search émile = %q, want %q", got, want)
			}
		})
	}
}

// TestCLI_ListSearchText: "tandem list --search" finds words inside descriptions and
// categories (issue 13), on both stores alike, through each store's text index, and a save of
// the description is found by its new words.
func TestCLI_ListSearchText(t *testing.T) {
	besideOthers(t)
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			mustCreate(t, dsn, "product", "sku=D-1", "name=Stool", "description=Oak.\nΟ ΣΊΣΥΦΟΣ κυλά την πέτρα.\n")
			mustCreate(t, dsn, "product", "sku=D-2", "name=Table", "categories=Küche,Garten")
			mustCreate(t, dsn, "product", "sku=D-3", "name=Lamp", "description=Brass, made in İstanbul.")
			search := func(q string) []string { return searchSKUs(t, dsn, q) }
			for q, want := range map[string][]string{
				"σίσυφος κυλά": {"D-1"},
				"KÜCHE":        {"D-2"},
				"istanbul":     {"D-3"},
				"a":            {"D-1", "D-2", "D-3"}, // shorter than a trigram: the scan
				"nowhere":      {},
			} {
				if got := search(q); !slices.Equal(got, want) {
					t.Errorf("list --search %q = %q, want %q", q, got, want)
				}
			}
			mustTandem(t, dsn, "set", "product", "1", "description=Pine.", "--expect-version", "1")
			if got := search("σίσυφος"); len(got) != 0 {
				t.Errorf("after the save: list --search σίσυφος = %q, want nothing", got)
			}
			if got, want := search("PINE"), []string{"D-1"}; !slices.Equal(got, want) {
				t.Errorf("after the save: list --search PINE = %q, want %q", got, want)
			}
		})
	}
}

// searchSKUs runs "tandem list products --search q" and returns the skus it found, sorted.
func searchSKUs(t *testing.T, dsn, q string) []string {
	t.Helper()
	var list []record
	if err := json.Unmarshal([]byte(mustTandem(t, dsn, "list", "products", "--json", "--search", q)), &list); err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, r := range list {
		out = append(out, fmt.Sprint(r.Fields["sku"]))
	}
	slices.Sort(out)
	return out
}

// TestCLI_SearchRefusesBadText: a --search that is not valid UTF-8 or holds a control
// character is refused (exit 2, naming the flag) by list and export, instead of being folded
// into U+FFFD and finding a record that holds one.
func TestCLI_SearchRefusesBadText(t *testing.T) {
	besideOthers(t)
	dsn := newSQLiteStore(t)
	mustCreate(t, dsn, "product", "sku=R-1", "name=a\uFFFDb")
	for _, q := range []string{"\xff", "a\x1b[2Jb", "x\ty"} {
		for _, cmd := range [][]string{{"list", "products"}, {"export", "products"}} {
			r := tandem(t, dsn, append(cmd, "--search", q)...)
			if r.code != 2 || !strings.Contains(r.stderr, "--search") || strings.Contains(r.stdout, "R-1") {
				t.Errorf("%s --search %q: exit %d, stdout %q, stderr %q; want exit 2 naming --search", cmd[0], q, r.code, r.stdout, r.stderr)
			}
		}
	}
}
