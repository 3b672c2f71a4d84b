package tui

import (
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/tandem-editor/tandem/store"
)

func TestHelp(t *testing.T) {
	s := newFakeStore(t)
	d := newDriver(t, s, "alice")
	d.key("?")
	d.golden("help")
	d.key("?")
	if d.app.showHelp {
		t.Fatal("? did not close the help")
	}
}

// TestHelp_Editor: in a field, ? is text and f1 opens the help; where nothing is typed
// (a read-only record), ? opens it too.
func TestHelp_Editor(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	d := newDriver(t, s, "alice")
	openProduct(t, d, 1, "enter")
	focusField(t, d, "name")
	d.typeText("?")
	if d.app.showHelp {
		t.Fatal("? in a text field opened the help")
	}
	if got := d.app.editor.fields[d.app.editor.focus].text(); got != "Product 1?" {
		t.Fatalf("name = %q after typing ?, want %q", got, "Product 1?")
	}
	if !strings.Contains(d.screen(), "f1 help") {
		t.Fatalf("the editor's footer does not show f1:\n%s", d.screen())
	}
	d.key("f1")
	if !d.app.showHelp || !strings.Contains(d.screen(), "tandem · keys") {
		t.Fatalf("f1 did not open the help:\n%s", d.screen())
	}
	d.key("f1")
	if d.app.showHelp {
		t.Fatal("f1 did not close the help")
	}

	if _, err := s.AcquireLease(actorCtx("bob"), store.LeaseRequest{Kind: store.KindProduct, RecordID: 1,
		Group: store.GroupEditor, TTL: 600e9}); err != nil {
		t.Fatal(err)
	}
	d.key("esc")
	d.key("y")
	d.waitFor("products")
	openProduct(t, d, 1, "enter")
	d.waitFor("read-only")
	d.key("?")
	if !d.app.showHelp {
		t.Fatalf("? in a read-only record did not open the help:\n%s", d.screen())
	}
}

// TestHelp_EveryKeyShown: every key of every screen's footer list, and every key of the
// KeyMap, is explained on the help screen, under its screen's title or "everywhere", at every
// size; where the keys do not fit they are reached by scrolling, never cut.
func TestHelp_EveryKeyShown(t *testing.T) {
	var full []string
	for _, size := range [][2]int{{80, 24}, {80, 15}, {60, 20}, {40, 12}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			d := newDriver(t, newFakeStore(t), "alice")
			d.apply(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
			d.key("?")
			doc, scrolled := mustReadHelp(t, d)
			switch {
			case size == [2]int{80, 24}:
				if scrolled {
					t.Fatalf("the help does not fit 80x24:\n%s", d.screen())
				}
				full = doc
			case !scrolled:
				t.Fatalf("the help at %dx%d shows no marker for what is below:\n%s", size[0], size[1], d.screen())
			case size[0] == 80 && !slices.Equal(doc, full):
				t.Errorf("scrolling at 80x15 shows other lines than 80x24:\n%s\n--- 80x24 ---\n%s",
					strings.Join(doc, "\n"), strings.Join(full, "\n"))
			}
			mustShowEveryKey(t, d.app.c.keys, doc)
		})
	}
}

// TestHelp_Scroll: on a short terminal the help scrolls with the KeyMap's moving keys, says
// what is above and below, and opens again at its top. Keys that scroll reach no screen.
func TestHelp_Scroll(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 3)
	d := newDriver(t, s, "alice")
	d.waitFor("Product 3")
	d.apply(tea.WindowSizeMsg{Width: 80, Height: 15})
	d.key("?")
	d.golden("help_15rows")
	from, to, n := mustMarker(t, d, "more below")
	window := to - from + 1
	if from != 1 || window != 15-3 {
		t.Fatalf("first page shows lines %d–%d, want 1–%d", from, to, 15-3)
	}
	steps := []struct {
		key, where string
		from       int
	}{
		{"j", "more above and below", 2},
		{"down", "more above and below", 3},
		{"k", "more above and below", 2},
		{"up", "more below", 1},
		{"k", "more below", 1}, // the top stays the top
		{"pgdown", "more above", n - window + 1},
		{"j", "more above", n - window + 1}, // the end stays the end
		{"pgup", "more below", 1},
		{"ctrl+d", "more above", n - window + 1},
		{"ctrl+u", "more below", 1},
	}
	for _, st := range steps {
		d.key(st.key)
		if got, _, _ := mustMarker(t, d, st.where); got != st.from {
			t.Fatalf("after %s the help starts at line %d, want %d:\n%s", st.key, got, st.from, d.screen())
		}
	}
	d.key("pgdown")
	d.golden("help_15rows_end")
	if d.app.list.cursor != 0 {
		t.Errorf("scrolling the help moved the list's cursor to %d", d.app.list.cursor)
	}
	d.key("esc")
	if d.app.showHelp {
		t.Fatal("esc did not close the help")
	}
	d.key("f1")
	if got, _, _ := mustMarker(t, d, "more below"); got != 1 {
		t.Fatalf("the help opened again at line %d, want its top", got)
	}
	d.apply(tea.WindowSizeMsg{Width: 80, Height: 24})
	if strings.Contains(d.screen(), "more below") {
		t.Fatalf("the help at 80x24 still has a marker:\n%s", d.screen())
	}
}

// helpMarkerRE reads the marker of a scrolling help: which lines of how many it shows.
var helpMarkerRE = regexp.MustCompile(`^(↓ more below|↑ more above|↑↓ more above and below) · (\d+)–(\d+) of (\d+)\b`)

// mustMarker returns the lines the help shows, checking that its marker says where.
func mustMarker(t *testing.T, d *driver, where string) (from, to, n int) {
	t.Helper()
	lines := strings.Split(d.screen(), "\n")
	m := helpMarkerRE.FindStringSubmatch(lines[len(lines)-2])
	if m == nil || !strings.HasSuffix(m[1], " "+where) {
		t.Fatalf("the help's marker does not say %q:\n%s", where, d.screen())
	}
	from, _ = strconv.Atoi(m[2])
	to, _ = strconv.Atoi(m[3])
	n, _ = strconv.Atoi(m[4])
	return from, to, n
}

// mustReadHelp returns every line of keys of the open help, paging down with pgdn while
// its marker says there is more, and whether it had to.
func mustReadHelp(t *testing.T, d *driver) ([]string, bool) {
	t.Helper()
	var doc []string
	var seen []bool
	for page := 0; ; page++ {
		lines := strings.Split(d.screen(), "\n")
		if !strings.Contains(lines[0], "tandem · keys") || !strings.Contains(lines[len(lines)-1], "close help") {
			t.Fatalf("not the help screen, or cut at the top or bottom:\n%s", d.screen())
		}
		body := lines[1 : len(lines)-1]
		m := helpMarkerRE.FindStringSubmatch(body[len(body)-1])
		if m == nil {
			if page > 0 {
				t.Fatalf("the marker went away before the end:\n%s", d.screen())
			}
			return body, false
		}
		from, _ := strconv.Atoi(m[2])
		to, _ := strconv.Atoi(m[3])
		n, _ := strconv.Atoi(m[4])
		shown := body[:len(body)-1]
		if len(shown) != to-from+1 || from < 1 || to > n {
			t.Fatalf("marker says lines %d–%d of %d, screen shows %d:\n%s", from, to, n, len(shown), d.screen())
		}
		if doc == nil {
			doc, seen = make([]string, n), make([]bool, n)
		}
		for i, l := range shown {
			if seen[from-1+i] && doc[from-1+i] != l {
				t.Fatalf("line %d reads %q on one page and %q on another", from+i, doc[from-1+i], l)
			}
			doc[from-1+i], seen[from-1+i] = l, true
		}
		if to == n {
			if i := slices.Index(seen, false); i >= 0 {
				t.Fatalf("paging skipped line %d of %d", i+1, n)
			}
			return doc, true
		}
		if page > n {
			t.Fatalf("pgdn does not reach the end of the help:\n%s", d.screen())
		}
		d.key("pgdown")
	}
}

// screenKeyLists are the screens' footer key lists, by the help group that explains them.
func screenKeyLists(k KeyMap) map[string][]key.Binding {
	return map[string][]key.Binding{
		helpList: k.ListKeys(), helpEditor: k.EditorKeys(), helpConflict: k.ConflictKeys(),
		helpMerge:   append(k.MergeKeys(), k.CopyDeleteKeys(true)...),
		helpHistory: k.HistoryKeys(), helpLocks: k.LocksKeys(), helpMove: k.MoveKeys(),
	}
}

// mustShowEveryKey checks doc, the lines of the help screen: every group's title is there
// once with each of its lines ("enter/e  edit / with lease") in the column below it; every
// key of every screen's list is explained by its screen's group or the everywhere group; and
// every key of every KeyMap binding is explained by some group.
func mustShowEveryKey(t *testing.T, k KeyMap, doc []string) {
	t.Helper()
	groups := map[string][]key.Binding{}
	for _, col := range k.helpGroups() {
		for _, g := range col {
			groups[g.title] = g.keys
		}
	}
	shown := helpColumnsShown(t, doc, slices.Collect(maps.Keys(groups)))
	for title, keys := range groups {
		for _, b := range keys {
			h := b.Help()
			line := regexp.MustCompile(`^` + regexp.QuoteMeta(h.Key) + ` +` + regexp.QuoteMeta(h.Desc) + `(\s|$)`)
			if !slices.ContainsFunc(shown[title], line.MatchString) {
				t.Errorf("help lacks %q under %q:\n%s", h.Key+" "+h.Desc, title, strings.Join(doc, "\n"))
			}
		}
	}
	explains := func(k string, in ...string) bool {
		for _, title := range in {
			if slices.ContainsFunc(groups[title], func(b key.Binding) bool { return slices.Contains(b.Keys(), k) }) {
				return true
			}
		}
		return false
	}
	for screen, keys := range screenKeyLists(k) {
		for _, b := range keys {
			for _, kk := range b.Keys() {
				if !explains(kk, screen, helpEverywhere) {
					t.Errorf("%s: key %s (%s) is not in the help's %q or %q", screen, kk, b.Help().Desc, screen, helpEverywhere)
				}
			}
		}
	}
	all := slices.Collect(maps.Keys(groups))
	v := reflect.ValueOf(k)
	for i := range v.NumField() {
		if v.Type().Field(i).Type != reflect.TypeFor[key.Binding]() {
			continue // KeyMap.custom
		}
		b := v.Field(i).Interface().(key.Binding)
		for _, kk := range b.Keys() {
			if !explains(kk, all...) {
				t.Errorf("KeyMap.%s: key %s is not on the help screen", v.Type().Field(i).Name, kk)
			}
		}
	}
}

// helpColumnsShown finds each title in doc and returns the cells of the column below it,
// from the title's column to the end of the line, up to the first blank cell.
func helpColumnsShown(t *testing.T, doc, titles []string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, title := range titles {
		found := 0
		for i, line := range doc {
			for at := 0; ; {
				j := strings.Index(line[at:], title)
				if j < 0 {
					break
				}
				j += at
				at = j + len(title)
				rest := line[at:]
				// A title stands alone in its column: "history/locks" holds no title.
				if (j > 0 && line[j-1] != ' ') || (rest != "" && !strings.HasPrefix(rest, "  ") && strings.TrimSpace(rest) != "") {
					continue
				}
				found++
				x := ansi.StringWidth(line[:j])
				for _, below := range doc[i+1:] {
					cell := ansi.Cut(below, x, ansi.StringWidth(below))
					if strings.TrimSpace(cell) == "" || strings.HasPrefix(cell, " ") {
						break
					}
					out[title] = append(out[title], cell)
				}
			}
		}
		if found != 1 {
			t.Errorf("help shows the title %q %d times, want once:\n%s", title, found, strings.Join(doc, "\n"))
		}
	}
	return out
}
