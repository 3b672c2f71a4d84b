package store

import "context"

// RecordStreamer is what a store offers, besides Records, to read many records fast: a
// store that implements it hands each record to a function instead of building a page of
// records, reusing the record and its buffers from one call to the next. Export uses it when
// the store has it (a type assertion) and pages through FindRecords otherwise; the Store
// interface does not require it.
type RecordStreamer interface {
	// StreamRecords calls fn with every record of f.Kind matching f.Search whose id is above
	// f.AfterID, in id order, reading the rows in pages of a few thousand (keyset paging on
	// the id, so a record created meanwhile appears when its id is above the page being
	// read; a search, whose lookup cannot start mid-way cheaply, in one query). f.IDs, f.Sort and f.Limit must be empty (EINVALID otherwise). fields names the
	// fields read into each record's Fields (fewer columns read is less work); nil reads all
	// of the kind's, an unknown name is EINVALID.
	//
	// The record passed to fn, its Fields map and its values are valid only during the call:
	// the next record reuses them, so fn must copy what it keeps. An error of fn ends the
	// stream and is returned as it is.
	StreamRecords(ctx context.Context, f Filter, fields []string, fn func(*Record) error) error
}

// StreamFields checks what StreamRecords is asked (EINVALID for a filter it does not take
// or an unknown field) and returns the fields to read, in registry order: all of the kind's
// when names is nil.
func (r *Registry) StreamFields(f Filter, names []string) ([]*Field, error) {
	if len(f.IDs) > 0 || f.Sort != "" || f.Limit != 0 {
		return nil, Errorf(EINVALID, "stream %ss: ids, sort and limit are not supported", f.Kind)
	}
	all := r.Fields(f.Kind)
	if names == nil {
		return all, nil
	}
	want := make(map[string]bool, len(names))
	for _, n := range names {
		if _, err := r.Field(f.Kind, n); err != nil {
			return nil, err
		}
		want[n] = true
	}
	var out []*Field
	for _, fd := range all {
		if want[fd.Name] {
			out = append(out, fd)
		}
	}
	return out, nil
}
