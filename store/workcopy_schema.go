package store

import (
	"fmt"
	"slices"
	"strings"
)

// A working copy runs its source's schema. A sync takes the source's schema before it pulls
// records when the source's version is newer (WorkingCopy.TakeSchema): the copy's tables
// change as the source's did, additive and destructive changes alike (the source decided
// them), and the copy records the source's schema at the source's version. Local changes
// waiting in the outbox keep what they hold: a renamed field's values follow it to its new
// name, and an entry that no longer fits the schema (its kind or a field it changes is gone,
// a value it sets is no longer allowed) stays in the outbox, held back from the push and
// reported (Registry.Unfit), until a person settles it.

// Unfit lists why outbox entry e no longer fits the schema r: its kind is gone, it changes a
// field r does not have, or a value it sets is one r's field refuses (an enum value removed,
// a limit narrowed). Nil when it fits. A delete fits as long as its kind is there.
func (r *Registry) Unfit(e *OutboxEntry) []string {
	if !r.Has(e.Kind) {
		return []string{fmt.Sprintf("kind %s is not in the schema any more", e.Kind)}
	}
	if e.Op == CopyDelete || e.Op == CopyMove {
		return nil
	}
	names := e.Changed()
	if e.Op == CopyCreate {
		names = names[:0]
		for name := range e.After {
			names = append(names, name)
		}
		slices.Sort(names)
	}
	var out, fit []string
	for _, name := range names {
		f, err := r.Field(e.Kind, name)
		if err != nil {
			out = append(out, fmt.Sprintf("field %s.%s is not in the schema any more (the value set here: %s)", e.Kind, name, shortValue(e.After[name])))
			continue
		}
		if err := f.Check(e.After[name]); err != nil {
			out = append(out, fmt.Sprintf("%s.%s: %v", e.Kind, name, strings.TrimPrefix(err.Error(), name+": ")))
			continue
		}
		if name != ParentField {
			fit = append(fit, fmt.Sprintf("%s %s", name, shortValue(e.After[name])))
		}
	}
	if len(out) > 0 && len(fit) > 0 {
		// The change is kept or dropped whole: what still fits goes with it when it is dropped.
		out = append(out, fmt.Sprintf("the same change also sets %s (these fit the schema; dropping the change drops them too)",
			strings.Join(fit, ", ")))
	}
	return out
}

// shortValue shows v in one short line for a message.
func shortValue(v any) string {
	s := fmt.Sprintf("%q", fmt.Sprint(v))
	if n, ok := v.(int64); ok {
		s = fmt.Sprint(n)
	}
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}

// CopyKindsAfter returns the kinds a working copy holds once its schema goes from cur to
// next: the kinds it held that next still has, and, when it held every kind of cur (a clone
// of the whole store), next's new kinds too.
func CopyKindsAfter(cur, next *Registry, held []Kind) []Kind {
	all := true
	for _, k := range cur.Kinds() {
		if !slices.Contains(held, k) {
			all = false
		}
	}
	var out []Kind
	for _, k := range next.Kinds() {
		if slices.Contains(held, k) || (all && !cur.Has(k)) {
			out = append(out, k)
		}
	}
	return out
}

// Renames returns the fields d renames, per kind, old name to new.
func (d *SchemaDiff) Renames() map[Kind]map[string]string {
	out := map[Kind]map[string]string{}
	for _, c := range d.Changes {
		if c.Op != OpRenameField {
			continue
		}
		if out[c.Kind] == nil {
			out[c.Kind] = map[string]string{}
		}
		out[c.Kind][c.From] = c.Field
	}
	return out
}

// Rename moves the values of vals named in renames (old name to new) to their new names.
func (v Values) Rename(renames map[string]string) {
	for from, to := range renames {
		if x, ok := v[from]; ok {
			v[to] = x
			delete(v, from)
		}
	}
}

// CopySchemaRefusal is the message of a schema change refused on a working copy (EINVALID):
// a copy runs its source's schema, and takes the source's changes when it syncs.
const CopySchemaRefusal = "apply schema: this store is a working copy, which runs its source's schema; " +
	"apply the change to the source, and the copy's next sync brings it here"

// WriteOrder returns r's kinds so that the target of every ref comes before the kinds that
// refer to it (a copy writes a record after what it refers to), otherwise in schema order;
// kinds whose refs form a loop keep their schema order among themselves.
func (r *Registry) WriteOrder() []Kind {
	var out []Kind
	placed := map[Kind]bool{}
	left := slices.Clone(r.Kinds())
	for len(left) > 0 {
		var rest []Kind
		for _, k := range left {
			ready := true
			for _, f := range r.Fields(k) {
				if f.Type == TypeRef && f.To != "" && f.To != k && r.Has(f.To) && !placed[f.To] {
					ready = false
				}
			}
			if ready {
				out, placed[k] = append(out, k), true
			} else {
				rest = append(rest, k)
			}
		}
		if len(rest) == len(left) { // a loop: the rest in schema order
			return append(out, rest...)
		}
		left = rest
	}
	return out
}
