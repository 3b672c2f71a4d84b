package store

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/tandem-editor/tandem/internal/safe"
)

// A store's schema is data: the kinds of record it holds, each with its table, title field,
// traits and fields, written as YAML (sample.yaml is one) and kept in the store with a
// version, so every client of a shared store reads the same one. A Registry is a schema
// parsed and checked; the stores read theirs when they open.

// KindDef is one kind of a schema: its table, the field lists and messages show, whether
// its records form a tree, and its fields in form order.
type KindDef struct {
	Name   Kind     `yaml:"-"`
	Table  string   `yaml:"table"`
	Title  string   `yaml:"title,omitempty"`
	Tree   bool     `yaml:"tree,omitempty"`
	Fields []*Field `yaml:"fields"`

	// Where the schema file has the kind's name, its table: and its title: (0 when it does
	// not), for messages.
	line, tableLine, titleLine int
}

// Registry is a checked schema: its kinds in order and, for every kind, its fields in display
// order. It is immutable once loaded and safe for concurrent use.
type Registry struct {
	order   []Kind
	defs    map[Kind]*KindDef
	kinds   map[Kind][]*Field
	index   map[Kind]map[string]*Field
	folded  map[Kind][]string // FoldedFields
	version int64
	legacy  bool

	yamlOnce sync.Once
	yaml     []byte // parsed from a field registry of the form before schemas (kind: [fields])
}

// DefaultRegistry returns the sample schema embedded in the binary (store/sample.yaml): the
// schema of a store that has none recorded.
func DefaultRegistry() *Registry {
	r, err := ParseRegistry("sample.yaml (embedded)", sampleSchemaYAML)
	if err != nil {
		panic(err) // the embedded file is covered by tests; a broken one is a build error
	}
	return r
}

// SampleRegistry returns the sample schema as DefaultRegistry does, parsed once per
// process and shared: for the stores' own use (their sample tables, the schema of a store
// until its own is read), which never change a registry. Callers that might change what it
// holds take DefaultRegistry's copy.
var SampleRegistry = sync.OnceValue(DefaultRegistry)

// MaxRegistryBytes bounds a schema file: a file of any size would otherwise be read whole
// into memory (a path like /dev/zero never ends).
const MaxRegistryBytes = 1 << 20

// Limits of a schema, so that a table stays within what both databases allow.
const (
	MaxKinds         = 200
	MaxFieldsPerKind = 400
	// MaxSearchFields bounds the searched fields of a whole schema: each has its own
	// table of folded text and full-text index, and a database opens (SQLite parses its
	// schema on every connection) and makes them in time that grows with their number.
	MaxSearchFields = 512
	maxNameLen      = 48
	maxTableBytes   = 63 // PostgreSQL cuts longer names short (NAMEDATALEN - 1)
)

// LoadRegistry reads a schema file, or returns the sample schema when path is empty. A file
// over MaxRegistryBytes is refused (EINVALID) after reading at most one byte more.
func LoadRegistry(path string) (*Registry, error) {
	if path == "" {
		return DefaultRegistry(), nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, Errorf(EINVALID, "read schema: %v", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxRegistryBytes+1))
	if err != nil {
		return nil, Errorf(EINVALID, "read schema %s: %v", path, err)
	}
	if len(data) > MaxRegistryBytes {
		return nil, Errorf(EINVALID, "schema %s is over the limit of %d bytes (1 MiB)", path, MaxRegistryBytes)
	}
	return ParseRegistry(path, data)
}

var (
	fieldKeys = []string{"name", "label", "type", "to", "owner", "rule", "group", "required", "readonly",
		"unique", "search", "sort", "max_chars", "max_bytes", "max_items", "values", "default", "rename_from", "worker"}
	kindKeys  = []string{"table", "title", "tree", "fields"}
	identRE   = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	metaNames = []string{"id", "version", "updated_at", "updated_by"}
	// reservedTables are tandem's own tables (and prefixes of them) on either store.
	reservedTables   = []string{"history", "changes", "idempotency", "leases", "lease_grants", "presence", "store_meta", "schema_migrations", "search_pending", "change_counter"}
	reservedPrefixes = []string{"tandem_", "wc_", "sqlite_", "pg_", "changes_", "history_"}
	// workerTypes are the tasks a field may name with worker: (package worker runs them),
	// each with the type of the field it keeps.
	workerTypes = map[string]Type{"checksum": TypeString, "thumbnail": TypeString, "wordcount": TypeInt}
)

// ParseRegistry parses and checks a schema (see sample.yaml). A file of the form before
// schemas (kind: [fields], kinds product and document only) is read as the sample schema
// with its labels, owners, rules, groups, limits and search flags. Errors (EINVALID) name
// the file, the line and the problem.
func ParseRegistry(name string, data []byte) (*Registry, error) {
	bad := func(line int, format string, args ...any) error {
		return Errorf(EINVALID, "schema %s:%d: %s", name, line, fmt.Sprintf(format, args...))
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, Errorf(EINVALID, "schema %s: %v", name, err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, bad(1, "want a mapping with kinds: (see `tandem schema show` for an example)")
	}
	root := doc.Content[0]
	if len(root.Content) >= 2 && root.Content[0].Value == "kinds" {
		if len(root.Content) > 2 {
			return nil, bad(root.Content[2].Line, "unknown key %q (a schema has only kinds:)", root.Content[2].Value)
		}
		return parseKinds(root.Content[1], bad)
	}
	return parseLegacy(root, bad)
}

type badFunc func(line int, format string, args ...any) error

func parseKinds(kinds *yaml.Node, bad badFunc) (*Registry, error) {
	if kinds.Kind != yaml.MappingNode || len(kinds.Content) == 0 {
		return nil, bad(kinds.Line, "kinds: want a mapping from kind name to its table, title and fields")
	}
	r := newRegistry()
	for i := 0; i+1 < len(kinds.Content); i += 2 {
		kn, body := kinds.Content[i], kinds.Content[i+1]
		kind := Kind(kn.Value)
		if err := checkIdent("kind", kn.Value); err != nil {
			return nil, bad(kn.Line, "%s", err)
		}
		if _, dup := r.defs[kind]; dup {
			return nil, bad(kn.Line, "kind %q listed twice", kind)
		}
		if body.Kind != yaml.MappingNode {
			return nil, bad(body.Line, "kind %q: want a mapping with fields: (and table, title, tree)", kind)
		}
		def := &KindDef{Name: kind, line: kn.Line}
		var fields *yaml.Node
		given := map[string]bool{}
		for j := 0; j+1 < len(body.Content); j += 2 {
			k, v := body.Content[j], body.Content[j+1]
			if given[k.Value] {
				return nil, bad(k.Line, "kind %q: %s given twice", kind, k.Value)
			}
			given[k.Value] = true
			switch k.Value {
			case "table":
				if v.Kind != yaml.ScalarNode {
					return nil, bad(v.Line, "kind %q: table: want a name", kind)
				}
				def.Table, def.tableLine = v.Value, v.Line
			case "title":
				if v.Kind != yaml.ScalarNode {
					return nil, bad(v.Line, "kind %q: title: want a field name", kind)
				}
				def.Title, def.titleLine = v.Value, v.Line
			case "tree":
				if err := v.Decode(&def.Tree); err != nil {
					return nil, bad(v.Line, "kind %q: tree: %v", kind, err)
				}
			case "fields":
				fields = v
			default:
				return nil, bad(k.Line, "kind %q: unknown key %q (known: %s)", kind, k.Value, strings.Join(kindKeys, ", "))
			}
		}
		if fields == nil || fields.Kind != yaml.SequenceNode || len(fields.Content) == 0 {
			return nil, bad(kn.Line, "kind %q: want fields: with at least one field", kind)
		}
		for _, fn := range fields.Content {
			f, err := decodeField(fn, bad)
			if err != nil {
				return nil, err
			}
			def.Fields = append(def.Fields, f)
		}
		if err := r.add(def); err != nil {
			return nil, bad(lineOf(err, kn.Line), "%s", err)
		}
	}
	if err := r.finish(); err != nil {
		return nil, bad(lineOf(err, kinds.Line), "%s", err)
	}
	return r, nil
}

func decodeField(fn *yaml.Node, bad badFunc) (*Field, error) {
	if fn.Kind != yaml.MappingNode {
		return nil, bad(fn.Line, "want a field as a mapping with name, type, owner and rule")
	}
	for j := 0; j+1 < len(fn.Content); j += 2 {
		if k := fn.Content[j]; !slices.Contains(fieldKeys, k.Value) {
			return nil, bad(k.Line, "unknown key %q (known: %s)", k.Value, strings.Join(fieldKeys, ", "))
		}
	}
	f := new(Field)
	if err := fn.Decode(f); err != nil {
		return nil, bad(fn.Line, "%v", err)
	}
	f.line = fn.Line
	return f, nil
}

// parseLegacy reads a field registry of the form before schemas: the sample's kinds, each a
// list of its fields, which may change labels, owners, rules, groups, limits and search
// flags but not the set of fields or their types.
func parseLegacy(root *yaml.Node, bad badFunc) (*Registry, error) {
	sample := DefaultRegistry()
	r := newRegistry()
	r.legacy = true
	for i := 0; i+1 < len(root.Content); i += 2 {
		kn, list := root.Content[i], root.Content[i+1]
		kind := Kind(kn.Value)
		sd, ok := sample.defs[kind]
		if !ok {
			return nil, bad(kn.Line, "unknown kind %s (a registry without kinds: has product and document; a schema of your own puts its kinds under kinds:)", Quote(kn.Value))
		}
		if _, dup := r.defs[kind]; dup {
			return nil, bad(kn.Line, "kind %q listed twice", kind)
		}
		if list.Kind != yaml.SequenceNode {
			return nil, bad(list.Line, "kind %q: want a list of fields", kind)
		}
		def := &KindDef{Name: kind, Table: sd.Table, Title: sd.Title, Tree: sd.Tree}
		for _, fn := range list.Content {
			f, err := decodeField(fn, bad)
			if err != nil {
				return nil, err
			}
			sf, ok := sample.index[kind][f.Name]
			switch {
			case f.Name == "":
				return nil, bad(fn.Line, "field without a name")
			case !ok:
				return nil, bad(fn.Line, "unknown field %s.%s", kind, f.Name)
			case f.Type != sf.Type:
				return nil, bad(fn.Line, "%s.%s has type %s, cannot be %s", kind, f.Name, sf.Type, Quote(string(f.Type)))
			}
			searchSet := false
			for j := 0; j < len(fn.Content); j += 2 {
				searchSet = searchSet || fn.Content[j].Value == "search"
			}
			if !searchSet {
				f.Search = sf.Search
			}
			if f.Search && !slices.Contains(foldedFields[kind], f.Name) {
				return nil, bad(fn.Line, "%s.%s: search needs a folded column, which only %s have; a schema (kinds:) may search any text field",
					kind, f.Name, strings.Join(foldedFields[kind], ", "))
			}
			f.Unique, f.Sort, f.To, f.Worker = sf.Unique, sf.Sort, sf.To, sf.Worker
			f.Required = f.Required || sf.Unique // as CheckUniqueValue always made it
			def.Fields = append(def.Fields, f)
		}
		for _, sf := range sd.Fields {
			if !slices.ContainsFunc(def.Fields, func(f *Field) bool { return f.Name == sf.Name }) {
				return nil, bad(list.Line, "%s.%s is missing (every column must be listed)", kind, sf.Name)
			}
		}
		if err := r.add(def); err != nil {
			return nil, bad(lineOf(err, kn.Line), "%s", err)
		}
	}
	for _, k := range sample.order {
		if _, ok := r.defs[k]; !ok {
			return nil, bad(1, "kind %q is missing", k)
		}
	}
	if err := r.finish(); err != nil {
		return nil, bad(1, "%s", err)
	}
	return r, nil
}

// lineError is an error of a schema that knows the line of the file it is about.
type lineError struct {
	line int
	err  error
}

func (e lineError) Error() string { return e.err.Error() }

// lineOf returns the line err names, else def.
func lineOf(err error, def int) int {
	if le, ok := err.(lineError); ok && le.line > 0 {
		return le.line
	}
	return def
}

func newRegistry() *Registry {
	return &Registry{defs: map[Kind]*KindDef{}, kinds: map[Kind][]*Field{}, index: map[Kind]map[string]*Field{},
		folded: map[Kind][]string{}}
}

func checkIdent(what, s string) error {
	if !identRE.MatchString(s) || len(s) > maxNameLen {
		return fmt.Errorf("%s name %s: want lower-case letters, digits and _, starting with a letter, at most %d characters",
			what, Quote(s), maxNameLen)
	}
	return nil
}

// add checks one kind on its own and adds it.
func (r *Registry) add(def *KindDef) error {
	kind := def.Name
	if len(r.order) == MaxKinds {
		return fmt.Errorf("more than %d kinds", MaxKinds)
	}
	if len(def.Fields) > MaxFieldsPerKind {
		return fmt.Errorf("kind %s has %d fields (at most %d)", kind, len(def.Fields), MaxFieldsPerKind)
	}
	if def.Table == "" {
		def.Table = string(kind) + "s"
	}
	if err := checkIdent("table", def.Table); err != nil {
		return lineError{def.tableLine, err}
	}
	if slices.Contains(reservedTables, def.Table) || strings.HasSuffix(def.Table, "_search") || strings.HasSuffix(def.Table, "_fts") {
		return lineError{def.tableLine, fmt.Errorf("kind %s: table %s is one of tandem's own names", kind, Quote(def.Table))}
	}
	for _, p := range reservedPrefixes {
		if strings.HasPrefix(def.Table, p) {
			return lineError{def.tableLine, fmt.Errorf("kind %s: table %s starts with %s, which tandem keeps for its own tables", kind, Quote(def.Table), p)}
		}
	}
	if def.Tree && !slices.ContainsFunc(def.Fields, func(f *Field) bool { return f.Name == ParentField }) {
		def.Fields = append([]*Field{{Name: ParentField, Type: TypeRef, Owner: OwnerEditor, Rule: RuleScalar,
			ReadOnly: true, Label: "parent"}}, def.Fields...)
	}
	r.index[kind] = map[string]*Field{}
	for _, f := range def.Fields {
		if err := f.check(kind, def.Tree); err != nil {
			return lineError{f.line, err}
		}
		if _, dup := r.index[kind][f.Name]; dup {
			return lineError{f.line, fmt.Errorf("%s.%s listed twice", kind, f.Name)}
		}
		r.index[kind][f.Name] = f
	}
	// Derived columns must not meet a field: sku_key next to a field named sku_key would be
	// one column with two meanings.
	for _, f := range def.Fields {
		for _, derived := range []struct {
			on   bool
			name string
		}{{f.Unique, UniqueKeyColumn(f.Name)}, {f.Search, FoldColumn(f.Name)}} {
			if other, clash := r.index[kind][derived.name]; derived.on && clash {
				return lineError{other.line, fmt.Errorf("%s.%s: the column %s keeps %s's key or folded copy; name the field otherwise",
					kind, derived.name, derived.name, f.Name)}
			}
		}
	}
	if def.Title == "" {
		for _, f := range def.Fields {
			if f.Type == TypeString {
				def.Title = f.Name
				break
			}
		}
	} else if f, ok := r.index[kind][def.Title]; !ok || (f.Type != TypeString && f.Type != TypeText) {
		return lineError{def.titleLine, fmt.Errorf("kind %s: title %s must name one of its string fields", kind, Quote(def.Title))}
	}
	r.order = append(r.order, kind)
	r.defs[kind] = def
	r.kinds[kind] = def.Fields
	r.folded[kind] = r.foldedOf(kind)
	return nil
}

// finish checks what spans kinds: refs name kinds of the schema, tables and their side
// tables do not collide.
func (r *Registry) finish() error {
	searched := 0
	for _, k := range r.order {
		for _, f := range r.kinds[k] {
			if f.Search {
				if searched++; searched > MaxSearchFields {
					return lineError{f.line, fmt.Errorf("%s.%s: more than %d searched fields in the schema; search fewer (each has its own index)",
						k, f.Name, MaxSearchFields)}
				}
			}
		}
	}
	tables := map[string]string{}
	claim := func(table, by string, line int) error {
		if len(table) > maxTableBytes {
			return lineError{line, fmt.Errorf("%s would be %s, longer than %d bytes (PostgreSQL's limit for a name); shorten the names it is made of",
				by, table, maxTableBytes)}
		}
		if other, ok := tables[table]; ok {
			return lineError{line, fmt.Errorf("%s and %s would both use the table %s", other, by, table)}
		}
		tables[table] = by
		return nil
	}
	byTable := map[string]Kind{}
	for _, k := range r.order {
		byTable[r.defs[k].Table] = k
	}
	for _, k := range r.order {
		def := r.defs[k]
		// ParseKind takes a kind's name or its table's: one word must not name two kinds.
		if o, ok := byTable[string(k)]; ok && o != k {
			return lineError{def.line, fmt.Errorf("kind %s has the name of kind %s's table, and a kind is named by either; rename one", k, o)}
		}
		if err := claim(def.Table, "kind "+string(k), cmp.Or(def.tableLine, def.line)); err != nil {
			return err
		}
		for _, f := range def.Fields {
			if f.Type == TypeRef {
				if f.To == "" {
					f.To = k
				}
				if _, ok := r.defs[f.To]; !ok {
					return lineError{f.line, fmt.Errorf("%s.%s: to %s is not a kind of this schema (it has %s)", k, f.Name, Quote(string(f.To)), r.kindList())}
				}
				if f.Name == ParentField && def.Tree && f.To != k {
					return lineError{f.line, fmt.Errorf("%s.%s: a tree's parent is a record of the same kind", k, f.Name)}
				}
			}
			if f.Search {
				if err := claim(def.Table+"_"+f.Name+"_search", k.String()+"."+f.Name+"'s search table", f.line); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// TreeGroup returns the lease group of a tree kind's parent_id: the group a move of a
// record of kind, and a create or move under one, must be free of (or hold the lease of).
func (r *Registry) TreeGroup(kind Kind) string {
	if f, ok := r.index[kind][ParentField]; ok {
		return f.Group
	}
	return GroupEditor
}

func (f *Field) check(kind Kind, tree bool) error {
	if err := checkIdent("field", f.Name); err != nil {
		return fmt.Errorf("%s: %w", kind, err)
	}
	if slices.Contains(metaNames, f.Name) {
		return fmt.Errorf("%s.%s: %s is a column tandem keeps itself", kind, f.Name, f.Name)
	}
	switch f.Type {
	case TypeString, TypeText, TypeInt, TypeMoney, TypeSet, TypeEnum, TypeTime, TypeRef:
	default:
		return fmt.Errorf("%s.%s: type %s (want string, text, int, money, set, enum, time or ref)", kind, f.Name, Quote(string(f.Type)))
	}
	if f.To != "" && f.Type != TypeRef {
		return fmt.Errorf("%s.%s: to: is for ref fields", kind, f.Name)
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
	if f.Search && f.Type != TypeString && f.Type != TypeText && f.Type != TypeSet && f.Type != TypeEnum {
		return fmt.Errorf("%s.%s: only string, text, set and enum fields can be searched", kind, f.Name)
	}
	if f.Unique && f.Type != TypeString {
		return fmt.Errorf("%s.%s: only string fields can be unique", kind, f.Name)
	}
	if f.Unique && !f.Required {
		// A create without a value would be refused anyway (an empty key is no value, see
		// CheckUniqueValue), with a message about an empty value the writer never gave.
		return fmt.Errorf(`%s.%s: a unique field must be required ("required: true"): records without a value would all share the empty one`, kind, f.Name)
	}
	if f.Sort && f.Type != TypeString && f.Type != TypeInt && f.Type != TypeMoney && f.Type != TypeEnum && f.Type != TypeTime {
		return fmt.Errorf("%s.%s: only string, int, money, enum and time fields can be sorted by", kind, f.Name)
	}
	if f.Worker != "" {
		want, ok := workerTypes[f.Worker]
		switch {
		case !ok:
			return fmt.Errorf("%s.%s: worker %s (want checksum, thumbnail or wordcount)", kind, f.Name, Quote(f.Worker))
		case f.Type != want:
			return fmt.Errorf("%s.%s: worker %s keeps a field of type %s, not %s", kind, f.Name, f.Worker, want, f.Type)
		case !f.Writable(RoleSystem) || f.ReadOnly:
			return fmt.Errorf("%s.%s: worker %s writes as system; the field must be owned by system or shared", kind, f.Name, f.Worker)
		}
	}
	if f.Type == TypeEnum && len(f.Values) == 0 {
		return fmt.Errorf("%s.%s: an enum needs values", kind, f.Name)
	}
	for _, v := range f.Values {
		// A value with a control character could never be stored (Check refuses it), and
		// pickers show the values as they are.
		if safe.Escapes(v) {
			return fmt.Errorf("%s.%s: value %s: want one line of printable text", kind, f.Name, Quote(safe.Line(v)))
		}
	}
	if f.MaxChars < 0 || f.MaxBytes < 0 || f.MaxItems < 0 {
		return fmt.Errorf("%s.%s: limits cannot be negative", kind, f.Name)
	}
	// A tree's parent changes only by a move, which takes the tree lock and checks for
	// cycles and depth; routing "set parent_id=…" through the ordinary save would give the
	// one operation two paths to keep in step. So it must stay readonly.
	if tree && f.Name == ParentField && (f.Type != TypeRef || !f.ReadOnly) {
		return fmt.Errorf(`%s.%s must be a ref with "readonly: true": a record's parent changes only by a move, `+
			`which checks the tree for cycles and depth; a set could make a cycle`, kind, f.Name)
	}
	if f.Group == "" {
		f.Group = GroupEditor
		if f.Owner == OwnerSystem {
			f.Group = GroupSystem
		}
	}
	if err := checkIdent("group", f.Group); err != nil {
		return fmt.Errorf("%s.%s: %w", kind, f.Name, err)
	}
	if f.Label == "" {
		f.Label = strings.ReplaceAll(f.Name, "_", " ")
	}
	if safe.Escapes(f.Label) {
		// Forms, diffs and messages show a label as it is: a control character or a bidi
		// override in one would reach every terminal that opens the store.
		return fmt.Errorf("%s.%s: label %s: want one line of printable text", kind, f.Name, Quote(safe.Line(f.Label)))
	}
	if f.Default != "" {
		if f.Type == TypeRef || f.Unique {
			return fmt.Errorf("%s.%s: a ref or unique field has no default", kind, f.Name)
		}
		v, err := f.Parse(f.Default)
		if err == nil {
			err = f.Check(v)
		}
		if err != nil {
			return fmt.Errorf("%s.%s: default %s: %v", kind, f.Name, Quote(f.Default), err)
		}
		f.def = v
	}
	return nil
}

// String returns the kind's name.
func (k Kind) String() string { return string(k) }

// Kinds returns the schema's kinds in order. The slice must not be modified.
func (r *Registry) Kinds() []Kind { return r.order }

// Def returns the definition of kind, or nil when the schema has no such kind.
func (r *Registry) Def(kind Kind) *KindDef { return r.defs[kind] }

// Has reports whether the schema has kind.
func (r *Registry) Has(kind Kind) bool { _, ok := r.defs[kind]; return ok }

// Tree reports whether kind's records form a tree (a parent_id moved by MoveRecord).
func (r *Registry) Tree(kind Kind) bool { d := r.defs[kind]; return d != nil && d.Tree }

// TitleField returns the field that names a record of kind in lists and messages ("" when
// the kind has no string field).
func (r *Registry) TitleField(kind Kind) string {
	if d := r.defs[kind]; d != nil {
		return d.Title
	}
	return ""
}

// TitleOf returns rec's title: the value of its kind's title field.
func (r *Registry) TitleOf(rec *Record) string {
	s, _ := rec.Fields[r.TitleField(rec.Kind)].(string)
	return s
}

// UniqueFields returns the fields of kind whose values no two records may share, in display
// order.
func (r *Registry) UniqueFields(kind Kind) []*Field {
	var out []*Field
	for _, f := range r.kinds[kind] {
		if f.Unique {
			out = append(out, f)
		}
	}
	return out
}

// IsKeyColumn reports whether col is the key column (UniqueKeyColumn) of one of kind's
// unique fields.
func (r *Registry) IsKeyColumn(kind Kind, col string) bool {
	for _, f := range r.UniqueFields(kind) {
		if UniqueKeyColumn(f.Name) == col {
			return true
		}
	}
	return false
}

// UniqueKeyColumn returns the column that holds a unique field's key (SKUKey of its value)
// under a UNIQUE index: sku_key for sku.
func UniqueKeyColumn(field string) string { return field + "_key" }

// Refs returns the ref fields of every kind that point to kind (a tree's parent_id among
// them), as kind and field: where a delete looks for records that still refer to one.
func (r *Registry) Refs(to Kind) []FieldOf {
	var out []FieldOf
	for _, k := range r.order {
		for _, f := range r.kinds[k] {
			if f.Type == TypeRef && f.To == to && !(k == to && f.Name == ParentField && r.Tree(k)) {
				out = append(out, FieldOf{Kind: k, Field: f})
			}
		}
	}
	return out
}

// FieldOf is a field with the kind it belongs to.
type FieldOf struct {
	Kind  Kind
	Field *Field
}

// Version returns the version of the schema in its store (0 for one not read from a store).
func (r *Registry) Version() int64 { return r.version }

// WithVersion returns a copy of r at version v: what a store hands out after reading its
// schema.
func (r *Registry) WithVersion(v int64) *Registry {
	c := &Registry{order: r.order, defs: r.defs, kinds: r.kinds, index: r.index, folded: r.folded,
		version: v, legacy: r.legacy}
	return c
}

// Legacy reports whether r was read from a field registry of the form before schemas.
func (r *Registry) Legacy() bool { return r.legacy }

// YAML returns the schema in its file form, every default spelled out (table, title,
// groups, labels): what a store keeps and `schema show` prints. Parsing it gives the same
// schema.
func (r *Registry) YAML() []byte {
	r.yamlOnce.Do(func() { r.yaml = r.encode() })
	return r.yaml
}

// encode writes the schema by hand: yaml.v3's encoder takes most of a second for a schema
// of 50 kinds of 40 fields. Every string is written plain only where YAML reads it back as
// the same string, else double-quoted (Go's escapes are YAML's).
func (r *Registry) encode() []byte {
	var b bytes.Buffer
	b.WriteString("kinds:\n")
	for _, k := range r.order {
		d := r.defs[k]
		fmt.Fprintf(&b, "  %s:\n    table: %s\n", yamlString(string(k)), yamlString(d.Table))
		if d.Title != "" {
			fmt.Fprintf(&b, "    title: %s\n", yamlString(d.Title))
		}
		if d.Tree {
			b.WriteString("    tree: true\n")
		}
		b.WriteString("    fields:\n")
		for _, f := range d.Fields {
			b.WriteString("      - {")
			sep := ""
			kv := func(key, val string) {
				b.WriteString(sep + key + ": " + val)
				sep = ", "
			}
			str := func(key, val string) {
				if val != "" {
					kv(key, yamlString(val))
				}
			}
			flag := func(key string, on bool) {
				if on {
					kv(key, "true")
				}
			}
			num := func(key string, n int) {
				if n != 0 {
					kv(key, strconv.Itoa(n))
				}
			}
			kv("name", yamlString(f.Name))
			str("label", f.Label)
			str("type", string(f.Type))
			str("to", string(f.To))
			str("owner", string(f.Owner))
			str("rule", string(f.Rule))
			str("group", f.Group)
			flag("required", f.Required)
			flag("readonly", f.ReadOnly)
			flag("unique", f.Unique)
			flag("search", f.Search)
			flag("sort", f.Sort)
			num("max_chars", f.MaxChars)
			num("max_bytes", f.MaxBytes)
			num("max_items", f.MaxItems)
			if len(f.Values) > 0 {
				vs := make([]string, len(f.Values))
				for i, v := range f.Values {
					vs[i] = yamlString(v)
				}
				kv("values", "["+strings.Join(vs, ", ")+"]")
			}
			str("default", f.Default)
			str("rename_from", f.RenameFrom)
			str("worker", f.Worker)
			b.WriteString("}\n")
		}
	}
	return b.Bytes()
}

var (
	plainYAML = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_ ./-]*[A-Za-z0-9_./-]$|^[A-Za-z_]$`)
	yamlWords = regexp.MustCompile(`^(?i:y|n|yes|no|on|off|true|false|null)$`)
)

// yamlString writes s as a YAML scalar that reads back as the string s: plain when it
// matches plainYAML and is none of yamlWords. The test is written out (the regular
// expressions were half of what reading a stored schema cost); TestYAMLStringPlain holds it
// to them.
func yamlString(s string) string {
	if plainString(s) && !yamlWord(s) {
		return s
	}
	return strconv.Quote(s)
}

// yamlWord reports whether s matches yamlWords.
func yamlWord(s string) bool {
	if len(s) > 5 {
		return false
	}
	switch strings.ToLower(s) {
	case "y", "n", "yes", "no", "on", "off", "true", "false", "null":
		return true
	}
	return false
}

// plainString reports whether s matches plainYAML.
func plainString(s string) bool {
	letter := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' }
	inner := func(c byte) bool { return letter(c) || c >= '0' && c <= '9' || c == '.' || c == '/' || c == '-' }
	if s == "" || !letter(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !inner(s[i]) && (s[i] != ' ' || i == len(s)-1) {
			return false
		}
	}
	return true
}

// Same reports whether r and o describe the same schema (their versions aside).
func (r *Registry) Same(o *Registry) bool { return bytes.Equal(r.YAML(), o.YAML()) }

// CheckOverlay refuses (EINVALID) a registry that changes what base's tables hold: the kinds,
// their tables and traits, the set of fields and their types, unique and sort flags. Such a
// registry may change only labels, owners, rules, groups, limits and search flags of fields
// that have a folded column already: what a store can follow without a schema change.
func (r *Registry) CheckOverlay(base *Registry) error {
	if !slices.Equal(r.order, base.order) {
		return Errorf(EINVALID, "the kinds %s differ from the store's (%s): a change of kinds is a schema change", r.kindList(), base.kindList())
	}
	for _, k := range r.order {
		d, b := r.defs[k], base.defs[k]
		if d.Table != b.Table || d.Tree != b.Tree || d.Title != b.Title {
			return Errorf(EINVALID, "kind %s: its table, title or tree differ from the store's: that is a schema change", k)
		}
		if len(d.Fields) != len(b.Fields) {
			return Errorf(EINVALID, "kind %s: %d fields where the store has %d: adding or dropping fields is a schema change", k, len(d.Fields), len(b.Fields))
		}
		for _, f := range d.Fields {
			bf, ok := base.index[k][f.Name]
			switch {
			case !ok:
				return Errorf(EINVALID, "unknown field %s.%s: adding a field is a schema change", k, f.Name)
			case f.Type != bf.Type || f.To != bf.To || f.Unique != bf.Unique || f.Sort != bf.Sort:
				return Errorf(EINVALID, "%s.%s: its type, target, unique or sort flag differ from the store's: that is a schema change", k, f.Name)
			case f.Search && !slices.Contains(base.folded[k], f.Name):
				return Errorf(EINVALID, "%s.%s: searching a field that has no folded column is a schema change", k, f.Name)
			}
		}
	}
	return nil
}
