package tui

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/charmbracelet/x/ansi"

	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/store"
)

// The list's columns come from the schema: the id, the kind's title field, then as many of
// its other short fields as fit beside a title of minTitleWidth cells, then the version,
// the writer and the lock. The sample's products and documents keep the columns they had
// before schemas were data (sampleColumns).

// listColumn is one column between the title and the version.
type listColumn struct {
	f     *store.Field
	head  string // the header: the field's label
	width int
	right bool // numbers align right
}

// The cells beside the title: the version ("v12" and a space), the writer (10 and a space)
// and the lock column's room (wider when a holder's name needs it).
const (
	verWidth    = 5
	writerWidth = 11
	lockWidth   = 22
)

// minTitleKeep is the characters of a title the version and writer columns give way for:
// at 60 columns the writer and then the version go before a title is cut below it. A cut
// title ends in "…", so its column is a cell wider (minTitleCells).
const (
	minTitleKeep  = 24
	minTitleCells = minTitleKeep + 1
)

// listLayout is how the list's lines are cut at a width: the short columns beside the
// title, the title's width, whether the version and the writer show, and whether the lock
// column names only the holder.
type listLayout struct {
	cols        []listColumn
	titleW      int
	ver, writer bool
	shortLock   bool
}

// layout cuts the list's lines for width, with lockW the widest lock cell to show whole
// and shortW the widest holder's name alone. The title keeps minTitleKeep characters by dropping
// first the writer, then the version, then the lock's "since 10:05": a holder's name is
// never cut. Short columns take only what is left beyond a title of minTitleWidth.
func (l *listModel) layout(width, lockW, shortW int) listLayout {
	lay := listLayout{ver: true, writer: true}
	rest := width - 2 - 7 - 1 - max(lockW, lockWidth) // the cursor mark, the id, the space after the title
	if rest < minTitleCells && shortW < max(lockW, lockWidth) {
		lay.shortLock = true
		rest = width - 2 - 7 - 1 - max(shortW, len("lock"))
	}
	if rest-verWidth-writerWidth < minTitleCells {
		lay.writer = false
		lay.ver = rest-verWidth >= minTitleCells
	}
	titleW := rest
	if lay.ver {
		titleW -= verWidth
	}
	if lay.writer {
		titleW -= writerWidth
	}
	lay.cols, lay.titleW = l.columns(width, max(titleW, 10))
	return lay
}

// minTitleWidth is the narrowest title a kind's list gives up a short field's column for.
const minTitleWidth = 16

// sampleColumns are the short columns of the sample's kinds, as the list drew them before
// schemas were data: a product's price, stock and availability from wideList on, nothing
// beside a document's title. ok is false for any other kind, or a kind of that name whose
// fields are not the sample's.
func sampleColumns(reg *store.Registry, kind store.Kind) (names []string, ok bool) {
	switch kind {
	case store.KindProduct:
		names = []string{"price", "stock", "availability"}
	case store.KindDocument:
		names = nil
	default:
		return nil, false
	}
	sample := sampleSchema()
	for _, n := range append(slices.Clone(names), sample.TitleField(kind)) {
		f, err := reg.Field(kind, n)
		sf, _ := sample.Field(kind, n)
		if err != nil || f.Type != sf.Type {
			return nil, false
		}
	}
	return names, reg.TitleField(kind) == sample.TitleField(kind) && reg.Tree(kind) == sample.Tree(kind)
}

// sampleSchema is the sample schema, parsed once: the list asks it on every frame.
var sampleSchema = sync.OnceValue(store.DefaultRegistry)

// shortField reports whether a field's value fits a list cell: one line, not a set.
func shortField(f *store.Field) bool {
	switch f.Type {
	case store.TypeString, store.TypeInt, store.TypeMoney, store.TypeEnum, store.TypeTime, store.TypeRef:
		return f.Name != store.ParentField
	}
	return false
}

// columnWidth is the cells a short field's column takes.
func columnWidth(f *store.Field) int {
	w := 0
	switch f.Type {
	case store.TypeInt:
		w = 7
	case store.TypeMoney:
		w = 10
	case store.TypeTime:
		w = len("2006-01-02 15:04")
	case store.TypeRef:
		w = 14 // the title of the record it names (refTitles)
	case store.TypeEnum:
		for _, v := range f.Values {
			w = max(w, ansi.StringWidth(v))
		}
		w = min(w, 14)
	default:
		w = 14
		if f.MaxChars > 0 {
			w = min(max(f.MaxChars, 4), w)
		}
	}
	return max(w, ansi.StringWidth(f.Label))
}

// columnCandidates are the fields of kind the list may show beside the title, in schema
// order (what fits is decided by the width).
func columnCandidates(reg *store.Registry, kind store.Kind) []*store.Field {
	if names, ok := sampleColumns(reg, kind); ok {
		out := make([]*store.Field, 0, len(names))
		for _, n := range names {
			f, _ := reg.Field(kind, n)
			out = append(out, f)
		}
		return out
	}
	var out []*store.Field
	for _, f := range reg.Fields(kind) {
		if f.Name != reg.TitleField(kind) && shortField(f) {
			out = append(out, f)
		}
	}
	return out
}

// columns returns the short columns the list shows at width beside a title of titleW
// cells, and the title's width left.
func (l *listModel) columns(width, titleW int) ([]listColumn, int) {
	reg := l.c.reg
	var cols []listColumn
	if _, sample := sampleColumns(reg, l.kind); sample {
		// All three or none, from wideList on, as before schemas.
		if width < wideList {
			return nil, titleW
		}
		for _, f := range columnCandidates(reg, l.kind) {
			w := map[string]int{"price": 9, "stock": 6, "availability": 12}[f.Name]
			cols = append(cols, listColumn{f: f, head: f.Name, width: w, right: f.Name != "availability"})
			titleW -= w + 1
		}
		return l.moreColumns(cols, titleW)
	}
	for _, f := range columnCandidates(reg, l.kind) {
		w := columnWidth(f)
		if titleW-(w+1) < minTitleWidth {
			break
		}
		cols = append(cols, listColumn{f: f, head: f.Label, width: w,
			right: f.Type == store.TypeInt || f.Type == store.TypeMoney || f.Type == store.TypeRef})
		titleW -= w + 1
	}
	return cols, titleW
}

// wideTitle is the title a wide terminal keeps before it shows more of a record's fields.
const wideTitle = 48

// moreColumns adds, on a terminal wide enough, the kind's other short fields (in schema
// order) to the sample's columns, as long as the title keeps wideTitle cells.
func (l *listModel) moreColumns(cols []listColumn, titleW int) ([]listColumn, int) {
	reg := l.c.reg
	for _, f := range reg.Fields(l.kind) {
		if f.Name == reg.TitleField(l.kind) || !shortField(f) || slices.ContainsFunc(cols, func(c listColumn) bool { return c.f == f }) {
			continue
		}
		w := columnWidth(f)
		if titleW-(w+1) < wideTitle {
			break
		}
		cols = append(cols, listColumn{f: f, head: f.Label, width: w,
			right: f.Type == store.TypeInt || f.Type == store.TypeMoney || f.Type == store.TypeRef})
		titleW -= w + 1
	}
	return cols, titleW
}

// titleHeader is the header of the title column: the title field's label.
func (l *listModel) titleHeader() string {
	name := l.c.reg.TitleField(l.kind)
	if name == "" {
		return ""
	}
	if _, sample := sampleColumns(l.c.reg, l.kind); sample {
		return l.sortedHeader(name, name)
	}
	return l.sortedHeader(name, fieldLabel(l.c.reg, l.kind, name))
}

// header is the list's header line up to the version: id, title and cols, at title width
// titleW.
func (l *listModel) header(cols []listColumn, titleW int) string {
	if _, sample := sampleColumns(l.c.reg, l.kind); sample {
		// As drawn before schemas, byte-padded (the golden files hold it so).
		hdr := fmt.Sprintf("  %6s %-*s ", "id", titleW, l.titleHeader())
		for _, col := range cols {
			if col.right {
				hdr += fmt.Sprintf("%*s ", col.width, l.sortedHeader(col.f.Name, col.head))
			} else {
				hdr += fmt.Sprintf("%-*s ", col.width, l.sortedHeader(col.f.Name, col.head))
			}
		}
		return hdr
	}
	var b strings.Builder
	b.WriteString(fmt.Sprintf("  %6s ", "id"))
	b.WriteString(padRight(ansi.Truncate(safe.Line(l.titleHeader()), titleW, "…"), titleW) + " ")
	for _, col := range cols {
		b.WriteString(alignCell(ansi.Truncate(safe.Line(l.sortedHeader(col.f.Name, col.head)), col.width, "…"), col.width, col.right))
		b.WriteByte(' ')
	}
	return b.String()
}

// columnCells are r's cells of cols, each followed by a space: a reference by the title
// of the record it names when titles has it; sample: byte-padded, as the product list drew
// them before schemas.
func columnCells(cols []listColumn, r *store.Record, titles map[refKey]string, sample bool) string {
	var b strings.Builder
	for _, col := range cols {
		s := col.f.Format(r.Fields[col.f.Name])
		if id, ok := r.Fields[col.f.Name].(int64); ok && col.f.Type == store.TypeRef {
			if t := titles[refKey{col.f.To, id}]; t != "" {
				s = t
			}
		}
		s = ansi.Truncate(safe.Line(s), col.width, "…")
		switch {
		case sample && col.right:
			s = fmt.Sprintf("%*s", col.width, s)
		case sample:
			s = fmt.Sprintf("%-*s", col.width, s)
		default:
			s = alignCell(s, col.width, col.right)
		}
		b.WriteString(s)
		b.WriteByte(' ')
	}
	return b.String()
}

// refTitles reads the titles of the records that recs' reference columns name, one query
// per kind they point to: what those columns show instead of bare ids. A kind that cannot
// be read leaves its ids shown. It runs inside the list's load commands.
func refTitles(c *common, kind store.Kind, recs []*store.Record) map[refKey]string {
	ids := map[store.Kind][]int64{}
	out := map[refKey]string{}
	reg := c.st.Registry() // not c.reg: the app swaps that in Update when the schema changes
	for _, f := range columnCandidates(reg, kind) {
		if f.Type != store.TypeRef {
			continue
		}
		for _, r := range recs {
			id, ok := r.Fields[f.Name].(int64)
			if k := (refKey{f.To, id}); ok {
				if _, seen := out[k]; !seen {
					out[k] = ""
					ids[f.To] = append(ids[f.To], id)
				}
			}
		}
	}
	for to, list := range ids {
		rs, err := c.st.FindRecords(c.ctx, store.Filter{Kind: to, IDs: list})
		if err != nil {
			continue
		}
		for _, r := range rs {
			out[refKey{to, r.ID}] = reg.TitleOf(r)
		}
	}
	return out
}

// alignCell pads s to w cells, on the left for a right-aligned cell.
func alignCell(s string, w int, right bool) string {
	if right {
		if n := ansi.StringWidth(s); n < w {
			return strings.Repeat(" ", w-n) + s
		}
		return s
	}
	return padRight(s, w)
}

// schemaKeys returns keys with the words of the keys whose meaning depends on the schema
// said in its terms: tab goes through its tabs ("suppliers/parts/areas"; "next kind" when
// the names are long), ctrl+o also picks a reference's record where a kind has one. The
// sample schema keeps the key map's words.
func schemaKeys(keys KeyMap, reg *store.Registry) KeyMap {
	names := make([]string, 0, len(reg.Kinds()))
	refs := false
	for _, k := range reg.Kinds() {
		names = append(names, safe.Line(tabName(reg, k)))
		for _, f := range reg.Fields(k) {
			refs = refs || (f.Type == store.TypeRef && f.Name != store.ParentField && !f.ReadOnly)
		}
	}
	tabs := strings.Join(names, "/")
	switch {
	case len(names) < 2:
		tabs = "(one kind)"
	case ansi.StringWidth(tabs) > 24:
		tabs = "next kind"
	}
	keys.SwitchKind.SetHelp(keys.SwitchKind.Help().Key, tabs)
	if refs {
		keys.MoveDoc.SetHelp(keys.MoveDoc.Help().Key, "move/pick ref")
	}
	return keys
}

// tabName is how the list's tab names a kind: its table ("products").
func tabName(reg *store.Registry, kind store.Kind) string {
	if d := reg.Def(kind); d != nil {
		return d.Table
	}
	return fmt.Sprint(kind)
}
