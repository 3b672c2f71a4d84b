package store

import (
	_ "embed"
	"slices"
	"strings"
)

//go:embed sample.yaml
var sampleSchemaYAML []byte

// Kind names a kind of record. Each kind is a real table with real columns; the kinds a store
// has are its schema's (Registry.Kinds).
type Kind string

// The kinds of the sample schema (sample.yaml): what `tandem init --sample` makes, and what a
// store made before schemas were data holds.
const (
	KindProduct  Kind = "product"
	KindDocument Kind = "document"
)

// ParseKind returns the kind of r named s, accepting its table's name too ("products").
// EINVALID naming the kinds r has.
func (r *Registry) ParseKind(s string) (Kind, error) {
	low := strings.ToLower(s)
	for _, k := range r.order {
		if string(k) == low || r.defs[k].Table == low {
			return k, nil
		}
	}
	return "", Errorf(EINVALID, "unknown kind %s (this store has %s)", Quote(s), r.kindList())
}

// Table returns the name of kind's table in both SQL stores. EINVALID for a kind r does not
// have.
func (r *Registry) Table(kind Kind) (string, error) {
	if d, ok := r.defs[kind]; ok {
		return d.Table, nil
	}
	return "", r.unknownKind(kind)
}

// unknownKind is the refusal (EINVALID) of a kind r does not have, naming the kinds it has:
// one message for every operation and every store.
func (r *Registry) unknownKind(kind Kind) error {
	return Errorf(EINVALID, "unknown kind %s (this store has %s)", Quote(string(kind)), r.kindList())
}

func (r *Registry) kindList() string {
	names := make([]string, len(r.order))
	for i, k := range r.order {
		names[i] = string(k)
	}
	switch len(names) {
	case 0:
		return "no kinds"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// Type is the value type of a field. It fixes the column type and the Go type of its values.
type Type string

// Field types, with the Go type their values have in Values.
const (
	TypeString Type = "string" // string, one line
	TypeText   Type = "text"   // string, many lines
	TypeInt    Type = "int"    // int64
	TypeMoney  Type = "money"  // int64 cents; written and shown as "29.99"
	TypeSet    Type = "set"    // []string, sorted, no duplicates
	TypeEnum   Type = "enum"   // string, one of Field.Values
	TypeTime   Type = "time"   // time.Time in UTC, or nil
	TypeRef    Type = "ref"    // int64 id of a record of the same kind, or nil
)

// Owner says who may write a field.
type Owner string

// Field owners (seed 000's field ownership).
const (
	OwnerEditor Owner = "editor" // people, through the editor or the CLI
	OwnerSystem Owner = "system" // background workers
	OwnerShared Owner = "shared" // both
)

// Rule says how a three-way merge combines a field.
type Rule string

// Merge rules.
const (
	RuleText    Rule = "text"    // line-level three-way merge
	RuleScalar  Rule = "scalar"  // take the side that changed; both changed differently is a conflict
	RuleSet     Rule = "set"     // apply both sides' additions and removals
	RuleCounter Rule = "counter" // base plus both deltas
)

// Lease groups every registry has. A registry may define more through Field.Group.
const (
	GroupEditor = "editor"
	GroupSystem = "system"
)

// Field describes one field of a record kind: its column, type, owner, merge rule, lease group
// and limits. Field names are the column names; SQL only ever names columns found here.
type Field struct {
	Name     string   `yaml:"name"`
	Label    string   `yaml:"label,omitempty"`
	Type     Type     `yaml:"type"`
	To       Kind     `yaml:"to,omitempty"` // the kind a ref points to (the field's own kind when not given)
	Owner    Owner    `yaml:"owner"`
	Rule     Rule     `yaml:"rule"`
	Group    string   `yaml:"group,omitempty"`
	Required bool     `yaml:"required,omitempty"`
	ReadOnly bool     `yaml:"readonly,omitempty"` // written only by a dedicated operation (parent_id by a move)
	Unique   bool     `yaml:"unique,omitempty"`   // no two records share its key (SKUKey); see UniqueKeyColumn
	Search   bool     `yaml:"search,omitempty"`   // a search (--search, the list's filter) looks in it; see SearchFold
	Sort     bool     `yaml:"sort,omitempty"`     // a listing may be ordered by it (see SortFields)
	MaxChars int      `yaml:"max_chars,omitempty"`
	MaxBytes int      `yaml:"max_bytes,omitempty"`
	MaxItems int      `yaml:"max_items,omitempty"`
	Values   []string `yaml:"values,omitempty,flow"` // allowed values of an enum
	// Default is the value a create that does not give the field writes, as the schema file
	// writes it (Parse reads it); "" for the type's zero value.
	Default string `yaml:"default,omitempty"`
	// RenameFrom names the field's old name in a schema change that renames it.
	RenameFrom string `yaml:"rename_from,omitempty"`
	// Worker names the background task that keeps the field (checksum, thumbnail,
	// wordcount); a task does nothing on kinds with no field naming it.
	Worker string `yaml:"worker,omitempty"`

	def  any // Default, parsed
	line int // where the schema file has it
}

// Writable reports whether a writer in role may write the field.
func (f *Field) Writable(role Role) bool {
	switch f.Owner {
	case OwnerShared:
		return true
	case OwnerEditor:
		return role == RoleEditor
	case OwnerSystem:
		return role == RoleSystem
	}
	return false
}

// Fields returns the fields of kind in display order. The slice must not be modified.
func (r *Registry) Fields(kind Kind) []*Field { return r.kinds[kind] }

// Field returns the named field of kind, or an EINVALID error naming the known fields.
func (r *Registry) Field(kind Kind, name string) (*Field, error) {
	if f, ok := r.index[kind][name]; ok {
		return f, nil
	}
	if _, ok := r.index[kind]; !ok {
		return nil, r.unknownKind(kind)
	}
	names := make([]string, 0, len(r.kinds[kind]))
	for _, f := range r.kinds[kind] {
		names = append(names, f.Name)
	}
	return nil, Errorf(EINVALID, "unknown field %s.%s (fields: %s)", kind, name, strings.Join(names, ", "))
}

// Groups returns the lease groups used by kind's fields, sorted, always including editor and system.
func (r *Registry) Groups(kind Kind) []string {
	gs := []string{GroupEditor, GroupSystem}
	for _, f := range r.kinds[kind] {
		if !slices.Contains(gs, f.Group) {
			gs = append(gs, f.Group)
		}
	}
	slices.Sort(gs)
	return gs
}

// HasGroup reports whether group is a lease group of kind.
func (r *Registry) HasGroup(kind Kind, group string) bool {
	return slices.Contains(r.Groups(kind), group)
}
