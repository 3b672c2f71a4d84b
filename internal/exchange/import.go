package exchange

import (
	"bufio"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/resave"
)

// Outcome is what became of one import row.
type Outcome string

// The outcomes, in the order of their exit codes' precedence (see ExitOutcome).
const (
	Created   Outcome = "created"   // a new record (with the row's id when it had one)
	Updated   Outcome = "updated"   // the differing fields were written
	Unchanged Outcome = "unchanged" // the store already held the row's values, or the row was imported before
	Conflict  Outcome = "conflict"  // the row was edited from an older version; nothing written
	Leased    Outcome = "leased"    // someone's lease holds the record; nothing written
	Invalid   Outcome = "invalid"   // bad values, a field the role may not write...; nothing written
	Forbidden Outcome = "forbidden" // the user's permissions do not let them write the record; nothing written
	// NotWritten is a row that would have landed, held back because an --all-or-nothing
	// import wrote nothing (other rows would not land, or the file changed).
	NotWritten Outcome = "not-written"
)

// Result is the report of one row.
type Result struct {
	// Row is the row's position among the file's rows (1 is the first), Line its first
	// line in the file.
	Row     int        `json:"row"`
	Line    int        `json:"line"`
	Kind    store.Kind `json:"kind,omitempty"`
	ID      int64      `json:"id,omitempty"`
	Outcome Outcome    `json:"outcome"`
	// Version is the record's version after the row: the one written, or the current one.
	Version int64 `json:"version,omitempty"`
	// Fields are the fields written (or that would be, in a dry run), sorted.
	Fields []string `json:"fields,omitempty"`
	// Holder is the lease holder of a leased row.
	Holder string `json:"holder,omitempty"`
	// LeftAlone are the row's fields that differ from the store and that the writer's role
	// may not write: left as they are (the message says so), sorted.
	LeftAlone []string `json:"left_alone,omitempty"`
	// Message explains the outcome: the conflict's fields, the lease, what was invalid, a
	// new id's version starting anew, fields the role may not write that were left alone.
	Message string `json:"message,omitempty"`
}

// ImportOptions are how rows are applied.
type ImportOptions struct {
	// KeyPrefix starts every row's idempotency key (see Key).
	KeyPrefix string
	// Merge applies the field-level three-way merge when a row's version is stale, with
	// the row's base values (or the store's history version the row's version names) as
	// the base; without it a stale row is a conflict.
	Merge bool
	// DryRun decides every row as it would be applied and writes nothing.
	DryRun bool
	// BatchRows is how many rows at most one transaction holds on a store that writes in
	// batches (store.Batcher): 0 is DefaultBatchRows, 1 applies one row per transaction.
	BatchRows int
}

// Importer applies import rows to a store, one write per row, two for a row that changes the
// fields of a record of a tree kind and moves it (see updateAndMove). On a store that writes
// in batches (store.Batcher) ApplyAll puts many rows' writes in one transaction
// (importbatch.go); Apply alone writes one row in transactions of its own.
type Importer struct {
	st  store.Store
	reg *store.Registry
	opt ImportOptions
	// copied is the state of st when it is a working copy (read once, at the first row),
	// whose creates store.CheckCopyCreate decides.
	copied     *store.CopyState
	copiedRead bool
	// view is what the rows so far did (or, in a dry run, would have done) that later rows'
	// checks need (importcheck.go).
	view importView
	// absent are the keys of the rows being applied in batches that the store did not hold
	// when their chunk began (listKeys): Apply does not look them up one by one.
	absent map[string]bool
	// loader is the store's load (store.BulkLoader) while rows are applied in batches:
	// it creates new records outside the batches.
	loader store.Loader
	// read are the records that the rows being applied in batches name, read at once when
	// their chunk began (readRecords); a row's first read takes its record from here (and
	// leaves it, so that a later read is the store's).
	read map[recordOf]*store.Record
	// pending, while a run of updates is planned for the store's bulk save (updateAll),
	// takes the saves that would go to UpdateRecord, in order, in place of writing them.
	pending *[]store.RecordUpdate
}

// NewImporter returns an Importer writing to st.
func NewImporter(st store.Store, opt ImportOptions) *Importer {
	return &Importer{st: st, reg: st.Registry(), opt: opt}
}

// copyState returns the state of the store when it is a working copy, else nil.
func (im *Importer) copyState(ctx context.Context) (*store.CopyState, error) {
	if im.copiedRead {
		return im.copied, nil
	}
	if wc, ok := im.st.(store.WorkingCopy); ok {
		s, err := wc.CopyState(ctx)
		switch store.ErrorCode(err) {
		case "":
			im.copied = s
		case store.ENOTFOUND: // a store that could be a working copy but is not one
		default:
			return nil, err
		}
	}
	im.copiedRead = true
	return im.copied, nil
}

// MaxKeyPrefix is the longest --key-prefix (the key adds a position and a digest).
const MaxKeyPrefix = 120

// DefaultKeyPrefix starts the rows' keys of an import that names no prefix. It is the same
// for every file: what makes two imports the same is their rows' content and positions,
// never the name of the file (or stdin) they came from.
const DefaultKeyPrefix = "import"

// Key returns the idempotency key of the row at position pos (0 for the first row): the
// prefix, the position, the writer's role and the row's content digest. The same rows
// imported again (from any file or stdin, or re-run after being killed) get the keys they
// had, so rows already applied replay instead of applying twice; a changed row, or the same
// row at another position, gets a new key.
func (im *Importer) Key(role store.Role, pos int, row *Row) string {
	return im.opt.KeyPrefix + ":" + strconv.Itoa(pos) + ":" + string(role) + ":" + row.Digest
}

// maxRetries bounds how often a row is read again when another writer got in between its
// read and its write: a row made without a version column, whose values win; or a row with a
// version whose save met a newer one, once, before --merge merges it (store/resave bounds
// the merge's own rounds).
const maxRetries = 3

// Apply applies the row at position pos and reports what became of it. Errors of the store
// that say nothing about the row (a database that went away, a busy lock) are returned; the
// import stops there and may be re-run.
func (im *Importer) Apply(ctx context.Context, pos int, row *Row) (Result, error) {
	res := Result{Row: row.Pos, Line: row.Line, Kind: row.Kind, ID: row.ID}
	if row.Err != nil {
		return im.invalid(res, row.Err), nil
	}
	actor, err := store.ActorFrom(ctx)
	if err != nil {
		return res, err
	}
	key := im.Key(actor.Role, pos, row)
	// A key the batch's look-up (listKeys) did not find is not read again: the store's own
	// check of the key, in the write's transaction, still replays one written since.
	if !im.absent[key] {
		if k, err := im.st.FindKey(ctx, store.ScopeAPI, key); err == nil && k.Status == store.KeyCompleted {
			return im.replayed(ctx, res, k)
		} else if err != nil && store.ErrorCode(err) != store.ENOTFOUND {
			return res, err
		}
	}
	if row.ID == 0 {
		return im.create(ctx, res, pos, row, actor, key, store.CreateOptions{IdempotencyKey: key})
	}
	for attempt := 0; ; attempt++ {
		cur, err := im.findRecord(ctx, row.Kind, row.ID)
		if store.ErrorCode(err) == store.ENOTFOUND {
			res, err := im.create(ctx, res, pos, row, actor, key, store.CreateOptions{ID: row.ID, IdempotencyKey: key})
			if err == nil && res.Outcome == Created && row.Version > 1 {
				res.Message = strings.TrimSpace(fmt.Sprintf("created with id %d at version 1 (the file had version %d: versions start anew). %s", row.ID, row.Version, res.Message))
			}
			return res, err
		}
		if err != nil {
			return res, err
		}
		if len(row.Empty) > 0 {
			return im.invalid(res, emptyError(row.Empty, row.Kind, row.ID)), nil
		}
		res, retry, err := im.update(ctx, res, pos, row, cur, actor, key)
		if err != nil || !retry || attempt == maxRetries {
			return res, err
		}
	}
}

// replayed reports a row whose key a completed write holds: it was imported before. The
// report gives the record's current version, and says so when the record has moved on
// since the import wrote it (or is gone), so that a version it shows is never stale.
func (im *Importer) replayed(ctx context.Context, res Result, k *store.KeyRecord) (Result, error) {
	res.Outcome, res.Message, res.Fields = Unchanged, "imported before (same row, same key)", nil
	kr, err := store.DecodeKeyResult(k.Result)
	if err != nil || kr.ID == 0 {
		return res, nil
	}
	cur, err := im.st.FindRecord(ctx, res.Kind, kr.ID)
	if err != nil && store.ErrorCode(err) != store.ENOTFOUND {
		return res, err
	}
	return replayedAs(res, kr, cur), nil
}

// replayedAs reports a row imported before as kr (its key's result), cur being the record
// now (nil when it was deleted since).
func replayedAs(res Result, kr store.KeyResult, cur *store.Record) Result {
	res.Outcome, res.Message, res.Fields = Unchanged, "imported before (same row, same key)", nil
	res.ID, res.Version = kr.ID, kr.Version
	switch {
	case cur == nil:
		res.Version = 0
		res.Message = fmt.Sprintf("imported before (same row, same key) as version %d; %s %d was deleted since; nothing written", kr.Version, res.Kind, kr.ID)
	case cur.Version != kr.Version:
		res.Version = cur.Version
		res.Message = fmt.Sprintf("imported before (same row, same key) as version %d; the record has moved on since (v%d now, last written by %s); nothing written", kr.Version, cur.Version, cur.UpdatedBy)
	}
	return res
}

// create applies a row that makes a new record.
func (im *Importer) create(ctx context.Context, res Result, pos int, row *Row, actor store.Actor, key string, opt store.CreateOptions) (Result, error) {
	res, vals, ok, err := im.planCreate(ctx, res, row, actor, opt)
	if err != nil || !ok {
		return res, err
	}
	if im.opt.DryRun {
		// What the store's create would refuse, given the rows before (which a dry run did
		// not write), in the order of its checks (Registry.RunCreate): a unique value (a
		// sku) an earlier row gives to another record, a ref to a record that does not
		// exist, the parent.
		id := opt.ID
		if id == 0 {
			id = -int64(pos + 1)
		}
		if err := im.checkUnique(ctx, row.Kind, id, vals); err != nil {
			return im.refused(res, err)
		}
		if err := im.checkRefs(ctx, row.Kind, vals); err != nil {
			return im.refused(res, err)
		}
		tree := im.reg.Tree(row.Kind)
		if p, ok := vals[store.ParentField].(int64); ok && tree {
			if err := im.checkNewChild(ctx, row.Kind, p); err != nil {
				return im.refused(res, err)
			}
		}
		im.tookUnique(row.Kind, id, pos, vals)
		if opt.ID != 0 {
			im.createdWith(row.Kind, opt.ID)
			if tree {
				if err := im.placed(ctx, row.Kind, opt.ID, vals[store.ParentField]); err != nil {
					return res, err
				}
			}
		}
		res.Version = 1
		return res, nil
	}
	r, err := im.st.CreateRecord(ctx, row.Kind, vals, opt)
	return im.createdAs(res, r, err)
}

// planCreate decides what a row that makes a new record writes, before the store is asked:
// the values the actor's role may write, checked (CheckCreate), and the report of the row
// as created. ok is false when the row is invalid (res says why) and nothing is to be
// written.
func (im *Importer) planCreate(ctx context.Context, res Result, row *Row, actor store.Actor, opt store.CreateOptions) (_ Result, vals store.Values, ok bool, _ error) {
	if cs, err := im.copyState(ctx); err != nil {
		return res, nil, false, err
	} else if cs != nil {
		if err := store.CheckCopyCreate(cs, row.Kind, opt.ID); err != nil {
			return im.invalid(res, err), nil, false, nil
		}
	}
	vals, skipped := im.writable(row.Kind, actor.Role, row.Set, nil)
	if _, err := im.reg.CheckCreate(row.Kind, actor.Role, vals); err != nil {
		return im.invalid(res, err), nil, false, nil
	}
	res.Fields = slices.Sorted(mapKeys(vals))
	res.Outcome, res.Message = Created, strings.TrimSpace(defaultsNote(im.reg, row)+" "+skippedNote(skipped, actor.Role))
	res.LeftAlone = skipped
	return res, vals, true, nil
}

// createdAs reports a create the store answered with r or err.
func (im *Importer) createdAs(res Result, r *store.Record, err error) (Result, error) {
	if err != nil {
		return im.refused(res, err)
	}
	res.ID, res.Version = r.ID, r.Version
	if im.reg.Tree(r.Kind) {
		im.tree(r.Kind).place(r.ID, parentOf(r))
	}
	return res, nil
}

// parentOf returns the parent id of a record of a tree kind, 0 at the root.
func parentOf(r *store.Record) int64 {
	p, _ := r.Fields[store.ParentField].(int64)
	return p
}

// update applies a row to the record as it is (cur). retry is set when the record changed
// between the read and the write and the row may be applied again to a fresh read.
func (im *Importer) update(ctx context.Context, res Result, pos int, row *Row, cur *store.Record, actor store.Actor, key string) (_ Result, retry bool, _ error) {
	set, skipped := im.writable(row.Kind, actor.Role, row.Set, cur.Fields)
	note := skippedNote(skipped, actor.Role)
	res.LeftAlone = skipped
	var move *store.Move
	if p, ok := set[store.ParentField]; ok && im.reg.Tree(row.Kind) {
		// A tree kind's parent_id is written by a move, after the other fields (a move is
		// idempotent: a move to the parent the record has writes nothing).
		delete(set, store.ParentField)
		move = &store.Move{}
		if id, ok := p.(int64); ok {
			move.Parent = &id
		}
	}
	res.Version = cur.Version
	if move != nil && !im.opt.DryRun {
		// The row's other fields may have landed in an earlier import whose move did not
		// (another writer changed the tree in between): that import left the row's key
		// unclaimed, and this one finishes the row.
		k, err := im.st.FindKey(ctx, store.ScopeAPI, fieldsKey(key))
		if err == nil && k.Status == store.KeyCompleted {
			r, err := im.resume(ctx, res, row, *move, key, k, actor.Role)
			return r, false, err
		}
		if err != nil && store.ErrorCode(err) != store.ENOTFOUND {
			return res, false, err
		}
	}
	if row.Version > cur.Version {
		// Versions only grow, by one per write: the row cannot have been edited from a
		// version the store never had. Not a conflict that a merge could settle.
		return im.invalid(res, rowErrorf("version %d: %s %d has never been at that version (the store is at version %d); "+
			"give the version the row was exported at, or none", row.Version, row.Kind, row.ID, cur.Version)), false, nil
	}
	if len(set) == 0 && move == nil {
		res.Outcome, res.Message = Unchanged, note
		return res, false, nil
	}
	base := row.Version
	if base == 0 {
		base = cur.Version // no version column: the row's values win, checked against this read
	}
	if base != cur.Version {
		if !im.opt.Merge {
			changed, known, err := im.rowChanges(ctx, row, set)
			if err != nil {
				return res, false, err
			}
			if known && len(changed) == 0 && move == nil {
				// The row holds what version base held: it edits nothing, so the store's
				// newer values stand (what a three-way merge would say).
				res.Outcome = Unchanged
				res.Message = fmt.Sprintf("the row edits nothing of version %d; the store has moved on to version %d (last written by %s), which stays",
					base, cur.Version, cur.UpdatedBy)
				return res, false, nil
			}
			changes := "the row changes " + strings.Join(changed, ", ")
			if !known {
				changes = "the row differs from the store in " + strings.Join(changed, ", ") +
					fmt.Sprintf(" (version %d kept no history to tell its changes from others')", row.Version)
			} else if len(changed) == 0 {
				changes = "the row moves the " + string(row.Kind)
			}
			res.Outcome = Conflict
			res.Message = fmt.Sprintf("edited from version %d, but the store is at version %d (last written by %s); %s; nothing written (--merge merges)",
				base, cur.Version, cur.UpdatedBy, changes)
			return res, false, nil
		}
		note = strings.TrimSpace("merged with the changes since version " + strconv.FormatInt(row.Version, 10) + ". " + note)
		return im.mergeAndWrite(ctx, res, pos, row, cur, move, note, actor.Role, key)
	}
	return im.write(ctx, res, pos, row, base, set, move, note, actor.Role, key)
}

// write saves set on version base (and makes the move, when the row has one), checked as
// the store would, or in a dry run reports what it would write. retry is set when the record
// changed between the read and the write and the row may be applied again to a fresh read.
func (im *Importer) write(ctx context.Context, res Result, pos int, row *Row, base int64, set store.Values, move *store.Move, note string, role store.Role, key string) (_ Result, retry bool, _ error) {
	u := store.Update{BaseVersion: base, Set: set, IdempotencyKey: key}
	if move != nil {
		// The fields' save gets a key of its own: the row's key is completed only once the
		// move has landed too (updateAndMove).
		u.IdempotencyKey = fieldsKey(key)
	}
	if len(set) > 0 {
		if err := im.reg.CheckUpdate(row.Kind, role, u); err != nil {
			return im.invalid(res, err), false, nil
		}
	}
	if move != nil {
		// Decided before anything is written, so that a move the store would refuse leaves
		// the whole row unwritten.
		if err := im.checkMove(ctx, row.Kind, row.ID, *move); err != nil {
			r, err := im.refused(res, err)
			return r, false, err
		}
	}
	res.Fields = u.FieldNames()
	if move != nil {
		res.Fields = append(res.Fields, store.ParentField)
	}
	res.Outcome, res.Message = Updated, note
	if im.opt.DryRun {
		if err := im.checkUnique(ctx, row.Kind, row.ID, set); err != nil {
			r, err := im.refused(res, err)
			return r, false, err
		}
		if err := im.checkRefs(ctx, row.Kind, set); err != nil {
			r, err := im.refused(res, err)
			return r, false, err
		}
		r, retry, err := im.dryLeases(ctx, res, row, set)
		if err == nil && r.Outcome == Updated {
			// The version the write would make: one for the fields, one for a move (a
			// leased row keeps the version it found, as a real run reports it).
			if len(set) > 0 {
				r.Version++
			}
			if move != nil {
				r.Version++
				err = im.placed(ctx, row.Kind, row.ID, move.NewParent())
			}
			im.tookUnique(row.Kind, row.ID, pos, set)
		}
		return r, retry, err
	}
	if move != nil {
		return im.updateAndMove(ctx, res, row, u, *move, key)
	}
	if im.pending != nil {
		*im.pending = append(*im.pending, store.RecordUpdate{Kind: row.Kind, ID: row.ID, Update: u})
		return res, false, nil
	}
	ur, err := im.st.UpdateRecord(ctx, row.Kind, row.ID, u)
	if store.ErrorCode(err) == store.ECONFLICT && (row.Version == 0 || im.opt.Merge) {
		return im.retryConflict(res, row)
	}
	if err != nil {
		r, err := im.refused(res, err)
		return r, false, err
	}
	if ur.Replayed {
		// Another import of the same row (the same key) saved it between this one's look
		// at the key and its save: this one wrote nothing.
		return replayedAs(res, store.ResultOf(ur), ur.Record), false, nil
	}
	res.Version = ur.Version
	return res, false, nil
}

// retryConflict reports a save refused because another writer got in since the read: Apply
// reads again and retries, and reports this conflict when it gives up.
func (im *Importer) retryConflict(res Result, row *Row) (Result, bool, error) {
	res.Outcome, res.Fields = Conflict, nil
	res.Message = fmt.Sprintf("%s %d kept changing while the import wrote it (%d tries); nothing written", row.Kind, row.ID, maxRetries+1)
	return res, true, nil
}

// fieldsKey is the idempotency key of the save of a row's fields when the row also moves a
// record: the row's own key (key) is completed once the move has landed too.
func fieldsKey(key string) string { return key + ":fields" }

// updateAndMove applies a row that moves a record of a tree kind (and may change its other
// fields: u), checked before (checkMove). The store writes a save and a move in two
// transactions, so the row is made one unit by its key: the row's key is claimed first
// (another import of the same row waits for it or replays it), the fields are saved under a
// key of their own, then the move is made, and only then is the row's key completed. When
// the move is refused after the fields landed (another writer changed the tree since the
// check), the row is reported with the move's refusal and what was written, and its key is
// released: the next import of the file finishes the row (resume) instead of calling it
// imported.
func (im *Importer) updateAndMove(ctx context.Context, res Result, row *Row, u store.Update, m store.Move, key string) (Result, bool, error) {
	if r, ok, err := im.takeRow(ctx, res, row, key); !ok {
		return r, false, err
	}
	return im.saveAndMove(ctx, res, row, u, m, key)
}

// takeRow claims the row's key (claimRow). ok is false when the row is not this import's to
// apply, with its result: imported before (by another import, or an earlier one), another
// import still applying it, or a key used for another request.
func (im *Importer) takeRow(ctx context.Context, res Result, row *Row, key string) (_ Result, ok bool, _ error) {
	claim, err := im.claimRow(ctx, key, "import-row:"+row.Digest)
	switch {
	case store.ErrorCode(err) == store.EBUSY:
		res.Outcome, res.Fields = Conflict, nil
		res.Message = "another import has been applying this row for seconds (it holds the row's key); nothing written; import again to see what became of it"
		return res, false, nil
	case store.ErrorCode(err) == store.EINVALID: // the key was used for another request
		r, err := im.refused(res, err)
		return r, false, err
	case err != nil:
		return res, false, err
	case !claim.Claimed:
		r, err := im.replayed(ctx, res, &claim.Record)
		return r, false, err
	}
	return res, true, nil
}

// release gives the row's key back when the row did not land. A failure to release is not
// the row's: the claim then lapses after its pending lifetime.
func (im *Importer) release(ctx context.Context, key string) {
	_ = im.st.FailKey(ctx, store.ScopeAPI, key)
}

// saveAndMove saves the row's fields (u, under fieldsKey) and moves the record, with the
// row's key claimed (takeRow), then completes the key; it releases the key when the row does
// not land.
func (im *Importer) saveAndMove(ctx context.Context, res Result, row *Row, u store.Update, m store.Move, key string) (Result, bool, error) {
	release := func() { im.release(ctx, key) }
	var saved *store.UpdateResult
	if len(u.Set) > 0 {
		ur, err := im.st.UpdateRecord(ctx, row.Kind, row.ID, u)
		if err != nil {
			release()
			if store.ErrorCode(err) == store.ECONFLICT && (row.Version == 0 || im.opt.Merge) {
				return im.retryConflict(res, row)
			}
			r, err := im.refused(res, err)
			return r, false, err
		}
		saved, res.Version = ur, ur.Version
	}
	mr, err := im.st.MoveRecord(ctx, row.Kind, row.ID, m)
	if err != nil {
		release()
		r, rerr := im.refused(res, err)
		if rerr != nil || saved == nil || saved.Unchanged {
			return r, false, rerr
		}
		r.Version = saved.Version
		r.Message = fmt.Sprintf("%s written (version %d), but the move was refused: %v; the row is not finished and not counted as imported: import the file again to finish it",
			strings.Join(u.FieldNames(), ", "), saved.Version, err)
		return r, false, nil
	}
	res.Version = mr.Record.Version
	if mr.Unchanged {
		res.Fields = slices.DeleteFunc(res.Fields, func(s string) bool { return s == store.ParentField })
	}
	if len(res.Fields) == 0 {
		res.Outcome = Unchanged
	}
	im.tree(row.Kind).place(row.ID, parentOf(mr.Record))
	done := store.KeyResult{Kind: row.Kind, ID: row.ID, Version: res.Version, Unchanged: res.Outcome == Unchanged}
	if err := im.st.CompleteKey(ctx, store.ScopeAPI, key, done.Encode(), 0); err != nil {
		return res, false, fmt.Errorf("%s %d: the row landed, but its key was not recorded: %w", row.Kind, row.ID, err)
	}
	return res, false, nil
}

// claimRow claims the row's key (scope api) for the request hash. Another import holding it
// (the same file imported twice at once) is waited for, a few seconds at most, so that the
// row is reported as that import left it; EBUSY when it still holds it then.
func (im *Importer) claimRow(ctx context.Context, key, hash string) (*store.Claim, error) {
	for wait := 50 * time.Millisecond; ; wait *= 2 {
		claim, err := im.st.ClaimKey(ctx, store.ScopeAPI, key, hash, 0)
		if store.ErrorCode(err) != store.EBUSY || wait > 2*time.Second {
			return claim, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
	}
}

// resume finishes a row whose fields an earlier import saved (under fieldsKey, whose
// completed key is k) but whose move it did not make. It takes the row's key first (another
// import may be finishing it right now) and reads the record again: the move is made when the
// record is as that save left it (or, for a row without a version column, holds the row's
// values still); otherwise the row is a conflict and nothing is written.
func (im *Importer) resume(ctx context.Context, res Result, row *Row, m store.Move, key string, k *store.KeyRecord, role store.Role) (Result, error) {
	kr, err := store.DecodeKeyResult(k.Result)
	if err != nil {
		return res, err
	}
	if r, ok, err := im.takeRow(ctx, res, row, key); !ok {
		return r, err
	}
	cur, err := im.st.FindRecord(ctx, row.Kind, row.ID)
	if err != nil {
		im.release(ctx, key)
		if store.ErrorCode(err) == store.ENOTFOUND {
			return im.refused(res, err)
		}
		return res, err
	}
	res.Version = cur.Version
	set, _ := im.writable(row.Kind, role, row.Set, cur.Fields)
	delete(set, store.ParentField)
	earlier := fmt.Sprintf("an earlier import of this row wrote its other fields (version %d) but not its move", kr.Version)
	if cur.Version != kr.Version && (row.Version != 0 || len(set) > 0) {
		im.release(ctx, key)
		res.Outcome = Conflict
		res.Message = fmt.Sprintf("%s; the store has moved on to version %d (last written by %s), so the move is not made; nothing written",
			earlier, cur.Version, cur.UpdatedBy)
		return res, nil
	}
	if err := im.checkMove(ctx, row.Kind, row.ID, m); err != nil {
		im.release(ctx, key)
		r, rerr := im.refused(res, err)
		r.Message = earlier + "; " + r.Message
		return r, rerr
	}
	res.Fields = []string{store.ParentField}
	res.Outcome = Updated
	r, _, err := im.saveAndMove(ctx, res, row, store.Update{}, m, key)
	if err == nil && r.Outcome == Updated {
		r.Message = earlier + "; the move finishes the row"
	}
	return r, err
}

// rowChanges says which fields a stale row changes: those of set (its values that differ
// from the store's) that differ from what the row was edited from, its base values or else
// the store's history version its version names. Fields changed by others since are not the
// row's changes. Without a base (known false) it names every field of set, as differing from
// the store. The names are sorted.
func (im *Importer) rowChanges(ctx context.Context, row *Row, set store.Values) (changed []string, known bool, err error) {
	base := row.Base
	if base == nil {
		v, err := im.st.FindVersion(ctx, row.Kind, row.ID, row.Version)
		if store.ErrorCode(err) == store.ENOTFOUND {
			return slices.Sorted(mapKeys(set)), false, nil
		}
		if err != nil {
			return nil, false, err
		}
		base = v.Snapshot
	}
	for name, v := range set {
		if b, ok := base[name]; !ok || !store.Equal(b, v) {
			changed = append(changed, name)
		}
	}
	slices.Sort(changed)
	return changed, true, nil
}

// mergeAndWrite merges a stale row with the record as it is (cur), field by field by each
// field's rule, and writes the merge on cur's version; when another writer got in between,
// it merges again with what that writer saved (store/resave, which bounds the rounds). Base
// is what the row was edited from (its base values, else the history version its version
// names), mine the row's fields role may write (the others are left as they are; the report
// names them), theirs the store. A merge in which both sides changed a field apart, or with
// no base, writes nothing and is reported as a conflict.
func (im *Importer) mergeAndWrite(ctx context.Context, res Result, pos int, row *Row, cur *store.Record, move *store.Move, note string, role store.Role, key string) (Result, bool, error) {
	base := row.Base
	if base == nil {
		v, err := im.st.FindVersion(ctx, row.Kind, row.ID, row.Version)
		if store.ErrorCode(err) == store.ENOTFOUND {
			res.Outcome = Conflict
			res.Message = fmt.Sprintf("edited from version %d, the store is at version %d, and there is no base to merge with: the row has no base.<field> values and version %d kept no history (export --base writes them)",
				row.Version, cur.Version, row.Version)
			return res, false, nil
		}
		if err != nil {
			return res, false, err
		}
		base = v.Snapshot
	}
	mine, b := store.Values{}, store.Values{}
	for name, v := range row.Set {
		if f, err := im.reg.Field(row.Kind, name); err != nil || (name == store.ParentField && im.reg.Tree(row.Kind)) || !f.Writable(role) {
			continue
		}
		mine[name], b[name] = v, base[name]
	}
	var written Result
	out, err := resave.Merge(ctx, im.reg, row.Kind, b, mine, cur, func(ctx context.Context, theirs *store.Record, changes store.Values) (*store.Record, error) {
		r := res
		r.Version = theirs.Version
		if len(changes) == 0 && move == nil {
			r.Outcome, r.Message = Unchanged, note
			written = r
			return theirs, nil
		}
		r, retry, err := im.write(ctx, r, pos, row, theirs.Version, changes, move, note, role, key)
		if err != nil {
			return nil, err
		}
		if retry {
			now, err := im.st.FindRecord(ctx, row.Kind, row.ID)
			if err != nil {
				return nil, err
			}
			return nil, &store.ConflictError{Kind: row.Kind, ID: row.ID, BaseVersion: theirs.Version, Current: now}
		}
		written = r
		return theirs, nil
	})
	var kept *resave.KeptChangingError
	switch {
	case errors.As(err, &kept):
		res.Outcome, res.Fields, res.Version = Conflict, nil, kept.Last.Current.Version
		res.Message = fmt.Sprintf("%s %d kept changing while the import merged and wrote it (%d merged saves); nothing written", row.Kind, row.ID, kept.Rounds)
		return res, false, nil
	case store.ErrorCode(err) == store.ENOTFOUND:
		return res, true, nil // deleted in between: Apply reads again (and creates it)
	case err != nil:
		return res, false, err
	case out.Collisions != nil:
		res.Outcome, res.Version = Conflict, out.Theirs.Version
		res.Message = fmt.Sprintf("edited from version %d, the store is at version %d (by %s), and both changed %s; nothing written",
			row.Version, out.Theirs.Version, out.Theirs.UpdatedBy, strings.Join(out.Collisions, ", "))
		return res, false, nil
	}
	return written, false, nil
}

// dryLeases reports a dry run's update as leased when a live lease covers a group it writes.
func (im *Importer) dryLeases(ctx context.Context, res Result, row *Row, set store.Values) (Result, bool, error) {
	leases, now, err := im.st.FindLeases(ctx, store.LeaseFilter{Kind: row.Kind, RecordID: row.ID})
	if err != nil {
		return res, false, err
	}
	groups := im.reg.UpdateGroups(row.Kind, store.Update{Set: set})
	for _, l := range leases {
		if l.Live(now) && slices.Contains(groups, l.Group) {
			// The words of the store's refusal, as a real run reports it (refused).
			res.Outcome, res.Holder, res.Fields = Leased, l.Holder, nil
			res.Message = (&store.LeaseError{Lease: l, Now: now}).Error() + "; nothing written"
			return res, false, nil
		}
	}
	return res, false, nil
}

// writable returns the row's values a writer in role may write and that differ from cur
// (all of them when cur is nil, except zero values of fields the role may not write), and
// the names of differing fields the role may not write: those are left as they are, and
// the report says so.
func (im *Importer) writable(kind store.Kind, role store.Role, vals, cur store.Values) (store.Values, []string) {
	out := store.Values{}
	var skipped []string
	for name, v := range vals {
		f, err := im.reg.Field(kind, name)
		if err != nil {
			continue // the reader checked every name
		}
		if cur != nil && store.Equal(cur[name], v) {
			continue
		}
		if !f.Writable(role) {
			if cur != nil || !store.Equal(f.Zero(), v) {
				skipped = append(skipped, name)
			}
			continue
		}
		out[name] = v
	}
	slices.Sort(skipped)
	return out, skipped
}

// defaultsNote tells which fields of a created record got their default for an empty cell.
func defaultsNote(reg *store.Registry, row *Row) string {
	if len(row.Empty) == 0 {
		return ""
	}
	parts := make([]string, 0, len(row.Empty))
	for _, name := range row.Empty {
		f, err := reg.Field(row.Kind, name)
		if err != nil {
			continue
		}
		parts = append(parts, name+"="+f.Format(f.Zero()))
	}
	return "empty cells take the default: " + strings.Join(parts, ", ") + "."
}

// emptyError is the error of a row that updates kind id with empty cells of fields that
// have no empty value.
func emptyError(names []string, kind store.Kind, id int64) error {
	return rowErrorf("%s: an empty cell, but %s %d exists and this field has no empty value (an empty cell means the default only on a row that creates a record); write a value, or leave the column out",
		strings.Join(names, ", "), kind, id)
}

// skippedNote tells which fields the role may not write were left alone.
func skippedNote(skipped []string, role store.Role) string {
	if len(skipped) == 0 {
		return ""
	}
	other := store.RoleSystem
	if role == store.RoleSystem {
		other = store.RoleEditor
	}
	return fmt.Sprintf("not written, owned by %s: %s (import again with --as %s)", other, strings.Join(skipped, ", "), other)
}

// invalid reports a row refused for bad input.
func (im *Importer) invalid(res Result, err error) Result {
	res.Outcome, res.Message, res.Fields, res.LeftAlone = Invalid, err.Error(), nil, nil
	return res
}

// refused turns a store's refusal of a row into its outcome; other errors stop the import.
func (im *Importer) refused(res Result, err error) (Result, error) {
	res.Fields, res.LeftAlone = nil, nil
	var le *store.LeaseError
	switch {
	case errors.As(err, &le):
		res.Outcome, res.Holder, res.Message = Leased, le.Lease.Holder, err.Error()+"; nothing written"
	case store.ErrorCode(err) == store.ECONFLICT:
		res.Outcome, res.Message = Conflict, err.Error()
	case store.ErrorCode(err) == store.EFORBIDDEN && !errors.As(err, new(*store.OwnershipError)):
		res.Outcome, res.Message = Forbidden, err.Error()
	case store.ErrorCode(err) == store.EINVALID, store.ErrorCode(err) == store.EFORBIDDEN, store.ErrorCode(err) == store.ENOTFOUND:
		res.Outcome, res.Message = Invalid, err.Error()
	default:
		return res, err
	}
	return res, nil
}

// mapKeys returns m's keys.
func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// Summary counts the outcomes of an import.
type Summary map[Outcome]int

// ExitOutcome returns the outcome that decides an import's exit code: invalid rows first
// (2), then forbidden (6), leased (4), conflicts (3); "" when every row landed (0).
func (s Summary) ExitOutcome() Outcome {
	for _, o := range []Outcome{Invalid, Forbidden, Leased, Conflict} {
		if s[o] > 0 {
			return o
		}
	}
	return ""
}

// Source is an import file that ApplyAll reads more than once: a first pass checks that the
// file reads as a whole (so a file refused as a whole writes nothing), an --all-or-nothing
// import decides every row in a second, and the last applies them. No pass keeps more than
// one row in memory.
type Source struct {
	format Format
	reg    *store.Registry
	r      io.Reader
	seek   io.Seeker // where each pass starts again (a regular file, or the spool)
	start  int64
	first  io.Reader // the first pass's input, when it is not r as it is
	spool  *os.File  // a copy of a pipe's bytes, made during the first pass
	passes int
	rows   int // the file's rows, once Scan has counted them
	err    error
	digest fileDigest // of the first pass's bytes, which every later pass checks
	rec    *recorder  // the first pass's
	raw    bool       // CSV text cells are read as they are (Reader.ReadRawCells)
}

// ReadRawCells makes every pass read CSV text cells as they are, not undefused (see
// Reader.ReadRawCells). Call it before the first pass.
func (s *Source) ReadRawCells() { s.raw = true }

// newReader returns a Reader of r for one pass.
func (s *Source) newReader(r io.Reader) (*Reader, error) {
	x, err := NewReader(r, s.format, s.reg)
	if err == nil && s.raw {
		x.ReadRawCells()
	}
	return x, err
}

// NewSource returns a Source reading r in format. A regular file (or another io.Seeker that
// is not an *os.File) is read again from where it stands for each pass; anything else (a
// pipe, a terminal, /dev/stdin) is copied to a temporary file as the first pass reads it,
// and later passes read the copy. A row over MaxRowBytes stops the first pass, so at most
// that much more than the file's rows is ever copied.
func NewSource(r io.Reader, format Format, reg *store.Registry) (*Source, error) {
	if _, err := ParseFormat(string(format)); err != nil {
		return nil, err
	}
	s := &Source{format: format, reg: reg, r: r}
	seeker, ok := r.(io.Seeker)
	if f, isFile := r.(*os.File); isFile {
		fi, err := f.Stat()
		ok = err == nil && fi.Mode().IsRegular()
	}
	if ok {
		start, err := seeker.Seek(0, io.SeekCurrent)
		if err != nil {
			return nil, fmt.Errorf("import: %w", err)
		}
		s.seek, s.start = seeker, start
		return s, nil
	}
	spool, err := os.CreateTemp("", "tandem-import-*")
	if err != nil {
		return nil, fmt.Errorf("import: a temporary copy of the input: %w", err)
	}
	// Removed at once where the system allows (the open file stays readable), so that even
	// a killed import leaves nothing behind; Close removes it otherwise.
	os.Remove(spool.Name())
	s.spool, s.first, s.seek = spool, io.TeeReader(r, spool), spool
	return s, nil
}

// Close removes the temporary copy of a pipe's bytes, if one was made.
func (s *Source) Close() error {
	if s.spool == nil {
		return nil
	}
	err := s.spool.Close()
	if rerr := os.Remove(s.spool.Name()); rerr != nil && !errors.Is(rerr, os.ErrNotExist) && err == nil {
		err = rerr
	}
	return err
}

// open starts a pass over the file's rows from its first one. The first pass records a
// digest of the bytes it reads; every later pass reads through a check of that digest, so a
// file changed in between (or while a pass reads it) stops that pass with errFileChanged
// before any of the changed bytes becomes a row.
func (s *Source) open() (*Reader, error) {
	s.passes++
	if s.passes == 1 {
		r := s.r
		if s.first != nil {
			r = s.first
		}
		s.rec = newRecorder(r, &s.digest)
		return s.newReader(s.rec)
	}
	if !s.digest.done {
		return nil, fmt.Errorf("import: the file was not read whole before (Source.Scan)")
	}
	if _, err := s.seek.Seek(s.start, io.SeekStart); err != nil {
		return nil, fmt.Errorf("import: read the file again: %w", err)
	}
	r := s.r
	if s.spool != nil {
		r = s.spool
	}
	return s.newReader(newVerifier(r, &s.digest))
}

// Scan reads every row of the file, keeping none, and returns how many there are; a
// problem of the file (see Reader) is returned: such a file is not imported at all. It is
// ApplyAll's first pass; a caller may make it first (to tell a file's problem from a row's,
// or to size a progress bar), and ApplyAll then does not read the file again for it.
func (s *Source) Scan() (int, error) {
	if s.passes > 0 {
		return s.rows, s.err
	}
	x, err := s.open()
	if err != nil {
		s.err = err
		return 0, err
	}
	x.scan = true // the rows are counted here and parsed by the pass that applies them
	for {
		_, err := x.Next()
		if err == io.EOF {
			if err := s.rec.finish(); err != nil {
				s.rows, s.err = 0, err
				return 0, err
			}
			return s.rows, nil
		}
		if err != nil {
			s.rows, s.err = 0, err
			return 0, err
		}
		s.rows++
	}
}

// Report holds an import's results, one per row in file order, in a temporary file, so that
// an import of any size reports every row without holding the rows' results in memory. Its
// Summary is kept as rows are added.
type Report struct {
	f          *os.File
	w          *bufio.Writer
	enc        *gob.Encoder
	n          int
	sum        Summary
	notWritten bool
	why        string // why rows were not written (notWrittenWhy, or the file changed)
}

// NewReport returns an empty Report; Close removes its file.
func NewReport() (*Report, error) {
	f, err := os.CreateTemp("", "tandem-import-report-*")
	if err != nil {
		return nil, fmt.Errorf("import report: %w", err)
	}
	os.Remove(f.Name()) // where the system allows: nothing is left behind, even when killed
	r := &Report{f: f}
	r.reset()
	return r, nil
}

// reset empties the report.
func (r *Report) reset() error {
	if r.n > 0 {
		if err := r.f.Truncate(0); err != nil {
			return fmt.Errorf("import report: %w", err)
		}
		if _, err := r.f.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("import report: %w", err)
		}
	}
	r.w = bufio.NewWriterSize(r.f, 64<<10)
	r.enc = gob.NewEncoder(r.w) // a new stream: the type is described again
	r.n, r.sum, r.notWritten = 0, Summary{}, false
	return nil
}

// Add appends the result of the next row (ApplyAll adds every row it reads).
func (r *Report) Add(res Result) error {
	if err := r.enc.Encode(&res); err != nil {
		return fmt.Errorf("import report: %w", err)
	}
	r.n++
	r.sum[res.Outcome]++
	return nil
}

// Len returns how many rows the report holds.
func (r *Report) Len() int { return r.n }

// Summary counts the rows' outcomes.
func (r *Report) Summary() Summary {
	s := Summary{}
	for o, n := range r.sum {
		if r.notWritten && (o == Created || o == Updated) {
			o = NotWritten
		}
		s[o] += n
	}
	return s
}

// Each calls fn with every row's result in file order, stopping at fn's first error. After
// an --all-or-nothing import that wrote nothing, rows that would have landed are NotWritten,
// their message saying what they would have done and why they did not.
func (r *Report) Each(fn func(Result) error) error {
	if err := r.w.Flush(); err != nil {
		return fmt.Errorf("import report: %w", err)
	}
	if _, err := r.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("import report: %w", err)
	}
	defer r.f.Seek(0, io.SeekEnd)
	dec := gob.NewDecoder(bufio.NewReaderSize(r.f, 64<<10))
	for i := 0; i < r.n; i++ {
		var res Result
		if err := dec.Decode(&res); err != nil {
			return fmt.Errorf("import report: row %d: %w", i+1, err)
		}
		if r.notWritten && (res.Outcome == Created || res.Outcome == Updated) {
			res.Message = strings.TrimSpace(fmt.Sprintf("would be %s; %s. %s", res.Outcome, r.why, res.Message))
			res.Outcome = NotWritten
		}
		if err := fn(res); err != nil {
			return err
		}
	}
	return nil
}

// Close removes the report's file.
func (r *Report) Close() error {
	err := r.f.Close()
	if rerr := os.Remove(r.f.Name()); rerr != nil && !errors.Is(rerr, os.ErrNotExist) && err == nil {
		err = rerr
	}
	return err
}

// notWrittenWhy is why an --all-or-nothing import held a row back; notWrittenChanged why
// it did when the file changed during the check.
const (
	notWrittenWhy     = "not written: --all-or-nothing, and other rows would not land"
	notWrittenChanged = "not written: --all-or-nothing, and the file changed during the check"
)

// ApplyAll applies the rows of src in file order, a batch of rows to a transaction where the
// store allows it (importbatch.go), else one transaction per row, adding each row's result to
// rep and calling progress (when not nil) with the rows done once they have committed. It
// first reads the whole file (src.Scan, keeping no row): a file that cannot be read as a
// whole returns its error and nothing is written. With allOrNothing every
// row is then decided as a dry run would (reading the store, writing nothing); if any row
// would not land, nothing is written and the rows that would have landed are reported
// NotWritten. Then the rows are applied. That is not one transaction: a writer
// that changes a record between the check and the write can still make a row conflict (or be
// leased) after earlier rows landed; the report then says exactly which rows landed, and a
// re-run with the same key prefix finishes the rest without applying any row twice.
func (im *Importer) ApplyAll(ctx context.Context, src *Source, allOrNothing bool, progress func(int), rep *Report) error {
	total, err := src.Scan()
	if err != nil {
		return err
	}
	if allOrNothing && !im.opt.DryRun {
		check := NewImporter(im.st, ImportOptions{KeyPrefix: im.opt.KeyPrefix, Merge: im.opt.Merge, DryRun: true})
		err := check.apply(ctx, src, total, progress, rep)
		if err != nil || rep.Summary().ExitOutcome() != "" {
			rep.notWritten, rep.why = true, notWrittenWhy
			if errors.Is(err, errFileChanged) {
				rep.why = notWrittenChanged
			}
			return err
		}
		if err := rep.reset(); err != nil {
			return err
		}
	}
	return im.apply(ctx, src, total, progress, rep)
}

// apply makes one pass over src's rows (total of them, as the first pass counted),
// applying each and adding its result to rep.
func (im *Importer) apply(ctx context.Context, src *Source, total int, progress func(int), rep *Report) error {
	x, err := src.open()
	if err != nil {
		return err
	}
	if b, ok := im.st.(store.Batcher); ok && !im.opt.DryRun && im.batchRows() > 1 {
		return im.applyBatches(ctx, b, x, total, progress, rep)
	}
	for i := 0; ; i++ {
		row, err := x.Next()
		if err == io.EOF {
			return nil
		}
		if err == nil && i >= total {
			err = fileErrorf(row.Line, "the file has more rows than when it was first read")
		}
		if err != nil {
			return im.changed(i, err)
		}
		r, err := im.Apply(ctx, i, row)
		if err != nil {
			return fmt.Errorf("line %d: %w", row.Line, err)
		}
		if err := rep.Add(r); err != nil {
			return err
		}
		if progress != nil {
			progress(i + 1)
		}
	}
}

// changed explains a later pass's stop after i rows: the file is not what the first pass
// read. A pass that writes says that the rows reported so far landed and the rest did not.
func (im *Importer) changed(i int, err error) error {
	what := "nothing was written"
	if !im.opt.DryRun && i > 0 {
		what = fmt.Sprintf("the %s reported above were applied before the change was seen and no later row was written", rowsOf(i))
	}
	var ce *changedError
	if errors.As(err, &ce) {
		err = ce // without the reader's "read CSV: "
	} else {
		err = fmt.Errorf("the file changed while it was imported: %w", err)
	}
	return &store.Error{Code: store.EINVALID, Message: fmt.Sprintf("%v; %s. Import it again once it no longer changes (rows already applied replay as unchanged)", err, what), Err: err}
}

// rowsOf is "1 row" or "n rows".
func rowsOf(n int) string {
	if n == 1 {
		return "1 row"
	}
	return strconv.Itoa(n) + " rows"
}
