package store

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// A schema change is the store's schema replaced by another: DiffSchema lists what changes,
// each change additive (nothing stored is lost or made invalid: a new kind or field, a wider
// limit, a new enum value, a label, owner, rule, group, search, sort, title, default or
// worker, a rename its rename_from declares) or destructive (stored values are lost or no
// longer fit: a field or kind dropped, a type changed, a limit narrowed, an enum value
// removed). A few changes no store applies yet (a kind's table, tree or a ref's target, a
// field made unique or no longer unique) are listed as unsupported, and a store refuses them.
// A store that can change its schema in place implements SchemaApplier.

// ChangeClass says whether a schema change loses or invalidates stored values.
type ChangeClass string

// Classes of schema changes.
const (
	ChangeAdditive    ChangeClass = "additive"    // nothing stored is lost
	ChangeDestructive ChangeClass = "destructive" // stored values may be lost or no longer fit
	ChangeUnsupported ChangeClass = "unsupported" // no store applies it (yet)
)

// ChangeOp names what a schema change does.
type ChangeOp string

// Schema change operations. A change of a kind has Field "".
const (
	OpAddKind      ChangeOp = "add_kind"
	OpDropKind     ChangeOp = "drop_kind"
	OpAddField     ChangeOp = "add_field"
	OpDropField    ChangeOp = "drop_field"
	OpRenameField  ChangeOp = "rename_field"  // From holds the old name
	OpRetypeField  ChangeOp = "retype_field"  // the old values are dropped, the new column gets the default
	OpWidenLimit   ChangeOp = "widen_limit"   // Limit, Old, New
	OpNarrowLimit  ChangeOp = "narrow_limit"  // Limit, Old, New (0: no limit)
	OpAddValues    ChangeOp = "add_values"    // Values added to an enum
	OpRemoveValues ChangeOp = "remove_values" // Values removed from an enum
	OpSearchOn     ChangeOp = "search_on"
	OpSearchOff    ChangeOp = "search_off"
	OpSortOn       ChangeOp = "sort_on"
	OpSortOff      ChangeOp = "sort_off"
	OpDefault      ChangeOp = "default"  // the default of new records (and the column's)
	OpDescribe     ChangeOp = "describe" // label, owner, rule, group, required, readonly, worker, order, title
	OpUnsupported  ChangeOp = "unsupported"
)

// SchemaChange is one change of a schema diff.
type SchemaChange struct {
	Class  ChangeClass
	Op     ChangeOp
	Kind   Kind
	Field  string   // "" for a change of the kind itself
	From   string   // OpRenameField: the field's old name
	Limit  string   // OpWidenLimit, OpNarrowLimit: max_chars, max_bytes or max_items
	Old    int      // the old limit (0: none)
	New    int      // the new limit (0: none)
	Values []string // OpAddValues, OpRemoveValues
	// Desc is the change in one line: "add field supplier.country (string, default "DE")".
	Desc string
	// Affected is how many stored values a destructive change loses or invalidates, as a
	// store counted them (ApplySchema fills it; -1 when not counted).
	Affected int64
	// AffectedDesc says what Affected counts: "12 records hold a value", and what
	// AffectedDeleted does.
	AffectedDesc string
	// AffectedDeleted is how many deleted records' tombstones hold a value the change takes
	// (a dropped or retyped field's, a removed enum value): restored after it, they would
	// come back without it (RunApply fills it).
	AffectedDeleted int64
}

// String returns the change in one line, with what it affects when a store counted it.
func (c SchemaChange) String() string {
	s := c.Desc
	if c.Class != ChangeAdditive {
		s += ": " + string(c.Class)
	}
	if c.AffectedDesc != "" {
		s += ": " + c.AffectedDesc
	}
	return s
}

// SchemaDiff is what changes from one schema to the next, in order: kinds added, then per
// kind of the current schema its changes in the new schema's field order, then drops.
type SchemaDiff struct {
	From, To *Registry
	Changes  []SchemaChange
}

// Empty reports whether the schemas hold the same kinds and fields (a diff may be empty while
// the YAML differs only in rename_from lines).
func (d *SchemaDiff) Empty() bool { return len(d.Changes) == 0 }

// Of returns the changes of class c.
func (d *SchemaDiff) Of(c ChangeClass) []SchemaChange {
	var out []SchemaChange
	for _, ch := range d.Changes {
		if ch.Class == c {
			out = append(out, ch)
		}
	}
	return out
}

// String lists the changes, one a line.
func (d *SchemaDiff) String() string {
	var b strings.Builder
	for _, c := range d.Changes {
		b.WriteString(c.String() + "\n")
	}
	return b.String()
}

// DiffSchema returns the changes that turn the schema cur into next. A field is renamed only
// when next's field names the old one with rename_from (and cur has it under that name and
// not under the new one); EINVALID when rename_from names a field next still has or one
// that another field of next renames too.
func DiffSchema(cur, next *Registry) (*SchemaDiff, error) {
	d := &SchemaDiff{From: cur, To: next}
	add := func(c SchemaChange) {
		c.Affected = -1
		d.Changes = append(d.Changes, c)
	}
	for _, k := range next.order {
		if cur.defs[k] == nil {
			add(SchemaChange{Class: ChangeAdditive, Op: OpAddKind, Kind: k,
				Desc: fmt.Sprintf("add kind %s (table %s, %d fields)", k, next.defs[k].Table, len(next.defs[k].Fields))})
		}
	}
	for _, k := range cur.order {
		nd, cd := next.defs[k], cur.defs[k]
		if nd == nil {
			continue
		}
		unsupported := func(what string) {
			add(SchemaChange{Class: ChangeUnsupported, Op: OpUnsupported, Kind: k, Desc: fmt.Sprintf("kind %s: %s", k, what)})
		}
		if nd.Table != cd.Table {
			unsupported(fmt.Sprintf("table %s becomes %s (a kind's table cannot be renamed yet)", cd.Table, nd.Table))
			continue
		}
		if nd.Tree != cd.Tree {
			unsupported(fmt.Sprintf("tree %v becomes %v (cannot be changed yet)", cd.Tree, nd.Tree))
			continue
		}
		// Which field of cur each field of next continues.
		renamedFrom := map[string]string{} // new name -> old name
		claimed := map[string]string{}     // old name -> new name
		for _, f := range nd.Fields {
			if f.RenameFrom == "" {
				continue
			}
			if _, ok := next.index[k][f.RenameFrom]; ok {
				return nil, Errorf(EINVALID, "%s.%s: rename_from %s names a field the schema still has", k, f.Name, f.RenameFrom)
			}
			if other, ok := claimed[f.RenameFrom]; ok {
				return nil, Errorf(EINVALID, "%s.%s and %s.%s are both renamed from %s", k, other, k, f.Name, f.RenameFrom)
			}
			claimed[f.RenameFrom] = f.Name
			_, hasOld := cur.index[k][f.RenameFrom]
			_, hasNew := cur.index[k][f.Name]
			if hasOld && !hasNew {
				renamedFrom[f.Name] = f.RenameFrom
			}
		}
		matched := map[string]bool{}
		for _, nf := range nd.Fields {
			old := nf.Name
			if o, ok := renamedFrom[nf.Name]; ok {
				old = o
			}
			cf, ok := cur.index[k][old]
			if !ok {
				add(SchemaChange{Class: ChangeAdditive, Op: OpAddField, Kind: k, Field: nf.Name,
					Desc: fmt.Sprintf("add field %s.%s (%s)", k, nf.Name, fieldSummary(nf))})
				continue
			}
			matched[old] = true
			if old != nf.Name {
				add(SchemaChange{Class: ChangeAdditive, Op: OpRenameField, Kind: k, Field: nf.Name, From: old,
					Desc: fmt.Sprintf("rename field %s.%s to %s", k, old, nf.Name)})
			}
			diffField(k, cf, nf, add)
		}
		for _, cf := range cd.Fields {
			if !matched[cf.Name] {
				add(SchemaChange{Class: ChangeDestructive, Op: OpDropField, Kind: k, Field: cf.Name,
					Desc: fmt.Sprintf("drop field %s.%s", k, cf.Name)})
			}
		}
		var what []string
		if nd.Title != cd.Title {
			what = append(what, fmt.Sprintf("title %s becomes %s", cd.Title, nd.Title))
		}
		if no, co := fieldOrder(nd, renamedFrom), fieldOrder(cd, nil); !slices.Equal(no, co) && sameSet(no, co) {
			what = append(what, "field order")
		}
		if len(what) > 0 {
			add(SchemaChange{Class: ChangeAdditive, Op: OpDescribe, Kind: k,
				Desc: fmt.Sprintf("kind %s: %s", k, strings.Join(what, ", "))})
		}
	}
	for _, k := range cur.order {
		if next.defs[k] == nil {
			add(SchemaChange{Class: ChangeDestructive, Op: OpDropKind, Kind: k,
				Desc: fmt.Sprintf("drop kind %s (table %s)", k, cur.defs[k].Table)})
		}
	}
	return d, nil
}

// fieldOrder returns the names of d's fields in order, each under its old name where renamed.
func fieldOrder(d *KindDef, renamedFrom map[string]string) []string {
	out := make([]string, len(d.Fields))
	for i, f := range d.Fields {
		out[i] = f.Name
		if o, ok := renamedFrom[f.Name]; ok {
			out[i] = o
		}
	}
	return out
}

// sameSet reports whether a and b hold the same names.
func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// fieldSummary is a field's type with its default and flags, for a change's line.
func fieldSummary(f *Field) string {
	s := string(f.Type)
	if f.Type == TypeRef {
		s += " to " + string(f.To)
	}
	if f.Default != "" {
		s += fmt.Sprintf(", default %q", f.Default)
	}
	for _, fl := range []struct {
		on   bool
		name string
	}{{f.Required, "required"}, {f.Unique, "unique"}, {f.Search, "search"}, {f.Sort, "sort"}} {
		if fl.on {
			s += ", " + fl.name
		}
	}
	return s
}

// diffField adds the changes of one field that both schemas have (cf in cur, nf in next,
// perhaps under another name).
func diffField(k Kind, cf, nf *Field, add func(SchemaChange)) {
	name := string(k) + "." + nf.Name
	if cf.Type != nf.Type {
		add(SchemaChange{Class: ChangeDestructive, Op: OpRetypeField, Kind: k, Field: nf.Name,
			Desc: fmt.Sprintf("change the type of %s from %s to %s (its values are dropped)", name, cf.Type, nf.Type)})
		return
	}
	if cf.Type == TypeRef && cf.To != nf.To {
		add(SchemaChange{Class: ChangeUnsupported, Op: OpUnsupported, Kind: k, Field: nf.Name,
			Desc: fmt.Sprintf("%s: a ref to %s becomes a ref to %s (cannot be changed yet)", name, cf.To, nf.To)})
		return
	}
	if cf.Unique != nf.Unique {
		add(SchemaChange{Class: ChangeUnsupported, Op: OpUnsupported, Kind: k, Field: nf.Name,
			Desc: fmt.Sprintf("%s: unique %v becomes %v (cannot be changed yet)", name, cf.Unique, nf.Unique)})
	}
	for _, l := range []struct {
		name     string
		old, new int
	}{{"max_chars", cf.MaxChars, nf.MaxChars}, {"max_bytes", cf.MaxBytes, nf.MaxBytes}, {"max_items", cf.MaxItems, nf.MaxItems}} {
		if l.old == l.new {
			continue
		}
		c := SchemaChange{Class: ChangeAdditive, Op: OpWidenLimit, Kind: k, Field: nf.Name, Limit: l.name, Old: l.old, New: l.new}
		verb := "widen"
		if l.new != 0 && (l.old == 0 || l.new < l.old) {
			c.Class, c.Op, verb = ChangeDestructive, OpNarrowLimit, "narrow"
		}
		c.Desc = fmt.Sprintf("%s %s %s %s→%s", verb, name, l.name, limitString(l.old), limitString(l.new))
		add(c)
	}
	if cf.Type == TypeEnum {
		var added, removed []string
		for _, v := range nf.Values {
			if !slices.Contains(cf.Values, v) {
				added = append(added, v)
			}
		}
		for _, v := range cf.Values {
			if !slices.Contains(nf.Values, v) {
				removed = append(removed, v)
			}
		}
		if len(added) > 0 {
			add(SchemaChange{Class: ChangeAdditive, Op: OpAddValues, Kind: k, Field: nf.Name, Values: added,
				Desc: fmt.Sprintf("add enum value %s to %s", strings.Join(added, ", "), name)})
		}
		if len(removed) > 0 {
			add(SchemaChange{Class: ChangeDestructive, Op: OpRemoveValues, Kind: k, Field: nf.Name, Values: removed,
				Desc: fmt.Sprintf("remove enum value %s from %s (its records get %s)", strings.Join(removed, ", "), name, Quote(fmt.Sprint(nf.Zero())))})
		}
	}
	if cf.Search != nf.Search {
		op, verb := OpSearchOn, "search"
		if !nf.Search {
			op, verb = OpSearchOff, "stop searching"
		}
		add(SchemaChange{Class: ChangeAdditive, Op: op, Kind: k, Field: nf.Name, Desc: fmt.Sprintf("%s %s", verb, name)})
	}
	if cf.Sort != nf.Sort {
		op, verb := OpSortOn, "sort by"
		if !nf.Sort {
			op, verb = OpSortOff, "stop sorting by"
		}
		add(SchemaChange{Class: ChangeAdditive, Op: op, Kind: k, Field: nf.Name, Desc: fmt.Sprintf("%s %s", verb, name)})
	}
	if cf.Default != nf.Default {
		add(SchemaChange{Class: ChangeAdditive, Op: OpDefault, Kind: k, Field: nf.Name,
			Desc: fmt.Sprintf("default of %s %q becomes %q (for new records)", name, cf.Default, nf.Default)})
	}
	var what []string
	oldLabel := cf.Label
	if oldLabel == strings.ReplaceAll(cf.Name, "_", " ") {
		oldLabel = strings.ReplaceAll(nf.Name, "_", " ") // a default label follows a rename
	}
	for _, a := range []struct {
		name     string
		old, new string
	}{{"label", oldLabel, nf.Label}, {"owner", string(cf.Owner), string(nf.Owner)}, {"rule", string(cf.Rule), string(nf.Rule)},
		{"group", cf.Group, nf.Group}, {"worker", cf.Worker, nf.Worker},
		{"required", fmt.Sprint(cf.Required), fmt.Sprint(nf.Required)}, {"readonly", fmt.Sprint(cf.ReadOnly), fmt.Sprint(nf.ReadOnly)}} {
		if a.old != a.new {
			what = append(what, fmt.Sprintf("%s %s→%s", a.name, Quote(a.old), Quote(a.new)))
		}
	}
	if len(what) > 0 {
		add(SchemaChange{Class: ChangeAdditive, Op: OpDescribe, Kind: k, Field: nf.Name,
			Desc: fmt.Sprintf("%s: %s", name, strings.Join(what, ", "))})
	}
}

func limitString(n int) string {
	if n == 0 {
		return "none"
	}
	return fmt.Sprint(n)
}

// SchemaApplier is what a store offers, besides Store, to change its schema in place.
type SchemaApplier interface {
	// ApplySchema makes next the store's schema, as version+1, in one transaction that no
	// other apply interleaves with: it diffs next against the store's current schema,
	// refuses unsupported changes (EINVALID) and, without o.AllowDestructive, destructive
	// ones (EINVALID, each counted: "drop field part.status: 12 records hold a value"),
	// changes the tables, records the schema and logs an EventSchemaChanged change. The
	// result holds the diff with its counts, also when the apply is refused (with the error).
	// o.DryRun returns the diff with its counts and no error for destructive changes (the
	// caller reads them from the diff), changing nothing. After it, the store's Registry is
	// next at the new version. Nothing to change (the same schema) records no version.
	ApplySchema(ctx context.Context, next *Registry, o ApplyOptions) (*ApplyResult, error)
}

// SchemaReloader is what a store offers, besides Store, to a client that learns of a schema
// change another client made (an EventSchemaChanged on the feed).
type SchemaReloader interface {
	// ReloadSchema reads the store's newest schema and, when it is newer than the one the
	// store runs, runs it from then on, as if opened again (an overlay given at open stays
	// when it fits the new schema; EINVALID, changing nothing, when it does not). It returns
	// the registry the store runs afterwards. EUNAVAILABLE or EBUSY when the store cannot
	// be read.
	ReloadSchema(ctx context.Context) (*Registry, error)
}

// ApplyOptions tune ApplySchema.
type ApplyOptions struct {
	// BaseVersion, when not 0, is the schema version the change was made against: an apply
	// to a store whose schema is another version now is refused (ECONFLICT).
	BaseVersion int64
	// AllowDestructive applies destructive changes too.
	AllowDestructive bool
	// ExportTo, with AllowDestructive, receives the values about to be lost before they
	// are dropped, as JSON lines {"kind", "id", "field", "value"} (values in export form).
	ExportTo io.Writer
	// DryRun diffs and counts without changing anything.
	DryRun bool
}

// ApplyResult is what an apply did, or would do.
type ApplyResult struct {
	Diff        *SchemaDiff
	FromVersion int64
	ToVersion   int64 // the new version (FromVersion when nothing changed, or not applied)
	Applied     bool
	Exported    int64 // values written to ExportTo
}

// EventSchemaChanged is the change-log event of a schema change: Version is the new schema
// version, Fields the kinds it changed, Kind "" and RecordID 0. Feed readers that follow
// records ignore it; a client that shows records opens the store again to read the new
// schema.
const EventSchemaChanged Event = "schema_changed"

// RefuseDestructive returns the EINVALID error of an apply refused for d's destructive
// changes, each with its count, or nil when d has none.
func RefuseDestructive(d *SchemaDiff) error {
	ds := d.Of(ChangeDestructive)
	if len(ds) == 0 {
		return nil
	}
	lines := make([]string, len(ds))
	for i, c := range ds {
		lines[i] = c.String()
	}
	return Errorf(EINVALID, "schema change refused: %d destructive change(s) would lose or invalidate stored values:\n  %s\n"+
		"allow destructive changes to apply them", len(ds), strings.Join(lines, "\n  ")).With(WayDestructive)
}

// RefuseUnsupported returns the EINVALID error of an apply refused for d's unsupported
// changes, or nil when d has none.
func RefuseUnsupported(d *SchemaDiff) error {
	us := d.Of(ChangeUnsupported)
	if len(us) == 0 {
		return nil
	}
	lines := make([]string, len(us))
	for i, c := range us {
		lines[i] = c.Desc
	}
	return Errorf(EINVALID, "schema change refused: %d change(s) no store can apply yet:\n  %s", len(us), strings.Join(lines, "\n  "))
}

// LostValue is one line of an apply's export (ApplyOptions.ExportTo): a value a destructive
// change drops or replaces, in export form (Field.Export).
type LostValue struct {
	Kind  Kind   `json:"kind"`
	ID    int64  `json:"id"`
	Field string `json:"field"`
	Value any    `json:"value"`
	// Deleted marks the value of a deleted record, read from its tombstone.
	Deleted bool `json:"deleted,omitempty"`
}

// DeletedText says what AffectedDeleted (n) counts, to follow AffectedText of live (the
// records' count): "and so do 2 deleted records (restored, they come back without it)", or
// with no live record "but 2 deleted records do (…)".
func DeletedText(n, live int64) string {
	who, verb, pron := strconv.FormatInt(n, 10)+" deleted records", "do", "they come"
	if n == 1 {
		who, verb, pron = "1 deleted record", "does", "it comes"
	}
	why := " (restored, " + pron + " back without it)"
	if live == 0 {
		return "but " + who + " " + verb + why
	}
	return "and so " + verb + " " + who + why
}

// RetiredName is the name history keeps a field (or kind) under once a schema change from
// version v drops or retypes it: "status~v3". No field or kind can be named so, so its old
// values never meet a later field of the same name and another type, and DecodeSnapshot
// passes them over.
func RetiredName(name string, v int64) string { return name + "~v" + strconv.FormatInt(v, 10) }

// retired is true of a name RetiredName made.
func retired(name string) bool { return strings.Contains(name, "~v") }

// AffectedText says what a destructive change's count counts: "12 records hold a value".
func AffectedText(op ChangeOp, n int64) string {
	unit, many, one := "record", "", ""
	switch op {
	case OpDropKind:
		many, one = " would be dropped", " would be dropped"
	case OpDropField, OpRetypeField:
		many, one = " hold a value", " holds a value"
	case OpRemoveValues:
		many, one = " use it", " uses it"
	case OpNarrowLimit:
		unit, many, one = "value", " are over the new limit", " is over the new limit"
	}
	if n == 1 {
		return "1 " + unit + one
	}
	return strconv.FormatInt(n, 10) + " " + unit + "s" + many
}
