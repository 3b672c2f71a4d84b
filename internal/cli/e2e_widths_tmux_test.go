package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestE2E_ListWidths: the product list in real terminals of 60x15, 120x40 and 250x50. At
// 60 the version, writer and the short fields give way and the title keeps at least 24
// characters; the lock column names a long holder's name whole (without "since") and a
// free record says free; at 120 price, stock, availability, version and writer show and
// the lock says since when; at 250 the sku and the kind's other fields show too, and titles
// are not cut. The title line names the sort order at every width, also after s changes
// it. On a store of 100,000 products under TANDEM_LONG_TESTS=1 (seeding it takes minutes);
// the seeded 60 by default.
func TestE2E_ListWidths(t *testing.T) {
	waitsBeside(t)
	tm := newTmuxServer(t)
	dir := t.TempDir()
	dsn := filepath.Join(dir, "wide.db")
	madeStoreAt(t, dsn, "seed")
	total := "60"
	if os.Getenv("TANDEM_LONG_TESTS") != "" {
		var b strings.Builder
		b.WriteString("kind,sku,name,price,stock\n")
		for i := range 100000 - 60 {
			fmt.Fprintf(&b, "product,BLK-%06d,Bulk product %d,%d.50,%d\n", i, i, 10+i%90, i%50)
		}
		csv := filepath.Join(dir, "bulk.csv")
		if err := os.WriteFile(csv, []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		mustTandem(t, dsn, "import", csv, "--batch", "5000")
		total = "100,000"
	}
	const holder = "maximiliane-rosenthal" // with " since 15:04", wider than the lock column
	mustTandem(t, dsn, "lease", "acquire", "product", "2", "--ttl", "30m", "--user", holder)
	for _, sz := range [][2]int{{60, 15}, {120, 40}, {250, 50}} {
		name := fmt.Sprintf("w%d", sz[0])
		tm.run("new-session", "-d", "-x", fmt.Sprint(sz[0]), "-y", fmt.Sprint(sz[1]), "-s", name,
			fmt.Sprintf("exec env XDG_CACHE_HOME=%s XDG_CONFIG_HOME=%s TERM=xterm-256color %s --db %s --user erin",
				filepath.Join(dir, "cache"), filepath.Join(dir, "config"), binary, dsn))
	}
	header := func(scr string) string { return strings.Split(scr, "\n")[1] }
	// cells are the title and the lock cell of product id's row: the title from where the
	// header puts the name to its end (two spaces, or its "…"), the lock from the header's
	// lock on (every cell on these screens is one rune wide).
	cells := func(scr string, id int) (title, lock string) {
		h := header(scr)
		name, lk := strings.Index(h, "name"), strings.LastIndex(h, "lock")
		for _, l := range strings.Split(scr, "\n")[2:] {
			r := []rune(l)
			if len(r) <= lk || strings.TrimSpace(strings.TrimPrefix(string(r[:name]), "▸")) != fmt.Sprint(id) {
				continue
			}
			title = string(r[name:lk])
			if i := strings.Index(title, "  "); i >= 0 {
				title = title[:i]
			}
			if i := strings.Index(title, "… "); i >= 0 {
				title = title[:i+len("…")]
			}
			return strings.TrimSpace(title), strings.TrimSpace(string(r[lk:]))
		}
		t.Fatalf("no row of product %d on the screen:\n%s", id, scr)
		return "", ""
	}

	// 60x15.
	scr := tm.waitFor("w60", "1 of "+total+" · by id")
	h := header(scr)
	for _, gone := range []string{"price", "ver", "writer", "sku"} {
		if strings.Contains(h, gone) {
			t.Errorf("at 60 columns the header still shows %s: %q", gone, h)
		}
	}
	if w := strings.Index(h, "lock") - strings.Index(h, "name") - 1; w < 24 {
		t.Errorf("at 60 columns the title column is %d wide, want at least 24: %q", w, h)
	}
	if title, lock := cells(scr, 1); title != "Linde oak table lamp, oiled" || lock != "free" {
		t.Errorf("at 60 columns a 27-character title or the lock cell of a free record is cut: %q %q\n%s", title, lock, scr)
	}
	if title, lock := cells(scr, 2); lock != holder || !strings.HasPrefix(title, "Corvo stainless steel ch") {
		t.Errorf("at 60 columns the holder's name or the title's first 24 characters are cut: %q %q\n%s", title, lock, scr)
	}
	tm.keys("w60", "s")
	tm.waitFor("w60", "· by name")

	// 120x40.
	scr = tm.waitFor("w120", "1 of "+total+" · by id")
	h = header(scr)
	for _, want := range []string{"name", "price", "stock", "availability", "ver", "writer", "lock"} {
		if !strings.Contains(h, want) {
			t.Errorf("at 120 columns the header lacks %s: %q", want, h)
		}
	}
	if strings.Contains(h, "sku") {
		t.Errorf("at 120 columns the header shows sku: %q", h)
	}
	if _, lock := cells(scr, 2); !strings.HasPrefix(lock, holder+" since ") {
		t.Errorf("at 120 columns the lock cell does not say who holds it since when: %q\n%s", lock, scr)
	}

	// 250x50.
	scr = tm.waitFor("w250", "1 of "+total+" · by id")
	h = header(scr)
	for _, want := range []string{"price", "stock", "availability", "sku", "thumbnail", "checksum", "ver", "writer", "lock"} {
		if !strings.Contains(h, want) {
			t.Errorf("at 250 columns the header lacks %s: %q", want, h)
		}
	}
	if title, lock := cells(scr, 2); title != "Corvo stainless steel chef's knife, brushed" || !strings.Contains(scr, "LGT-1001") ||
		!strings.HasPrefix(lock, holder+" since ") {
		t.Errorf("at 250 columns a title is cut, the sku missing or the lock cell cut: %q %q\n%s", title, lock, scr)
	}
	tm.keys("w250", "s", "s")
	tm.waitFor("w250", "· by price")
}
