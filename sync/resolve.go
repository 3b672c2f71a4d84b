package sync

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/tandem-editor/tandem/merge"
	"github.com/tandem-editor/tandem/store"
)

// Picks are a person's answers to a conflict: for each field, "mine", "theirs", "base", or a
// value in the field's text form.
type Picks map[string]string

// Resolve closes the conflict of a record with picks, which must answer every colliding
// field; fields that merged cleanly keep their merge, and a pick may also override one. The
// result is queued to be pushed at the next sync, version-checked against the source's
// version the conflict saw. EINVALID (nothing changed) for a field without an answer, an
// unknown field or a bad value; ENOTFOUND when the record has no conflict.
//
// A conflict whose record the source deleted (CopyConflict.Gone) has nothing to resolve
// against: answering theirs for every field given accepts the delete, and the local record
// goes with its edit (Resolve returns nil values); any other answer is refused
// (store.GoneFromSource) and the edit stays until the source restores the record.
func Resolve(ctx context.Context, wc store.WorkingCopy, kind store.Kind, id int64, picks Picks) (store.Values, error) {
	c, err := findConflict(ctx, wc, kind, id)
	if err != nil {
		return nil, err
	}
	if c.Op == store.CopyDelete {
		return nil, store.Errorf(store.EINVALID, "%s %d: %s; the answer is for the whole record: mine deletes it on the source too, theirs keeps the source's record", kind, id, c.Reason)
	}
	if c.Gone() {
		for _, p := range picks {
			if p != "theirs" {
				return nil, store.GoneFromSource(kind, id)
			}
		}
		if len(picks) == 0 {
			return nil, store.GoneFromSource(kind, id)
		}
		if err := wc.DropRecord(ctx, kind, id); err != nil {
			return nil, err
		}
		return nil, nil
	}
	reg := wc.Registry()
	vals, err := Resolution(reg, c, picks)
	if err != nil {
		return nil, err
	}
	if err := wc.ResolveConflict(ctx, kind, id, vals); err != nil {
		return nil, err
	}
	return vals, nil
}

// ResolveDelete answers the conflict of a local delete the source met with a changed record
// (or a document with children the copy did not have): pick "mine" deletes the record on
// the source at the version the conflict saw, at the next sync and version-checked again;
// "theirs" keeps the source's record, which the next sync brings back into the copy.
// A delete the source refused as such (a document with children the copy did not have)
// takes only theirs: the same delete would be refused again, and the person should see what
// the copy lacked before deleting it. EINVALID for another pick or a conflict that is not a
// delete's, ENOTFOUND when the record has no conflict.
func ResolveDelete(ctx context.Context, wc store.WorkingCopy, kind store.Kind, id int64, pick string) error {
	c, err := findConflict(ctx, wc, kind, id)
	if err != nil {
		return err
	}
	if c.Op != store.CopyDelete {
		return store.Errorf(store.EINVALID, "%s %d's conflict is not about a delete (%s): answer it field by field", kind, id, c.Reason)
	}
	switch pick {
	case "theirs":
	case "mine":
		if !strings.Contains(c.Reason, store.DeletedHere) {
			// Refused by the source as it is (a document with children the copy did not
			// have): the same delete would be refused again.
			return store.Errorf(store.EINVALID, "%s %d: the source refused the delete (%s). Resolve with theirs: the next sync brings "+
				"the record and what the copy lacked into the copy; then delete again there, seeing all of it", kind, id, c.Reason)
		}
	default:
		return store.Errorf(store.EINVALID, "%s %d was deleted here and changed on the source: answer mine (delete it there too) or theirs (keep the source's record), not %q", kind, id, pick)
	}
	return wc.ResolveDelete(ctx, kind, id, pick == "mine")
}

// FindConflict returns the open conflict of a record; ENOTFOUND when it has none.
func FindConflict(ctx context.Context, wc store.WorkingCopy, kind store.Kind, id int64) (*store.CopyConflict, error) {
	return findConflict(ctx, wc, kind, id)
}

func findConflict(ctx context.Context, wc store.WorkingCopy, kind store.Kind, id int64) (*store.CopyConflict, error) {
	cs, err := wc.Conflicts(ctx)
	if err != nil {
		return nil, err
	}
	for i := range cs {
		if cs[i].Kind == kind && cs[i].ID == id {
			return &cs[i], nil
		}
	}
	return nil, store.Errorf(store.ENOTFOUND, "%s %d has no conflict (tandem status lists them)", kind, id)
}

// Merge returns the three-way merge a conflict stands for: the merge view shows it, and
// Resolution fills it in.
func Merge(reg *store.Registry, c *store.CopyConflict) *merge.RecordResult {
	theirs := c.Theirs
	if theirs == nil {
		theirs = c.Base // not on the source: only mine has something to say
	}
	m := merge.Records(reg, c.Kind, c.Base, c.Mine, theirs)
	if len(c.Fields) > 0 {
		for _, f := range m.Fields {
			if f.State != merge.FieldConflict && contains(c.Fields, f.Field.Name) && !store.Equal(f.Mine, f.Theirs) {
				// A refusal of the source (a cycle, a taken sku) makes a field a conflict
				// even where the values alone would merge.
				f.State = merge.FieldConflict
			}
		}
	}
	return m
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// Resolution applies picks to conflict c and returns every value the record gets.
func Resolution(reg *store.Registry, c *store.CopyConflict, picks Picks) (store.Values, error) {
	m := Merge(reg, c)
	known := map[string]*merge.FieldMerge{}
	for _, f := range m.Fields {
		known[f.Field.Name] = f
	}
	out := store.Values{}
	names := make([]string, 0, len(picks))
	for name := range picks {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fm, ok := known[name]
		if !ok {
			return nil, store.Errorf(store.EINVALID, "%s %d: %s is not a field of this conflict (it collides on %s)", c.Kind, c.ID, name, strings.Join(colliding(m), ", "))
		}
		var v any
		switch p := picks[name]; p {
		case "mine":
			v = fm.Mine
		case "theirs", "base":
			if c.Op == store.CopyCreate {
				// The source has no such record and nothing came before the create: there
				// is no value of theirs or of a base to take.
				return nil, createRefusal(c, name, p)
			}
			if p == "theirs" {
				v = fm.Theirs
			} else {
				v = fm.Base
			}
		default:
			pv, err := fm.Field.Parse(p)
			if err != nil {
				return nil, err
			}
			v = pv
		}
		out[name] = v
	}
	var open []string
	for _, f := range m.Fields {
		if _, ok := out[f.Field.Name]; ok {
			continue
		}
		v, ok := f.Value()
		if !ok || f.State == merge.FieldConflict {
			open = append(open, f.Field.Name)
			continue
		}
		out[f.Field.Name] = v
	}
	if len(open) > 0 {
		return nil, store.Errorf(store.EINVALID, "%s %d: no answer for %s (give %s)", c.Kind, c.ID, strings.Join(open, ", "), answers(c))
	}
	return out, nil
}

// colliding names the fields of m that collide.
func colliding(m *merge.RecordResult) []string {
	var out []string
	for _, f := range m.Fields {
		if f.State == merge.FieldConflict {
			out = append(out, f.Field.Name)
		}
	}
	return out
}

// answers says which answers a field of conflict c takes.
func answers(c *store.CopyConflict) string {
	if c.Op == store.CopyCreate {
		return "FIELD=mine or a value: a record created here has no theirs or base"
	}
	return "FIELD=mine, theirs, base or a value"
}

// createRefusal is the refusal of pick (theirs or base) for field name of the conflict of a
// record created in the copy.
func createRefusal(c *store.CopyConflict, name, pick string) error {
	if c.Lost() {
		return store.Errorf(store.EINVALID, "%s %d was lost on the source, which went back in time (put back from an older backup): it has no %s to take. "+
			"Answer %s=mine (or %s=VALUE) to create it there anew, or delete the local record (%s) to let it go",
			c.Kind, c.ID, pick, name, name, localDelete(c))
	}
	return store.Errorf(store.EINVALID, "%s %d was created here and the source refused the create (%s): it has no %s to take. "+
		"Give %s a value (tandem resolve %s %d %s=VALUE), or delete the local record (%s), which drops it and its conflict",
		c.Kind, c.ID, c.Reason, pick, name, c.Kind, c.ID, name, localDelete(c))
}

// localDelete is the tandem delete of conflict c's record in the copy, with the version the
// copy holds it at (CopyConflict.LocalVersion), or, when that is not known, where to read it.
func localDelete(c *store.CopyConflict) string {
	if c.LocalVersion > 0 {
		return fmt.Sprintf("tandem delete %s %d --expect-version %d", c.Kind, c.ID, c.LocalVersion)
	}
	return fmt.Sprintf("tandem delete %s %d --expect-version N, N the version tandem get %s %d shows", c.Kind, c.ID, c.Kind, c.ID)
}

// Hint says in one line which answers settle conflict c, for the person reading a sync's
// or status's list: a record deleted on one side is answered for the whole record, one
// created here takes a value (or goes), the others take mine, theirs, base or a value for
// each colliding field.
func Hint(c *store.CopyConflict) string {
	switch {
	case c.Op == store.CopyDelete && strings.Contains(c.Reason, store.DeletedHere):
		return fmt.Sprintf("deleted here: tandem resolve %s %d mine deletes it on the source too, theirs keeps the source's record", c.Kind, c.ID)
	case c.Op == store.CopyDelete:
		return fmt.Sprintf("deleted here: tandem resolve %s %d theirs brings the source's record back into the copy, with what the copy lacked", c.Kind, c.ID)
	case c.Gone():
		return fmt.Sprintf("deleted on the source: tandem resolve %s %d FIELD=theirs lets it go with your edit; to keep the edit, restore %s %d on the source and sync", c.Kind, c.ID, c.Kind, c.ID)
	case c.Lost():
		return fmt.Sprintf("lost on the source: tandem resolve %s %d FIELD=mine creates it there anew (FIELD=VALUE with a value of yours), or %s lets it go",
			c.Kind, c.ID, localDelete(c))
	case c.Op == store.CopyCreate:
		field := "FIELD"
		if len(c.Fields) == 1 {
			field = c.Fields[0]
		}
		return fmt.Sprintf("created here: tandem resolve %s %d %s=VALUE (or %s=mine to try it again), or %s drops the local record and its conflict",
			c.Kind, c.ID, field, field, localDelete(c))
	case len(c.Fields) > 0:
		return fmt.Sprintf("tandem resolve %s %d FIELD=mine|theirs|base|VALUE for %s", c.Kind, c.ID, strings.Join(c.Fields, ", "))
	}
	return fmt.Sprintf("tandem resolve %s %d FIELD=mine|theirs|base|VALUE", c.Kind, c.ID)
}

// Describe says in one line what a conflict is about, for listings.
func Describe(c *store.CopyConflict) string {
	if len(c.Fields) == 0 {
		return fmt.Sprintf("%s %d (%s): %s", c.Kind, c.ID, c.Op, c.Reason)
	}
	return fmt.Sprintf("%s %d (%s): %s: %s", c.Kind, c.ID, c.Op, c.Reason, strings.Join(c.Fields, ", "))
}
