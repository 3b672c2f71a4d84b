package worker

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/tandem-editor/tandem/store"
)

// Task is one kind of background work: a system field derived from a record's content. The
// schema says which fields a task keeps (worker: NAME on the field, see store/sample.yaml);
// the task works on every kind that has one and does nothing on the others.
type Task struct {
	// Name is the task's name on the command line (tandem worker NAME) and in the schema.
	Name string
	// Value returns the value the task keeps for r. It is pure: the same record gives the
	// same value.
	Value func(reg *store.Registry, r *store.Record) any
}

// Fields returns the fields of kind that the task keeps: those the schema marks with
// worker: and the task's name, in display order; none when the kind has none.
func (t Task) Fields(reg *store.Registry, kind store.Kind) []*store.Field {
	var out []*store.Field
	for _, f := range reg.Fields(kind) {
		if f.Worker == t.Name {
			out = append(out, f)
		}
	}
	return out
}

// Kinds returns the kinds of the schema that have a field the task keeps, in schema order.
func (t Task) Kinds(reg *store.Registry) []store.Kind {
	var out []store.Kind
	for _, k := range reg.Kinds() {
		if len(t.Fields(reg, k)) > 0 {
			out = append(out, k)
		}
	}
	return out
}

// Derive returns the values of the fields the task keeps, as they should be for r; nil when
// r's kind has no such field.
func (t Task) Derive(reg *store.Registry, r *store.Record) store.Values {
	fs := t.Fields(reg, r.Kind)
	if len(fs) == 0 {
		return nil
	}
	v := t.Value(reg, r)
	out := make(store.Values, len(fs))
	for _, f := range fs {
		out[f.Name] = v
	}
	return out
}

// Checksum keeps the SHA-256 of a record's editor content (ContentHash) in a string field
// (worker: checksum).
var Checksum = Task{
	Name: "checksum",
	Value: func(reg *store.Registry, r *store.Record) any {
		return "sha256:" + ContentHash(reg, r)
	},
}

// Thumbnail keeps a thumbnail path in a string field (worker: thumbnail), derived from the
// record's name (its kind's first unique field, else its title: a product's sku) and its
// content hash, so the path changes whenever the content does (a cache-busting name a
// renderer would fill in).
var Thumbnail = Task{
	Name: "thumbnail",
	Value: func(reg *store.Registry, r *store.Record) any {
		name := reg.TitleField(r.Kind)
		if u := reg.UniqueFields(r.Kind); len(u) > 0 {
			name = u[0].Name
		}
		s, _ := r.Fields[name].(string)
		return fmt.Sprintf("thumbs/%s-%s.png", slug(s, string(r.Kind)), ContentHash(reg, r)[:12])
	},
}

// WordCount keeps the number of words in a record's editor text (its text fields owned by
// editors: a document's body) in an int field (worker: wordcount).
var WordCount = Task{
	Name: "wordcount",
	Value: func(reg *store.Registry, r *store.Record) any {
		n := 0
		for _, f := range reg.Fields(r.Kind) {
			if f.Type != store.TypeText || f.Owner != store.OwnerEditor {
				continue
			}
			s, _ := r.Fields[f.Name].(string)
			n += len(strings.Fields(s))
		}
		return int64(n)
	},
}

// Tasks lists every task, in the order help shows them.
var Tasks = []Task{Checksum, Thumbnail, WordCount}

// Lookup returns the task called name. EINVALID naming the known tasks if there is none.
func Lookup(name string) (Task, error) {
	var names []string
	for _, t := range Tasks {
		if t.Name == name {
			return t, nil
		}
		names = append(names, t.Name)
	}
	return Task{}, store.Errorf(store.EINVALID, "unknown worker task %q (tasks: %s)", name, strings.Join(names, ", "))
}

// ContentHash returns the hex SHA-256 of a record's editor content: every field owned by
// editors that is not read-only (a document's place in the tree is not its content), in
// registry order, each as its name and its JSON export, so no two contents share an input.
func ContentHash(reg *store.Registry, r *store.Record) string {
	h := sha256.New()
	for _, f := range reg.Fields(r.Kind) {
		if f.Owner != store.OwnerEditor || f.ReadOnly {
			continue
		}
		v, err := json.Marshal(f.Export(r.Fields[f.Name]))
		if err != nil {
			// Every registry value exports to JSON; mark the field so the hash still moves.
			v = []byte(fmt.Sprintf("%q", fmt.Sprint(r.Fields[f.Name])))
		}
		fmt.Fprintf(h, "%s\x00%d\x00%s\x00", f.Name, len(v), v)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// slug turns a name (a sku) into a safe file name part: lower-case letters, digits and
// dashes; the word empty when nothing is left of the name.
func slug(s, empty string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= 48 {
			break
		}
	}
	out := strings.TrimSuffix(b.String(), "-")
	if out == "" {
		return empty
	}
	return out
}

// stale returns the values of want that differ from r's, nil when r is up to date.
func stale(r *store.Record, want store.Values) store.Values {
	var out store.Values
	for _, name := range sortedKeys(want) {
		if !store.Equal(r.Fields[name], want[name]) {
			if out == nil {
				out = store.Values{}
			}
			out[name] = want[name]
		}
	}
	return out
}

func sortedKeys(v store.Values) []string {
	ks := make([]string, 0, len(v))
	for k := range v {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
