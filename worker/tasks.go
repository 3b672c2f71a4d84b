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

// Task is one kind of background work: a system field derived from a record's content.
type Task struct {
	// Name is the task's name on the command line (tandem worker NAME).
	Name string
	// Kinds are the record kinds the task works on.
	Kinds []store.Kind
	// Derive returns the values of the system fields the task maintains, as they should be
	// for r. It is pure: the same record gives the same values. Fields it omits are left alone.
	Derive func(reg *store.Registry, r *store.Record) store.Values
}

// Checksum writes the SHA-256 of a record's editor content (ContentHash) to its checksum field.
var Checksum = Task{
	Name:  "checksum",
	Kinds: []store.Kind{store.KindProduct, store.KindDocument},
	Derive: func(reg *store.Registry, r *store.Record) store.Values {
		return store.Values{"checksum": "sha256:" + ContentHash(reg, r)}
	},
}

// Thumbnail writes a product's thumbnail path, derived from its sku and content hash, so the
// path changes whenever the content does (a cache-busting name a renderer would fill in).
var Thumbnail = Task{
	Name:  "thumbnail",
	Kinds: []store.Kind{store.KindProduct},
	Derive: func(reg *store.Registry, r *store.Record) store.Values {
		sku, _ := r.Fields["sku"].(string)
		return store.Values{"thumbnail": fmt.Sprintf("thumbs/%s-%s.png", slug(sku), ContentHash(reg, r)[:12])}
	},
}

// WordCount writes the number of words in a document's body to its word_count field.
var WordCount = Task{
	Name:  "wordcount",
	Kinds: []store.Kind{store.KindDocument},
	Derive: func(reg *store.Registry, r *store.Record) store.Values {
		body, _ := r.Fields["body"].(string)
		return store.Values{"word_count": int64(len(strings.Fields(body)))}
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

// slug turns a sku into a safe file name part: lower-case letters, digits and dashes.
func slug(s string) string {
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
		return "product"
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
