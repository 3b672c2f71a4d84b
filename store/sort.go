package store

import (
	"cmp"
	"fmt"
)

// sortFields are the fields a listing may be ordered by: those with an index on (field, id)
// in every SQL store (migration sort_indexes), so a sorted page is read from the index, not
// by sorting the table. Like the folded columns, the set is part of the schema.
var sortFields = map[Kind][]string{
	KindProduct:  {"sku", "name", "price", "stock", "availability"},
	KindDocument: {"title"},
}

// SortFields returns the fields of kind a Filter may sort by, in display order.
func (r *Registry) SortFields(kind Kind) []*Field {
	var out []*Field
	for _, name := range sortFields[kind] {
		if f, err := r.Field(kind, name); err == nil {
			out = append(out, f)
		}
	}
	return out
}

// CheckSort validates f's ordering: EINVALID for a Sort that is not one of SortFields, or an
// AfterValue of the wrong type. Stores call it before building their query, so a column
// name in ORDER BY always comes from this list.
func (r *Registry) CheckSort(f Filter) error {
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
	return Errorf(EINVALID, "cannot sort %ss by %s: sortable are %v", f.Kind, Quote(f.Sort), sortFields[f.Kind])
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
