package store

import (
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

//go:embed fields.yaml
var defaultRegistryYAML []byte

// Kind names a kind of record. Each kind is a real table with real columns.
type Kind string

// The record kinds tandem knows.
const (
	KindProduct  Kind = "product"
	KindDocument Kind = "document"
)

// Kinds lists every record kind in display order.
var Kinds = []Kind{KindProduct, KindDocument}

// ParseKind returns the kind named s, accepting the plural too ("products").
func ParseKind(s string) (Kind, error) {
	k := Kind(strings.TrimSuffix(strings.ToLower(s), "s"))
	if slices.Contains(Kinds, k) {
		return k, nil
	}
	return "", Errorf(EINVALID, "unknown kind %s (want product or document)", Quote(s))
}

// Plural returns the kind's plural ("products"), which is also the name of its table in
// both SQL stores. EINVALID for a kind tandem does not know.
func (k Kind) Plural() (string, error) {
	if !slices.Contains(Kinds, k) {
		return "", Errorf(EINVALID, "unknown kind %s (want product or document)", Quote(string(k)))
	}
	return string(k) + "s", nil
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
	Label    string   `yaml:"label"`
	Type     Type     `yaml:"type"`
	Owner    Owner    `yaml:"owner"`
	Rule     Rule     `yaml:"rule"`
	Group    string   `yaml:"group"`
	Required bool     `yaml:"required"`
	ReadOnly bool     `yaml:"readonly"` // written only by a dedicated operation (parent_id by a move)
	Search   bool     `yaml:"search"`   // a search (--search, the list's filter) looks in it; see SearchFold
	MaxChars int      `yaml:"max_chars"`
	MaxBytes int      `yaml:"max_bytes"`
	MaxItems int      `yaml:"max_items"`
	Values   []string `yaml:"values"` // allowed values of an enum
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

// Registry is the field registry: for every kind, its fields in display order.
// It is immutable once loaded and safe for concurrent use.
type Registry struct {
	kinds map[Kind][]*Field
	index map[Kind]map[string]*Field
}

// schema is what a registry file may not change: the columns of each kind and their types.
var schema = map[Kind]map[string]Type{
	KindProduct: {
		"sku": TypeString, "name": TypeString, "description": TypeText, "categories": TypeSet,
		"price": TypeMoney, "stock": TypeInt, "availability": TypeEnum, "thumbnail": TypeString,
		"search_index": TypeText, "checksum": TypeString, "last_sync_at": TypeTime,
	},
	KindDocument: {
		"parent_id": TypeRef, "title": TypeString, "body": TypeText, "tags": TypeSet,
		"word_count": TypeInt, "checksum": TypeString,
	},
}

// DefaultRegistry returns the registry embedded in the binary (store/fields.yaml).
func DefaultRegistry() *Registry {
	r, err := ParseRegistry("fields.yaml (embedded)", defaultRegistryYAML)
	if err != nil {
		panic(err) // the embedded file is covered by tests; a broken one is a build error
	}
	return r
}

// MaxRegistryBytes bounds a registry file: the built-in one is under 4 KiB, and a file of
// any size would otherwise be read whole into memory (a path like /dev/zero never ends).
const MaxRegistryBytes = 1 << 20

// LoadRegistry reads a registry file, or returns the default registry when path is empty.
// A file over MaxRegistryBytes is refused (EINVALID) after reading at most one byte more.
func LoadRegistry(path string) (*Registry, error) {
	if path == "" {
		return DefaultRegistry(), nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, Errorf(EINVALID, "read field registry: %v", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxRegistryBytes+1))
	if err != nil {
		return nil, Errorf(EINVALID, "read field registry %s: %v", path, err)
	}
	if len(data) > MaxRegistryBytes {
		return nil, Errorf(EINVALID, "field registry %s is over the limit of %d bytes (1 MiB)", path, MaxRegistryBytes)
	}
	return ParseRegistry(path, data)
}

var fieldKeys = []string{"name", "label", "type", "owner", "rule", "group", "required", "readonly",
	"search", "max_chars", "max_bytes", "max_items", "values"}

// ParseRegistry parses and validates registry YAML. Errors name the file, the line and the problem.
func ParseRegistry(name string, data []byte) (*Registry, error) {
	bad := func(line int, format string, args ...any) error {
		return Errorf(EINVALID, "field registry %s:%d: %s", name, line, fmt.Sprintf(format, args...))
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, Errorf(EINVALID, "field registry %s: %v", name, err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, bad(1, "want a mapping from kind (product, document) to a list of fields")
	}
	root := doc.Content[0]
	r := &Registry{kinds: map[Kind][]*Field{}, index: map[Kind]map[string]*Field{}}
	for i := 0; i+1 < len(root.Content); i += 2 {
		kn, list := root.Content[i], root.Content[i+1]
		kind := Kind(kn.Value)
		cols, ok := schema[kind]
		if !ok {
			return nil, bad(kn.Line, "unknown kind %s (want product or document)", Quote(kn.Value))
		}
		if _, dup := r.kinds[kind]; dup {
			return nil, bad(kn.Line, "kind %q listed twice", kind)
		}
		if list.Kind != yaml.SequenceNode {
			return nil, bad(list.Line, "kind %q: want a list of fields", kind)
		}
		r.index[kind] = map[string]*Field{}
		for _, fn := range list.Content {
			if fn.Kind != yaml.MappingNode {
				return nil, bad(fn.Line, "want a field as a mapping with name, type, owner and rule")
			}
			searchSet := false
			for j := 0; j+1 < len(fn.Content); j += 2 {
				if k := fn.Content[j]; !slices.Contains(fieldKeys, k.Value) {
					return nil, bad(k.Line, "unknown key %q (known: %s)", k.Value, strings.Join(fieldKeys, ", "))
				}
				searchSet = searchSet || fn.Content[j].Value == "search"
			}
			f := new(Field)
			if err := fn.Decode(f); err != nil {
				return nil, bad(fn.Line, "%v", err)
			}
			if !searchSet {
				// Without the flag, every field with a folded column is searched, as in the
				// default registry (a file written before text search now finds text too).
				f.Search = hasFoldColumn(kind, f.Name)
			}
			if err := f.check(kind, cols); err != nil {
				return nil, bad(fn.Line, "%s", err)
			}
			if err := f.checkTreeField(kind); err != nil {
				return nil, bad(fn.Line, "%s", err)
			}
			if _, dup := r.index[kind][f.Name]; dup {
				return nil, bad(fn.Line, "%s.%s listed twice", kind, f.Name)
			}
			r.kinds[kind] = append(r.kinds[kind], f)
			r.index[kind][f.Name] = f
		}
		for col := range cols {
			if _, ok := r.index[kind][col]; !ok {
				return nil, bad(list.Line, "%s.%s is missing (every column must be listed)", kind, col)
			}
		}
	}
	for _, k := range Kinds {
		if _, ok := r.kinds[k]; !ok {
			return nil, bad(1, "kind %q is missing", k)
		}
	}
	return r, nil
}

func (f *Field) check(kind Kind, cols map[string]Type) error {
	want, ok := cols[f.Name]
	switch {
	case f.Name == "":
		return fmt.Errorf("field without a name")
	case !ok:
		return fmt.Errorf("unknown field %s.%s", kind, f.Name)
	case f.Type != want:
		return fmt.Errorf("%s.%s has type %s, cannot be %s", kind, f.Name, want, Quote(string(f.Type)))
	}
	switch f.Owner {
	case OwnerEditor, OwnerSystem, OwnerShared:
	default:
		return fmt.Errorf("%s.%s: owner %s (want editor, system or shared)", kind, f.Name, Quote(string(f.Owner)))
	}
	switch {
	case f.Rule == RuleText && f.Type != TypeText:
		return fmt.Errorf("%s.%s: rule text needs a text field", kind, f.Name)
	case f.Rule == RuleSet && f.Type != TypeSet:
		return fmt.Errorf("%s.%s: rule set needs a set field", kind, f.Name)
	case f.Rule == RuleCounter && f.Type != TypeInt && f.Type != TypeMoney:
		return fmt.Errorf("%s.%s: rule counter needs an int or money field", kind, f.Name)
	case f.Rule == RuleScalar, f.Rule == RuleText, f.Rule == RuleSet, f.Rule == RuleCounter:
	default:
		return fmt.Errorf("%s.%s: rule %s (want text, scalar, set or counter)", kind, f.Name, Quote(string(f.Rule)))
	}
	if f.Type == TypeSet && f.Rule != RuleSet && f.Rule != RuleScalar {
		return fmt.Errorf("%s.%s: a set field merges by rule set or scalar", kind, f.Name)
	}
	if f.Search && !hasFoldColumn(kind, f.Name) {
		return fmt.Errorf("%s.%s: search needs a folded column, which only %s have (store/search.go)",
			kind, f.Name, strings.Join(foldedFields[kind], ", "))
	}
	if f.Type == TypeEnum && len(f.Values) == 0 {
		return fmt.Errorf("%s.%s: an enum needs values", kind, f.Name)
	}
	if f.MaxChars < 0 || f.MaxBytes < 0 || f.MaxItems < 0 {
		return fmt.Errorf("%s.%s: limits cannot be negative", kind, f.Name)
	}
	if f.Group == "" {
		f.Group = GroupEditor
		if f.Owner == OwnerSystem {
			f.Group = GroupSystem
		}
	}
	if f.Label == "" {
		f.Label = strings.ReplaceAll(f.Name, "_", " ")
	}
	return nil
}

// checkTreeField keeps a document's parent_id out of the ordinary write path. Only a move
// (and a create) may write it, because only they take the tree lock and run the cycle and
// depth checks; routing "set parent_id=…" through the same checks would give the one
// operation two paths (and two lock orders) to keep in step. So a registry that makes it an
// ordinary field is refused when it is loaded rather than trusted when it is used.
func (f *Field) checkTreeField(kind Kind) error {
	if kind == KindDocument && f.Name == "parent_id" && !f.ReadOnly {
		return errors.New(`document.parent_id must keep "readonly: true": a document's parent changes only by a move ` +
			`(tandem move), which checks the tree for cycles and depth; a set could make a cycle`)
	}
	return nil
}

// TreeGroup returns the lease group of a document's parent_id: the group a move of a
// document, and a create or move under a document, must be free of (or hold the lease of).
func (r *Registry) TreeGroup() string {
	if f, ok := r.index[KindDocument]["parent_id"]; ok {
		return f.Group
	}
	return GroupEditor
}

// Fields returns the fields of kind in display order. The slice must not be modified.
func (r *Registry) Fields(kind Kind) []*Field { return r.kinds[kind] }

// Field returns the named field of kind, or an EINVALID error naming the known fields.
func (r *Registry) Field(kind Kind, name string) (*Field, error) {
	if f, ok := r.index[kind][name]; ok {
		return f, nil
	}
	if _, ok := r.index[kind]; !ok {
		return nil, Errorf(EINVALID, "unknown kind %s", Quote(string(kind)))
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
