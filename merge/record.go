package merge

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tandem-editor/tandem/store"
)

// FieldState says how a field came out of a record merge.
type FieldState int

const (
	// FieldUnchanged means neither side changed the field.
	FieldUnchanged FieldState = iota
	// FieldClean means exactly one side changed it; that side's value wins.
	FieldClean
	// FieldMerged means both sides changed it and the rule combined them:
	// the same value on both sides, text edits that do not overlap, set
	// additions and removals, counter deltas.
	FieldMerged
	// FieldConflict means both sides changed it and the rule cannot combine
	// them; someone must resolve it.
	FieldConflict
)

// String returns the state's name for the merge view.
func (s FieldState) String() string {
	switch s {
	case FieldUnchanged:
		return "unchanged"
	case FieldClean:
		return "clean"
	case FieldMerged:
		return "merged"
	case FieldConflict:
		return "conflict"
	}
	return fmt.Sprintf("FieldState(%d)", int(s))
}

// FieldMerge is the three-way merge of one field.
type FieldMerge struct {
	Field *store.Field
	State FieldState
	// Base, Mine and Theirs are the field's values in the loaded record, the
	// local edit and the current stored record; nil when absent.
	Base, Mine, Theirs any
	// Text is set for conflicting text fields: the line merge of the three
	// versions, to be resolved per hunk. Its "ours" is Mine.
	Text *Resolution

	merged   any  // the value when not a conflict, or once resolved
	resolved bool // a conflict has been resolved as a whole field
}

// Resolved reports whether the field has a value: it never conflicted, it was
// resolved as a whole, or it is a text field whose hunks are all picked.
func (f *FieldMerge) Resolved() bool {
	return f.State != FieldConflict || f.resolved || (f.Text != nil && f.Text.Done())
}

// Value returns the merged value and whether there is one yet (see Resolved).
func (f *FieldMerge) Value() (any, bool) {
	switch {
	case f.State != FieldConflict || f.resolved:
		return f.merged, true
	case f.Text != nil && f.Text.Done():
		return string(f.Text.Bytes(RenderOptions{})), true
	}
	return nil, false
}

// RecordResult is the field-by-field merge of one record, in registry order,
// with the resolutions made so far.
type RecordResult struct {
	Kind   store.Kind
	Fields []*FieldMerge
	undo   []fieldUndo
}

type fieldUndo struct {
	field    *FieldMerge
	merged   any
	resolved bool
	hunks    bool // the step picked hunks: undo it in field.Text too
	hunk     int  // the hunk the step was about, -1 for the whole field
	what     string
}

// Undone says what an Undo reverted, so a merge UI can show it and put its cursor there.
type Undone struct {
	Field *store.Field
	// Hunk is the text hunk the step was about (the first of several for a pick of all
	// remaining hunks), or -1 for a step on the whole field.
	Hunk int
	// Step says what was reverted, for people: "hunk 2: theirs", "value: mine".
	Step string
}

// String says it in one line: "undid hunk 2: theirs in description".
func (u Undone) String() string { return "undid " + u.Step + " in " + u.Field.Label }

// Records merges a record field by field by each field's registry rule: base
// is the version the edit started from, mine the local edit, theirs the
// version now stored. Fields of kind absent from all three are skipped, so a
// partial record merges only what it holds. Values must have the Go types
// store.Values documents; a value of an unexpected type never panics, it
// makes its field a conflict.
func Records(reg *store.Registry, kind store.Kind, base, mine, theirs store.Values) *RecordResult {
	r := &RecordResult{Kind: kind}
	for _, f := range reg.Fields(kind) {
		b, okB := base[f.Name]
		m, okM := mine[f.Name]
		t, okT := theirs[f.Name]
		if !okB && !okM && !okT {
			continue
		}
		r.Fields = append(r.Fields, mergeField(f, b, m, t))
	}
	return r
}

// mergeField applies f's rule to one field.
func mergeField(f *store.Field, b, m, t any) *FieldMerge {
	fm := &FieldMerge{Field: f, Base: b, Mine: m, Theirs: t}
	mineChanged, theirsChanged := !store.Equal(b, m), !store.Equal(b, t)
	switch {
	case !mineChanged && !theirsChanged:
		fm.State, fm.merged = FieldUnchanged, t
		return fm
	case !theirsChanged:
		fm.State, fm.merged = FieldClean, m
		return fm
	case !mineChanged:
		fm.State, fm.merged = FieldClean, t
		return fm
	case store.Equal(m, t):
		fm.State, fm.merged = FieldMerged, t
		return fm
	}
	fm.State = FieldConflict
	switch f.Rule {
	case store.RuleCounter:
		if v, ok := mergeCounter(b, m, t); ok {
			fm.State, fm.merged = FieldMerged, v
		}
	case store.RuleSet:
		if v, ok := mergeSet(b, m, t); ok {
			fm.State, fm.merged = FieldMerged, v
		}
	case store.RuleText:
		bs, ok1 := textValue(b)
		ms, ok2 := textValue(m)
		ts, ok3 := textValue(t)
		if !ok1 || !ok2 || !ok3 {
			break
		}
		res := Text([]byte(bs), []byte(ms), []byte(ts))
		if res.Conflicts == 0 {
			fm.State, fm.merged = FieldMerged, string(res.Render(RenderOptions{}))
		} else {
			fm.Text = NewResolution(res)
		}
	}
	return fm
}

// mergeCounter adds both sides' deltas to base; it refuses on wrong types and
// on int64 overflow, which would silently lose an update.
func mergeCounter(b, m, t any) (int64, bool) {
	bi, ok1 := b.(int64)
	mi, ok2 := m.(int64)
	ti, ok3 := t.(int64)
	if !ok1 || !ok2 || !ok3 {
		return 0, false
	}
	d := mi - bi
	if (mi >= 0) != (bi >= 0) && (d >= 0) != (mi >= 0) {
		return 0, false // mi - bi overflowed
	}
	sum := ti + d
	if (d > 0 && sum < ti) || (d < 0 && sum > ti) {
		return 0, false
	}
	return sum, true
}

// mergeSet applies mine's additions and removals (relative to base) to
// theirs. A nil set counts as empty.
func mergeSet(b, m, t any) ([]string, bool) {
	bs, ok1 := setValue(b)
	ms, ok2 := setValue(m)
	ts, ok3 := setValue(t)
	if !ok1 || !ok2 || !ok3 {
		return nil, false
	}
	out := slices.Clone(ts)
	for _, x := range ms {
		if !slices.Contains(bs, x) {
			out = append(out, x)
		}
	}
	out = slices.DeleteFunc(out, func(x string) bool {
		return slices.Contains(bs, x) && !slices.Contains(ms, x)
	})
	return store.NormalizeSet(out), true
}

func setValue(v any) ([]string, bool) {
	switch v := v.(type) {
	case nil:
		return nil, true
	case []string:
		return v, true
	}
	return nil, false
}

func textValue(v any) (string, bool) {
	switch v := v.(type) {
	case nil:
		return "", true
	case string:
		return v, true
	}
	return "", false
}

// Field returns the merge of the named field, or nil.
func (r *RecordResult) Field(name string) *FieldMerge {
	for _, f := range r.Fields {
		if f.Field.Name == name {
			return f
		}
	}
	return nil
}

// Conflicts returns how many fields still need a resolution.
func (r *RecordResult) Conflicts() int {
	n := 0
	for _, f := range r.Fields {
		if !f.Resolved() {
			n++
		}
	}
	return n
}

func (r *RecordResult) conflictField(name string) (*FieldMerge, error) {
	f := r.Field(name)
	if f == nil {
		return nil, store.Errorf(store.EINVALID, "merge: no field %q in this %s merge", name, r.Kind)
	}
	if f.State != FieldConflict {
		return nil, store.Errorf(store.EINVALID, "merge: field %s has no conflict to resolve (%s)", name, f.State)
	}
	return f, nil
}

// Resolve settles a conflicting field as a whole: PickOurs takes mine,
// PickTheirs theirs, PickBase the base value; PickBoth takes the union of two
// sets, or mine's text then theirs' for each hunk of a text field.
func (r *RecordResult) Resolve(name string, p Pick) error {
	f, err := r.conflictField(name)
	if err != nil {
		return err
	}
	var v any
	switch p {
	case PickOurs:
		v = f.Mine
	case PickTheirs:
		v = f.Theirs
	case PickBase:
		v = f.Base
	case PickBoth:
		switch {
		case f.Text != nil:
			v = string(f.Text.Result().Render(RenderOptions{Favor: FavorUnion}))
		case f.Field.Rule == store.RuleSet || f.Field.Type == store.TypeSet:
			ms, ok1 := setValue(f.Mine)
			ts, ok2 := setValue(f.Theirs)
			if !ok1 || !ok2 {
				return store.Errorf(store.EINVALID, "merge: field %s: cannot join values of types %T and %T", name, f.Mine, f.Theirs)
			}
			v = store.NormalizeSet(append(slices.Clone(ms), ts...))
		default:
			return store.Errorf(store.EINVALID, "merge: field %s: both sides cannot be combined for a %s field; pick one or edit", name, f.Field.Type)
		}
	default:
		return store.Errorf(store.EINVALID, "merge: field %s: %v is not a side (use ResolveValue to edit)", name, p)
	}
	r.setResolution(f, v, "value: "+pickWord(p))
	return nil
}

// Override takes one side's value for a field that merged cleanly (one side changed it):
// PickOurs mine, PickTheirs theirs, PickBase the base value, as one step of the undo stack.
// A conflicting field is resolved with Resolve instead (EINVALID here), as is a field
// neither side changed.
func (r *RecordResult) Override(name string, p Pick) error {
	f := r.Field(name)
	if f == nil {
		return store.Errorf(store.EINVALID, "merge: no field %q in this %s merge", name, r.Kind)
	}
	if f.State != FieldClean {
		return store.Errorf(store.EINVALID, "merge: field %s did not merge cleanly (%s)", name, f.State)
	}
	var v any
	switch p {
	case PickOurs:
		v = f.Mine
	case PickTheirs:
		v = f.Theirs
	case PickBase:
		v = f.Base
	default:
		return store.Errorf(store.EINVALID, "merge: field %s: %v is not one side", name, p)
	}
	r.setResolution(f, v, "value: "+pickWord(p))
	return nil
}

// pickWord names a pick as the merge view's keys do (PickOurs is "mine").
func pickWord(p Pick) string {
	if p == PickOurs {
		return "mine"
	}
	return p.String()
}

// ResolveValue settles a conflicting field with an edited value, checked
// against the field's type and limits.
func (r *RecordResult) ResolveValue(name string, v any) error {
	f, err := r.conflictField(name)
	if err != nil {
		return err
	}
	if err := f.Field.Check(v); err != nil {
		return fmt.Errorf("merge: resolve %s: %w", name, err)
	}
	if s, ok := v.([]string); ok {
		v = slices.Clone(s)
	}
	r.setResolution(f, v, "value: edited")
	return nil
}

func (r *RecordResult) setResolution(f *FieldMerge, v any, what string) {
	r.undo = append(r.undo, fieldUndo{field: f, merged: f.merged, resolved: f.resolved, hunk: -1, what: what})
	f.merged, f.resolved = v, true
}

// PickHunk resolves hunk i of a conflicting text field with p, as one step
// of the record's undo stack (so Undo reverts picks and whole-field
// resolutions in the order they were made). A field resolved as a whole goes
// back to being resolved by its hunks.
func (r *RecordResult) PickHunk(name string, i int, p Pick) error {
	f, err := r.textField(name)
	if err != nil {
		return err
	}
	prev := fieldUndo{field: f, merged: f.merged, resolved: f.resolved, hunks: true, hunk: i,
		what: fmt.Sprintf("hunk %d: %s", i+1, pickWord(p))}
	if err := f.Text.Pick(i, p); err != nil {
		return fmt.Errorf("merge: field %s: %w", name, err)
	}
	r.undo = append(r.undo, prev)
	f.merged, f.resolved = nil, false
	return nil
}

// PickRemaining resolves every open hunk of a conflicting text field with p
// as one undo step, like Resolution.PickRemaining, and returns how many it
// resolved; a field resolved as a whole goes back to its hunks.
func (r *RecordResult) PickRemaining(name string, p Pick) (int, error) {
	f, err := r.textField(name)
	if err != nil {
		return 0, err
	}
	prev := fieldUndo{field: f, merged: f.merged, resolved: f.resolved, hunks: true, hunk: -1}
	for i := range f.Text.Hunks() {
		if c, _ := f.Text.Choice(i); c.Pick == PickNone {
			prev.hunk = i
			break
		}
	}
	n, err := f.Text.PickRemaining(p)
	if err != nil {
		return 0, fmt.Errorf("merge: field %s: %w", name, err)
	}
	if n > 0 {
		prev.what = fmt.Sprintf("%d remaining hunks: %s", n, pickWord(p))
		r.undo = append(r.undo, prev)
		f.merged, f.resolved = nil, false
	}
	return n, nil
}

func (r *RecordResult) textField(name string) (*FieldMerge, error) {
	f, err := r.conflictField(name)
	if err != nil {
		return nil, err
	}
	if f.Text == nil {
		return nil, store.Errorf(store.EINVALID, "merge: field %s has no text hunks to pick", name)
	}
	return f, nil
}

// Undo reverts the last Resolve, ResolveValue, PickHunk, PickRemaining or TakeWords, and
// says what it reverted (the one undo stack of a record merge: a UI keeps none of its own).
// Picks made directly on a field's Text are not on this stack; undo those with the Text's
// own Undo. It reports false when there is nothing to undo.
func (r *RecordResult) Undo() (Undone, bool) {
	if len(r.undo) == 0 {
		return Undone{}, false
	}
	u := r.undo[len(r.undo)-1]
	r.undo = r.undo[:len(r.undo)-1]
	if u.hunks {
		u.field.Text.Undo()
	}
	u.field.merged, u.field.resolved = u.merged, u.resolved
	return Undone{Field: u.field.Field, Hunk: u.hunk, Step: u.what}, true
}

// ProposeWords returns the word-level proposal for hunk i of the conflicting text field name
// (see merge.ProposeWords), or why there is none (*WordRefusal). It changes nothing.
func (r *RecordResult) ProposeWords(name string, i int) (*WordProposal, error) {
	f, err := r.textField(name)
	if err != nil {
		return nil, err
	}
	ch, err := f.Text.Hunk(i)
	if err != nil {
		return nil, fmt.Errorf("merge: field %s: %w", name, err)
	}
	return ProposeWords(ch)
}

// TakeWords resolves hunk i of the conflicting text field name with its word-level proposal,
// as one step of the undo stack, and returns it; a refused proposal changes nothing.
func (r *RecordResult) TakeWords(name string, i int) (*WordProposal, error) {
	p, err := r.ProposeWords(name, i)
	if err != nil {
		return nil, err
	}
	f := r.Field(name)
	prev := fieldUndo{field: f, merged: f.merged, resolved: f.resolved, hunks: true, hunk: i,
		what: fmt.Sprintf("hunk %d: word-level merge", i+1)}
	if err := f.Text.Edit(i, p.Text); err != nil {
		return nil, fmt.Errorf("merge: field %s: %w", name, err)
	}
	r.undo = append(r.undo, prev)
	f.merged, f.resolved = nil, false
	return p, nil
}

// Values returns the merged record. It fails with an ECONFLICT error naming
// the fields still unresolved.
func (r *RecordResult) Values() (store.Values, error) {
	out := store.Values{}
	var open []string
	for _, f := range r.Fields {
		v, ok := f.Value()
		if !ok {
			open = append(open, f.Field.Name)
			continue
		}
		out[f.Field.Name] = v
	}
	if len(open) > 0 {
		return nil, store.Errorf(store.ECONFLICT, "merge: unresolved fields: %s", strings.Join(open, ", "))
	}
	return out.Clone(), nil
}

// Changes returns the merged fields whose value differs from theirs: what a
// save based on theirs' version must send. Fields a merge did not need to
// touch are left out, so they are never rewritten.
func (r *RecordResult) Changes() (store.Values, error) {
	vals, err := r.Values()
	if err != nil {
		return nil, err
	}
	out := store.Values{}
	for _, f := range r.Fields {
		if v := vals[f.Field.Name]; !store.Equal(v, f.Theirs) {
			out[f.Field.Name] = v
		}
	}
	return out, nil
}
