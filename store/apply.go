package store

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// Applying a schema change, decided here, once, for every store (SchemaApplier). Inside one
// transaction that no other apply interleaves with (or under the in-memory store's lock), a
// store hands RunApply its steps; RunApply reads the schema the store keeps now, refuses a
// change made against another version, diffs, refuses unsupported changes, counts what the
// destructive ones would lose, stops there for a dry run, refuses destructive changes unless
// they are allowed (and those the store cannot make), locks the tables, exports the values
// about to be lost, changes the tables, renames fields in history (renames first, then the
// fields and kinds dropped, kept under RetiredName), records the new schema and logs its
// EventSchemaChanged change. How the tables change is each store's own (its DDL).

// ApplySteps are the reads and writes a store's schema change offers RunApply, each inside
// the apply's one transaction (or under the in-memory store's lock).
type ApplySteps interface {
	// Current returns the schema the store keeps now, at its version, read after the lock
	// that keeps two applies apart. EINVALID when the store's schema is not its own to
	// change (a working copy's is its source's); EINTERNAL when none is recorded.
	Current() (*Registry, error)
	// CountAffected fills Affected and AffectedDesc (AffectedText) of d's destructive
	// changes with how many stored values each loses or invalidates.
	CountAffected(d *SchemaDiff) error
	// Unapplied returns the destructive changes of d the store cannot make yet, allowed or
	// not (none: it makes them all).
	Unapplied(d *SchemaDiff) []SchemaChange
	// DeletedRecords returns the records of kind (whose table is table) that are deleted
	// now (no row, and the newest history version a tombstone: a snapshot of event
	// EventDeleted), in id order, each with its tombstone's snapshot.
	DeletedRecords(kind Kind, table string) ([]DeletedRecord, error)
	// LockTables takes, before anything is exported, the locks the change of d's tables
	// needs, so that a lock wait that ends the attempt ends it where trying again is harmless.
	LockTables(d *SchemaDiff) error
	// ExportLost writes to w, as JSON lines of LostValue, the values d's destructive changes
	// drop or replace (a narrowed limit drops none), and returns how many.
	ExportLost(d *SchemaDiff, w io.Writer) (int64, error)
	// ChangeTables changes the store's tables from d.From's into d.To's as schema version
	// v: columns, indexes, search tables, outside-write triggers, new kinds' tables, and
	// the records that hold a removed enum value rewritten, as writes by actor.
	ChangeTables(d *SchemaDiff, v int64, actor Actor) error
	HistoryRenamer
	// Record records next as the store's schema version v and writes the change ch.
	Record(next *Registry, v int64, ch Change) error
}

// DeletedRecord is a deleted record's id and its tombstone's snapshot (EncodeSnapshot's
// form), as ApplySteps.DeletedRecords reads them.
type DeletedRecord struct {
	ID       int64
	Snapshot []byte
}

// CheckApply validates a schema change to next before a store starts it, and returns the
// actor in ctx (the system actor "tandem" when ctx has none). EINVALID for a field registry
// of the form before schemas; EFORBIDDEN for an actor who may not change the schema (not
// an admin, CheckAdmin).
func CheckApply(ctx context.Context, next *Registry) (Actor, error) {
	if next == nil || next.Legacy() {
		return Actor{}, Errorf(EINVALID, "apply schema: want a schema with kinds: (a field registry of the older form changes no tables)")
	}
	actor, err := ActorFrom(ctx)
	if err != nil {
		actor = Actor{Name: "tandem", Role: RoleSystem}
	}
	if err := actor.CheckWrite("the schema change"); err != nil {
		return actor, err
	}
	return actor, actor.CheckAdmin("the schema change")
}

// RunApply makes next the store's schema as o asks (see SchemaApplier), by actor at at,
// through the store's steps s. It returns the result, also with an error when the change is
// refused; res.Applied says the store's schema is now next at res.ToVersion, which the
// store uses once the transaction commits. A dry run returns before anything is written:
// the store rolls back. exported is kept across the attempts a store's transaction makes:
// once the values to be lost are written to o.ExportTo, another attempt would write them
// again, so it is refused (EBUSY) instead.
func RunApply(next *Registry, o ApplyOptions, actor Actor, at time.Time, s ApplySteps, exported *bool) (*ApplyResult, error) {
	cur, err := s.Current()
	if err != nil {
		return nil, err
	}
	res := &ApplyResult{FromVersion: cur.Version(), ToVersion: cur.Version()}
	if o.BaseVersion != 0 && o.BaseVersion != cur.Version() {
		return res, Errorf(ECONFLICT, "apply schema: the store's schema is version %d now, not version %d the change was made against; "+
			"diff the schema again", cur.Version(), o.BaseVersion)
	}
	d, err := DiffSchema(cur, next)
	if err != nil {
		return res, err
	}
	res.Diff = d
	if err := RefuseUnsupported(d); err != nil {
		return res, err
	}
	if err := s.CountAffected(d); err != nil {
		return res, fmt.Errorf("count the values a change affects: %w", err)
	}
	deleted, err := lostDeleted(d, s)
	if err != nil {
		return res, fmt.Errorf("count the values a change takes from deleted records: %w", err)
	}
	if o.DryRun {
		return res, nil
	}
	if !o.AllowDestructive {
		if err := RefuseDestructive(d); err != nil {
			return res, err
		}
	}
	if un := s.Unapplied(d); len(un) > 0 {
		lines := make([]string, len(un))
		for i, c := range un {
			lines[i] = c.String()
		}
		return res, Errorf(EINVALID, "schema change refused: this store does not apply these destructive changes yet, allowed or not:\n  %s",
			strings.Join(lines, "\n  "))
	}
	if d.Empty() && cur.Same(next) {
		return res, nil // nothing to record
	}
	if err := s.LockTables(d); err != nil {
		return res, err
	}
	if o.ExportTo != nil && len(d.Of(ChangeDestructive)) > 0 {
		if *exported {
			return res, Errorf(EBUSY, "apply schema: the values to be dropped were exported but the change was not applied; "+
				"nothing changed, try again")
		}
		*exported = true
		if res.Exported, err = s.ExportLost(d, o.ExportTo); err != nil {
			return res, fmt.Errorf("export the values to be dropped: %w", err)
		}
		enc := json.NewEncoder(o.ExportTo)
		for _, l := range deleted {
			if err := enc.Encode(l); err != nil {
				return res, fmt.Errorf("export the values to be dropped: %w", err)
			}
			res.Exported++
		}
	}
	v := cur.Version() + 1
	if err := s.ChangeTables(d, v, actor); err != nil {
		return res, err
	}
	if err := RenameHistory(d, v, s); err != nil {
		return res, err
	}
	ch := SchemaChanged(d, v, actor, at)
	if err := s.Record(next, v, ch); err != nil {
		return res, err
	}
	res.ToVersion, res.Applied = v, true
	return res, nil
}

// HistoryRenamer renames fields and kinds in a store's history: a step of a schema change
// (ApplySteps), and of a working copy taking its source's schema.
type HistoryRenamer interface {
	// RenameInHistory renames field from to to in the history and change log of kind.
	RenameInHistory(kind Kind, from, to string) error
	// RetireKind files the history of kind under the name retired.
	RetireKind(kind Kind, retired string) error
}

// RenameHistory renames, in history, the fields d renames, then files the fields and
// kinds it drops or retypes under their retired names (RetiredName of version v-1), so
// history reads under the new schema's names and never meets old values of another type
// under a name in use. A rename never takes the name of a field that is dropped
// (DiffSchema), so the order is safe.
func RenameHistory(d *SchemaDiff, v int64, s HistoryRenamer) error {
	for _, c := range d.Changes {
		if c.Op == OpRenameField {
			if err := s.RenameInHistory(c.Kind, c.From, c.Field); err != nil {
				return err
			}
		}
	}
	for _, c := range d.Changes {
		var err error
		switch c.Op {
		case OpDropField, OpRetypeField:
			err = s.RenameInHistory(c.Kind, c.Field, RetiredName(c.Field, v-1))
		case OpDropKind:
			err = s.RetireKind(c.Kind, RetiredName(string(c.Kind), v-1))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// SchemaChanged is the change log's entry of schema change d, made by actor at at as
// version v: an EventSchemaChanged naming the kinds it changes.
func SchemaChanged(d *SchemaDiff, v int64, actor Actor, at time.Time) Change {
	return Change{Event: EventSchemaChanged, Version: v, Actor: actor.Name, Role: actor.Role, Fields: changedKinds(d), At: at}
}

// changedKinds returns the kinds d changes, sorted: the Fields of its EventSchemaChanged.
func changedKinds(d *SchemaDiff) []string {
	kinds := []string{}
	for _, c := range d.Changes {
		if !slices.Contains(kinds, string(c.Kind)) {
			kinds = append(kinds, string(c.Kind))
		}
	}
	slices.Sort(kinds)
	return kinds
}

// OldFieldName returns the name the current schema of d gives the field next names name
// of kind: its rename_from when d renames it, else name.
func OldFieldName(d *SchemaDiff, kind Kind, name string) string {
	for _, c := range d.Changes {
		if c.Op == OpRenameField && c.Kind == kind && c.Field == name {
			return c.From
		}
	}
	return name
}

// lostDeleted finds the values that d's destructive changes of a field (dropped, retyped, an
// enum value removed) take from deleted records: their tombstones keep them, and a restore
// after the change would bring the record back without them. It adds their count to each
// change (AffectedDeleted, and DeletedText to AffectedDesc) and returns them as lines of
// the export, marked Deleted. A value the old field cannot read is counted and exported as
// the tombstone holds it.
func lostDeleted(d *SchemaDiff, s ApplySteps) ([]LostValue, error) {
	var lost []LostValue
	read := map[Kind][]DeletedRecord{}
	for i, c := range d.Changes {
		switch {
		case c.Class != ChangeDestructive:
			continue
		case c.Op != OpDropField && c.Op != OpRetypeField && c.Op != OpRemoveValues:
			continue
		}
		name := c.Field
		if c.Op != OpDropField {
			name = OldFieldName(d, c.Kind, c.Field)
		}
		f, err := d.From.Field(c.Kind, name)
		if err != nil {
			return nil, err
		}
		recs, ok := read[c.Kind]
		if !ok {
			table, err := d.From.Table(c.Kind)
			if err != nil {
				return nil, err
			}
			if recs, err = s.DeletedRecords(c.Kind, table); err != nil {
				return nil, err
			}
			read[c.Kind] = recs
		}
		var n int64
		for _, r := range recs {
			var snap map[string]any
			if err := unmarshalNumbers(r.Snapshot, &snap); err != nil {
				return nil, fmt.Errorf("%s %d: read its tombstone: %w", c.Kind, r.ID, err)
			}
			x, ok := snap[name]
			if !ok {
				continue
			}
			out := x
			if v, err := f.decodeStored(x); err == nil {
				if !takes(c, v) {
					continue
				}
				out = f.Export(v)
			}
			n++
			lost = append(lost, LostValue{Kind: c.Kind, ID: r.ID, Field: name, Value: out, Deleted: true})
		}
		if n > 0 {
			c.AffectedDeleted = n
			c.AffectedDesc += ", " + DeletedText(n, c.Affected)
			d.Changes[i] = c
		}
	}
	return lost, nil
}

// takes reports whether the destructive change c takes v, a value of its field: a value
// other than its type's empty one, for a dropped or retyped field (as the stores count the
// records' values), one of the values an enum loses.
func takes(c SchemaChange, v any) bool {
	if c.Op == OpRemoveValues {
		s, _ := v.(string)
		return slices.Contains(c.Values, s)
	}
	switch v := v.(type) {
	case nil:
		return false
	case string:
		return v != ""
	case int64:
		return v != 0
	case []string:
		return len(v) > 0
	}
	return true
}
