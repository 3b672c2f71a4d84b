package store

import (
	"fmt"
	"slices"
)

// Writes by other programs. A kind's table is a real table that other programs may query and
// write (sqlite3, psql, a script). tandem sees their writes through triggers that each store
// installs on every record table, made from the registry by one function per store: a write
// that did not come through tandem gets the next version, a history version (a snapshot; a
// delete leaves a tombstone as tandem's own deletes do, so a restore works) and a change
// (EventCreated, EventSaved or EventDeleted, with RoleOutside), and, when it wrote a field
// that derived columns are computed from (RefoldFields), queues the record for their refold
// (RefoldColumns), which SQL cannot compute. An update that changes no field is left alone. So a save
// based on the version before such a write gets ECONFLICT, like one based on any other
// stale version, and the feed, history and working copies' syncs carry it.
//
// Both stores refuse another program what their columns cannot hold as tandem reads it, a
// ref to a record that does not exist and the delete of a record that others refer to
// (PostgreSQL by column types and foreign keys, SQLite by its triggers); values of the right
// type that the schema refuses (an enum value, a limit) go through, and tandem reads them.
//
// tandem's own writes never fire these triggers: each store marks its own connections (a
// trigger condition true only for other connections), and checks that mark only after a
// cheaper test where it can (tandem's updates always raise the version).

// Marks of tandem's own connections, which the outside-write triggers leave alone: the name
// of the (empty, in-memory) database a SQLite connection attaches, and the setting a
// PostgreSQL connection starts with, set to "on". A program that writes as tandem would
// and must not be logged as another program (the contention benchmark's raw baseline) may
// mark its connection too.
const (
	SQLiteWriterMark      = "tandem_writer"
	PostgresWriterSetting = "tandem.writer"
)

// OutsideActor is the name an outside write's history version and change carry when the
// store cannot name the writer (SQLite; PostgreSQL names the database role).
const OutsideActor = "outside"

// RoleOutside is the role of a change another program made directly in the database.
const RoleOutside Role = "outside"

// OutsideTable is what a store needs to make the triggers that see outside writes to the
// records of one kind: the kind, its table and its fields.
type OutsideTable struct {
	Kind   Kind
	Table  string
	Fields []*Field
	// Refold names the fields whose derived columns (RefoldColumns) only tandem computes:
	// an outside write of one of them queues the record for the refold.
	Refold []string
	// Refs are the kind's ref fields, Referrers the ref fields of every kind (this one's
	// among them) that point to it: what a store whose database does not hold other
	// programs to its foreign keys (SQLite) checks itself.
	Refs, Referrers []OutsideRef
	// Tree is true of a tree kind: an outside write of its parent_id must make no cycle.
	Tree bool
}

// OutsideRef is a ref field as the outside-write triggers see it: the field, the kind and
// table that hold it, and the kind and table it points to.
type OutsideRef struct {
	Kind         Kind
	Table, Field string
	To           Kind
	ToTable      string
	SameTable    bool // the field points to its own kind (a tree's parent, say)
}

// FieldNames returns the names of the table's fields, sorted: the fields an outside insert
// writes, and the order an outside update's changed fields are listed in.
func (t OutsideTable) FieldNames() []string {
	out := make([]string, len(t.Fields))
	for i, f := range t.Fields {
		out[i] = f.Name
	}
	slices.Sort(out)
	return out
}

// OutsideTables returns the OutsideTable of every kind of the registry; table names each
// kind's table as the store spells it.
func (r *Registry) OutsideTables(table func(Kind) (string, error)) ([]OutsideTable, error) {
	var out []OutsideTable
	var refs []OutsideRef
	for _, k := range r.Kinds() {
		t, err := table(k)
		if err != nil {
			return nil, err
		}
		out = append(out, OutsideTable{Kind: k, Table: t, Fields: r.Fields(k), Refold: r.RefoldFields(k), Tree: r.Tree(k)})
		for _, f := range r.Fields(k) {
			if f.Type != TypeRef {
				continue
			}
			to, err := table(f.To)
			if err != nil {
				return nil, err
			}
			refs = append(refs, OutsideRef{Kind: k, Table: t, Field: f.Name, To: f.To, ToTable: to, SameTable: k == f.To})
		}
	}
	for i := range out {
		for _, ref := range refs {
			if ref.Kind == out[i].Kind {
				out[i].Refs = append(out[i].Refs, ref)
			}
			if ref.To == out[i].Kind {
				out[i].Referrers = append(out[i].Referrers, ref)
			}
		}
	}
	return out, nil
}

// RefoldFields returns the fields of kind that derived columns are computed from
// (RefoldColumns): its unique fields, and every field with a folded column.
func (r *Registry) RefoldFields(kind Kind) []string {
	out := slices.Clone(r.FoldedFields(kind))
	for _, f := range r.UniqueFields(kind) {
		if !slices.Contains(out, f.Name) {
			out = append(out, f.Name)
		}
	}
	return out
}

// RefoldColumns returns the derived columns of a record of kind with vals that a store
// writes again after an outside write: the unique keys and the folded search text
// (ExtraColumns), which only Go computes.
func (r *Registry) RefoldColumns(kind Kind, vals Values) []Column { return r.ExtraColumns(kind, vals) }

// OutsideCycleMessage is what the outside-write triggers say when another program's write
// of a tree kind's parent_id would put a record under itself.
func OutsideCycleMessage(kind Kind) string {
	return fmt.Sprintf("tandem: %s.%s would make a cycle (a record under itself or under one of its own descendants)", kind, ParentField)
}
