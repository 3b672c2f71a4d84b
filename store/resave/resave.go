// Package resave is the one "merge on conflict, then save again" policy: a save that met a
// newer version merges the edit with that version field by field (package merge), saves the
// clean merge version-checked on it, and does so again when yet another version came in
// between, up to one bound. Fields both sides changed apart are never saved: they go back to
// the caller, which asks a person or queues a conflict. Sync's push and the import call
// Merge; the TUI, whose saves run inside bubbletea commands, makes the same decision each
// round with Decide and the same bound.
package resave

import (
	"context"
	"errors"
	"fmt"

	"github.com/tandem-editor/tandem/merge"
	"github.com/tandem-editor/tandem/store"
)

// MaxRounds is how many saves one write makes on its own after its first save met a newer
// version (merged saves, and the editor's retries of relative changes) before it stops and
// hands the record to a person or the conflict queue. A round takes milliseconds, so a record
// that moved on five times in a row is being written in a loop by others: more rounds add
// load to that hot record and rarely settle it, and fewer would give up on records that two
// or three writers merely touch at once. Five was already the editor's and sync's bound.
const MaxRounds = 5

// Decision is what to do with a round's merge.
type Decision int

const (
	// SaveMerge means no field collides: the merge is saved on the newer version.
	SaveMerge Decision = iota
	// Ask means fields collide: a person (or the conflict queue) decides them.
	Ask
	// GiveUp means the write has made MaxRounds saves on its own already.
	GiveUp
)

// Decide says what to do with merge m after rounds saves made on their own since the write's
// first save: give up at the bound, ask when fields collide, else save the merge.
func Decide(m *merge.RecordResult, rounds int) Decision {
	switch {
	case rounds >= MaxRounds:
		return GiveUp
	case m.Conflicts() > 0:
		return Ask
	}
	return SaveMerge
}

// Save saves changes version-checked on theirs' version and returns the record it saved.
// When changes is empty, theirs holds the merge already and Save writes what it still has
// to (nothing, usually). A newer version is reported as a *store.ConflictError whose Current
// is merged with next.
type Save func(ctx context.Context, theirs *store.Record, changes store.Values) (*store.Record, error)

// Outcome is what Merge made of a write that met a newer version.
type Outcome struct {
	Saved      *store.Record       // what Save returned for the merge that settled; nil on collisions
	Theirs     *store.Record       // the version the last merge was made with
	Merge      *merge.RecordResult // the last merge
	Changes    store.Values        // what the last merge saved on Theirs (empty: Theirs held it all)
	Collisions []string            // fields both sides changed apart, in registry order: nothing saved
	Rounds     int                 // saves made
}

// KeptChangingError is Merge's answer when every one of MaxRounds merged saves met yet
// another version. It unwraps to the last conflict.
type KeptChangingError struct {
	Kind   store.Kind
	ID     int64
	Rounds int
	Last   *store.ConflictError
}

// Error names the record, the saves made, and the version it was left at.
func (e *KeptChangingError) Error() string {
	return fmt.Sprintf("%s %d kept changing: %d merged saves each met a newer version; it is at version %d, by %s; nothing written",
		e.Kind, e.ID, e.Rounds, e.Last.Current.Version, e.Last.Current.UpdatedBy)
}

// Unwrap returns the last conflict, so that store.ErrorCode says ECONFLICT.
func (e *KeptChangingError) Unwrap() error { return e.Last }

// Merge merges mine (the edit) and theirs (the record as it is now) from base (what the edit
// was made on), field by field by each field's rule, over the fields base or mine name, and
// saves the clean merge's changes through save on theirs' version. A save that meets a newer
// version merges again with it, up to MaxRounds saves. Fields that collide are returned in
// Outcome.Collisions, unsaved. It returns a *KeptChangingError at the bound, and save's other
// errors as they are.
func Merge(ctx context.Context, reg *store.Registry, kind store.Kind, base, mine store.Values, theirs *store.Record, save Save) (Outcome, error) {
	var last *store.ConflictError
	for rounds := 0; ; rounds++ {
		cur := store.Values{}
		for name := range mine {
			cur[name] = theirs.Fields[name]
		}
		for name := range base {
			cur[name] = theirs.Fields[name]
		}
		m := merge.Records(reg, kind, base, mine, cur)
		out := Outcome{Theirs: theirs, Merge: m, Rounds: rounds}
		switch Decide(m, rounds) {
		case GiveUp:
			return out, &KeptChangingError{Kind: kind, ID: theirs.ID, Rounds: rounds, Last: last}
		case Ask:
			for _, f := range m.Fields {
				if !f.Resolved() {
					out.Collisions = append(out.Collisions, f.Field.Name)
				}
			}
			return out, nil
		}
		changes, err := m.Changes()
		if err != nil {
			return out, fmt.Errorf("resave: %s %d: %w", kind, theirs.ID, err)
		}
		out.Changes = changes
		saved, err := save(ctx, theirs, changes)
		if errors.As(err, &last) {
			theirs = last.Current
			continue
		}
		if err != nil {
			return out, err
		}
		out.Saved, out.Rounds = saved, rounds+1
		return out, nil
	}
}
