package store

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// Search is decided here, once, for every store: which fields a search looks in (the fields
// the registry marks `search: true`), and how their text and the query are folded
// (SearchFold). A record matches when the folded query is a substring of the folded value of
// one of its searched fields (FoldValue: a set's items are folded one per line).
//
// PostgreSQL and SQLite cannot run Go's folding (their lower() and ILIKE know other Unicode
// tables, or none: SQLite's lower() is ASCII only), so each store keeps, per searched field,
// the folded value (named by FoldColumn: name_fold) and matches the folded query against
// it: PostgreSQL in a column of the record table, copied by a trigger into the field's
// search table; SQLite in the field's side table only (migration search_side_tables), since
// SQLite rewrites a whole row on every UPDATE and a title edit would rewrite a body's fold.
// One fold per field, not one per record, because a save names only the fields it changes
// (SavePlan.Folds): a combined fold would need the current values of the fields it does
// not name.
//
// The match is a substring test, found through each database's full-text index over the
// folded values (migration search_text): SQLite an FTS5 table per field with the trigram
// tokenizer, PostgreSQL a search table per field with a pg_trgm GIN index used by LIKE (the
// query's wildcards escaped), both kept current by triggers. A trigram index cannot
// answer a query shorter than a trigram (IndexedQuery): such a query, one or two
// characters, is the same substring test on every folded value, a scan, like the in-memory
// store's.
//
// Which fields have such a column is schema, like the columns themselves (foldedFields): a
// registry file may turn search off for one of them, but cannot search a field that has
// none. Every store writes every folded column on every write of its field, whatever the
// registry says, so that a store opened later with another registry finds the values
// current.

// foldMigrations lists, per migration that adds folded columns (by the end of its file
// name, so renumbering keeps them attached), the fields whose columns it adds, per kind. A
// field added here needs a migration that adds its column on both stores (on SQLite, since
// search_side_tables, its side table and index instead); the stores fill it after the
// script (FoldedFieldsAddedBy) and index it.
var foldMigrations = []struct {
	suffix string
	fields map[Kind][]string
}{
	{"_search_fold.sql", map[Kind][]string{KindProduct: {"sku", "name"}, KindDocument: {"title"}}},
	{"_search_text.sql", map[Kind][]string{KindProduct: {"description", "categories"}, KindDocument: {"body", "tags"}}},
}

// foldedFields lists, per kind, every field that has a folded column, in migration order.
var foldedFields = func() map[Kind][]string {
	out := map[Kind][]string{}
	for _, m := range foldMigrations {
		for kind, fields := range m.fields {
			out[kind] = append(out[kind], fields...)
		}
	}
	return out
}()

// TrigramSize is the length, in characters of the folded query, from which a store's
// trigram index can answer a search (IndexedQuery).
const TrigramSize = 3

// FoldColumn returns the name of the folded value of field (SearchFold of its value): the
// column that holds it on PostgreSQL, the key of Folds and SavePlan.Folds.
func FoldColumn(field string) string { return field + foldSuffix }

// foldSuffix ends the name of a folded column (FoldColumn).
const foldSuffix = "_fold"

// IsFoldColumn reports whether col is FoldColumn(field), without building that name: a
// load asks it for every column of every record.
func IsFoldColumn(col, field string) bool {
	return len(col) == len(field)+len(foldSuffix) && col[:len(field)] == field && col[len(field):] == foldSuffix
}

// FoldedFields returns the fields of kind that have a folded column, in a fixed order: for
// the sample kinds, those the migrations gave one (whatever a schema says of their search
// flag, so a fold stays current when search is turned off and on again), then every other
// searched field in display order. The slice must not be modified.
func (r *Registry) FoldedFields(kind Kind) []string {
	if fs, ok := r.folded[kind]; ok {
		return fs
	}
	return nil
}

// foldedOf computes FoldedFields for a kind being added to r.
func (r *Registry) foldedOf(kind Kind) []string {
	var out []string
	for _, name := range foldedFields[kind] {
		if _, ok := r.index[kind][name]; ok {
			out = append(out, name)
		}
	}
	for _, f := range r.kinds[kind] {
		if f.Search && !slices.Contains(out, f.Name) {
			out = append(out, f.Name)
		}
	}
	return out
}

// FoldedFieldsAddedBy returns the fields of kind whose folded columns the migration named
// migration (its file name) adds, or nil when it adds none: what the store fills for the
// records that exist right after the migration's script. The slice must not be modified.
func FoldedFieldsAddedBy(migration string, kind Kind) []string {
	for _, m := range foldMigrations {
		if strings.HasSuffix(migration, m.suffix) {
			return m.fields[kind]
		}
	}
	return nil
}

// AddsFoldedColumns reports whether the migration named migration adds folded columns.
func AddsFoldedColumns(migration string) bool {
	for _, m := range foldMigrations {
		if strings.HasSuffix(migration, m.suffix) {
			return true
		}
	}
	return false
}

// SearchFields returns the fields of kind a search looks in, in display order.
func (r *Registry) SearchFields(kind Kind) []*Field {
	var out []*Field
	for _, f := range r.kinds[kind] {
		if f.Search {
			out = append(out, f)
		}
	}
	return out
}

// IndexedQuery reports whether the folded query q (SearchFold) is long enough for a trigram
// index to answer (TrigramSize characters or more). A shorter one is matched by a scan.
func IndexedQuery(q string) bool { return utf8.RuneCountInString(q) >= TrigramSize }

// Folds returns the folded columns a write of vals must set, with their values: one for each
// field in vals that has a folded column (FoldColumn). Stores call it with a create's full
// values and with a save's SavePlan.Set.
func (r *Registry) Folds(kind Kind, vals Values) map[string]string {
	var out map[string]string
	for _, name := range r.FoldedFields(kind) {
		v, ok := vals[name]
		if !ok {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[FoldColumn(name)] = FoldValue(v)
	}
	return out
}

// FoldValue returns what a field's folded column holds for the value v: SearchFold of a
// string, of a set's items one per line (so a query without a line break never matches
// across two items), and "" for anything else (nil, a number).
func FoldValue(v any) string {
	switch v := v.(type) {
	case string:
		return SearchFold(v)
	case []string:
		return SearchFold(strings.Join(v, "\n"))
	}
	return ""
}

// foldCaser is shared: a Fold caser is stateless and safe for concurrent use.
var foldCaser = cases.Fold()

// SearchFold returns the form that searched text and a search query are compared in, so that
// a search finds a record whatever case and Unicode form its text was typed in:
//
//   - format characters (zero-width space and joiners, word joiner, BOM, soft hyphen, bidi
//     marks) are removed, as in a sku key (SKUKey): they look like nothing, so "ham<ZWSP>mer"
//     is found by "hammer";
//   - NFKC normalisation, so that a decomposed "é" (e + U+0301) is the composed one, "ﬁ" is
//     "fi", full-width "ＡＢＣ" is "ABC", and a non-breaking space is a space (unlike in a
//     sku key, which drops it: in text it separates words, and a searcher types a space);
//   - full Unicode case folding (not lower-casing), then NFKC again, because folding can
//     leave text unnormalised: "ß", "SS" and "ẞ" are all "ss", final "ς" and "Σ" are "σ",
//     "Ё" is "ё";
//   - "i" followed by a combining dot above is "i": folding makes the Turkish capital "İ"
//     "i̇" (i + U+0307), which no one types when searching; so "istanbul" finds "İstanbul".
//     (Without a locale, folding cannot know that a Turkish "I" is "ı"; it folds to "i".)
//
// Accents stay: "emile" does not find "Émile". White space is kept as it is (not trimmed),
// since the query is a substring.
func SearchFold(s string) string {
	if l, ok := asciiLower(s); ok {
		// Text of ASCII alone (most skus, names and categories) has no format character,
		// is its own NFKC form and folds to its lower case: the rest is the same function
		// at a tenth of the cost, which a clone of 100,000 products pays four times a row.
		return l
	}
	return searchFoldUnicode(s)
}

// searchFoldUnicode is SearchFold through Unicode's tables, for text of any characters.
func searchFoldUnicode(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Cf, r) {
			return -1
		}
		return r
	}, s)
	s = norm.NFKC.String(s)
	s = foldCaser.String(s)
	s = norm.NFKC.String(s)
	if strings.Contains(s, "i\u0307") {
		// Again NFKC: a mark after the dropped dot may now compose with the "i" ("í").
		s = norm.NFKC.String(strings.ReplaceAll(s, "i\u0307", "i"))
	}
	return s
}

// asciiLower returns s with A to Z in lower case, and whether s is ASCII alone; for
// anything else it returns "", false. s itself is returned when it has no upper case.
func asciiLower(s string) (string, bool) {
	upper := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			return "", false
		}
		upper = upper || 'A' <= c && c <= 'Z'
	}
	if !upper {
		return s, true
	}
	b := make([]byte, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b[i] = c
	}
	return string(b), true
}

// MatchesSearch reports whether rec matches query in one of kind's searched fields: the store
// without SQL (the in-memory one) calls it, so that it finds exactly what the databases find
// in their folded columns.
func (r *Registry) MatchesSearch(rec *Record, query string) bool {
	q := SearchFold(query)
	for _, f := range r.SearchFields(rec.Kind) {
		if strings.Contains(FoldValue(rec.Fields[f.Name]), q) {
			return true
		}
	}
	return false
}
