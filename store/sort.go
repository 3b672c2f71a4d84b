package store

import (
	"cmp"
	"fmt"
)

// SortFields returns the fields of kind a Filter may sort by, in display order: its title,
// its unique fields and those marked sort. Every SQL store keeps an index on (field, id) for
// each (a unique field's on its key column), so a sorted page is read from the index, not
// by sorting the table.
func (r *Registry) SortFields(kind Kind) []*Field {
	var out []*Field
	for _, f := range r.kinds[kind] {
		if f.Sort || f.Unique || f.Name == r.TitleField(kind) {
			out = append(out, f)
		}
	}
	return out
}

// CheckFilter validates f's search and ordering: EINVALID for a search of a kind with no
// searched field (it could only ever find nothing), a Sort that is not one of SortFields, or
// an AfterValue of the wrong type. Stores call it before building their query, so a column
// name in ORDER BY always comes from this list.
func (r *Registry) CheckFilter(f Filter) error {
	if f.Search != "" && len(r.SearchFields(f.Kind)) == 0 && r.Has(f.Kind) {
		return Errorf(EINVALID, "a search of %s records finds nothing: none of their fields is searched (search: true in the schema)", f.Kind)
	}
	if f.Sort == "" {
		return nil
	}
	for _, sf := range r.SortFields(f.Kind) {
		if sf.Name != f.Sort {
			continue
		}
		switch f.AfterValue.(type) {
		case nil:
		case string:
			if sf.Type == TypeInt || sf.Type == TypeMoney {
				return Errorf(EINVALID, "sort by %s: a text after-value for a number field", f.Sort)
			}
		case int64:
			if sf.Type != TypeInt && sf.Type != TypeMoney {
				return Errorf(EINVALID, "sort by %s: a number after-value for a text field", f.Sort)
			}
		default:
			return Errorf(EINVALID, "sort by %s: after-value of type %T", f.Sort, f.AfterValue)
		}
		return nil
	}
	var names []string
	for _, sf := range r.SortFields(f.Kind) {
		names = append(names, sf.Name)
	}
	return Errorf(EINVALID, "cannot sort %s records by %s: sortable are %v", f.Kind, Quote(f.Sort), names)
}

// CompareSort orders two records as a listing sorted by f.Sort (and f.Desc) orders them:
// by the field's value, strings byte by byte, then by id. In-memory stores sort with it.
func CompareSort(f Filter, a, b *Record) int {
	c := 0
	if f.Sort != "" {
		c = compareValue(a.Fields[f.Sort], b.Fields[f.Sort])
	}
	if c == 0 {
		c = cmp.Compare(a.ID, b.ID)
	}
	if f.Desc && f.Sort != "" {
		return -c
	}
	return c
}

// AfterSortKey reports whether r comes after the keyset position f names (AfterValue and
// AfterID under f.Sort), in the order CompareSort gives.
func AfterSortKey(f Filter, r *Record) bool {
	switch {
	case f.Sort == "":
		return r.ID > f.AfterID
	case f.AfterValue == nil:
		return true
	}
	pos := &Record{ID: f.AfterID, Fields: Values{f.Sort: f.AfterValue}}
	return CompareSort(f, r, pos) > 0
}

func compareValue(a, b any) int {
	switch x := a.(type) {
	case int64:
		y, _ := b.(int64)
		return cmp.Compare(x, y)
	case string:
		y, _ := b.(string)
		return cmp.Compare(x, y)
	}
	return cmp.Compare(fmt.Sprint(a), fmt.Sprint(b))
}
