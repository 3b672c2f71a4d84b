package exchange

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/tandem-editor/tandem/store"
)

// The bulk path: rows applied a batch at a time, many rows to one transaction of the store
// (store.Batcher), each row's writes as one row by row makes them, each in a savepoint, so
// that every row ends as it would alone (created, updated, unchanged, conflict, leased or
// invalid, for the same reasons) and the store's checks, history versions, changes and keys
// are the ones the row's own writes make. What changes is what a row's reads see: the
// store's reads do not see the batch's writes before it commits, so a batch ends before a
// row that reads what an earlier row of the batch wrote (the same record again), and a
// row that moves a record of a tree kind (its checks read the tree, and its writes are a
// claimed unit of their own: updateAndMove) runs alone, outside any batch. Results reach
// the report, and the progress, once their batch has committed. A store that can
// (store.KeyLister) is asked once per chunk of rows which of their idempotency keys it
// holds; only those rows' keys are read one by one.
//
// Rows that make new records (no id, a key the store did not hold) go to a store that can
// (store.BulkCreator) many at once (createAll): each planned as Apply plans it, the valid
// ones created by the store's set-based path, and a row the store leaves out (a check
// refused it, or it needs reads of its own: a parent) created or refused by CreateRecord in
// its place among them, so the records, their ids, history versions and changes come in
// the file's order, as row by row.
//
// Rows that update records the chunk read go, on a store that can (store.BulkUpdater), a
// run at a time through updateAll: each row decided by Apply as it always is, the saves it
// would hand UpdateRecord taken aside and made by the store many at once, and a save the
// store leaves (not plain: a unique field, a ref, a lease row…) made by Apply again, in
// its place among them.

// DefaultBatchRows is how many rows at most one transaction of an import holds: enough that
// a commit's cost is shared by many rows, few enough that other writers wait well under a
// second for the batch and that a batch's rows are all the memory an import holds.
const DefaultBatchRows = 1000

// maxBatchTime ends a batch early, whatever its rows: other writers wait for a batch to
// commit (SQLite's write lock, PostgreSQL's change log), so on a slow or loaded machine a
// batch commits after this long and the next one goes on.
const maxBatchTime = 250 * time.Millisecond

// batchRows returns the rows per batch of this import; 1 or less applies one row at a time.
func (im *Importer) batchRows() int {
	if im.opt.BatchRows == 0 {
		return DefaultBatchRows
	}
	return im.opt.BatchRows
}

// posRow is a row of the file and its position (0 for the first).
type posRow struct {
	pos int
	row *Row
}

// recordOf names a record.
type recordOf struct {
	kind store.Kind
	id   int64
}

// applyBatches is apply's pass through b, batchRows rows read at a time: it reads them,
// applies them (applyChunk), then reads the next.
func (im *Importer) applyBatches(ctx context.Context, b store.Batcher, x *Reader, total int, progress func(int), rep *Report) (err error) {
	n := im.batchRows()
	if bl, ok := im.st.(store.BulkLoader); ok && !im.opt.DryRun {
		if im.loader, err = bl.OpenLoader(ctx); err != nil {
			return err
		}
		if im.loader != nil {
			defer func() {
				err = errors.Join(err, im.loader.Close())
				im.loader = nil
			}()
		}
	}
	rows := make([]posRow, 0, n)
	for i := 0; ; {
		rows = rows[:0]
		var stop error
		for len(rows) < n {
			row, err := x.Next()
			if err == io.EOF {
				stop = io.EOF
				break
			}
			if err == nil && i >= total {
				err = fileErrorf(row.Line, "the file has more rows than when it was first read")
			}
			if err != nil {
				stop = err
				break
			}
			rows = append(rows, posRow{i, row})
			i++
		}
		// The rows read before the end of the file, or before it was found changed, are
		// applied, as row by row they would have been.
		if err := im.applyChunk(ctx, b, rows, progress, rep); err != nil {
			return err
		}
		switch {
		case stop == io.EOF:
			return nil
		case stop != nil:
			return im.changed(i, stop)
		}
	}
}

// applyChunk applies rows (in file order) in as few batches as their reads allow, and adds
// their results to rep once each batch has committed. A batch the store refuses as a whole
// (its commit failed, a deadlock: nothing of it stays) is applied again one row at a time.
func (im *Importer) applyChunk(ctx context.Context, b store.Batcher, rows []posRow, progress func(int), rep *Report) error {
	if err := im.listKeys(ctx, rows); err != nil {
		return err
	}
	if err := im.readRecords(ctx, rows); err != nil {
		return err
	}
	defer func() { im.absent, im.read = nil, nil }()
	done := func(pr posRow, r Result) error {
		if err := rep.Add(r); err != nil {
			return err
		}
		if progress != nil {
			progress(pr.pos + 1)
		}
		return nil
	}
	one := func(pr posRow) error {
		r, err := im.Apply(ctx, pr.pos, pr.row)
		if err != nil {
			return fmt.Errorf("line %d: %w", pr.row.Line, err)
		}
		return done(pr, r)
	}
	var results []Result
	for start := 0; start < len(rows); {
		if im.alone(rows[start].row) {
			if err := one(rows[start]); err != nil {
				return err
			}
			start++
			continue
		}
		if im.loader != nil {
			// New records first go to the store's load, outside any batch: each of its
			// calls is a transaction of its own.
			if run := im.newRecords(ctx, rows[start:]); len(run) > 0 {
				rs, err := im.createAll(ctx, run, im.loader, true)
				if err != nil {
					return err
				}
				for k, r := range rs {
					if err := done(rows[start+k], r); err != nil {
						return err
					}
				}
				if len(rs) > 0 {
					start += len(rs)
					continue
				}
			}
		}
		end, runs := start, 0
		err := b.WriteBatch(ctx, func(bctx context.Context) error {
			if runs++; runs > 1 {
				// The store runs the batch again from its start (store.Batcher): what the
				// view of the trees took from the first run is forgotten.
				im.view.trees = nil
			}
			results = results[:0]
			written := map[recordOf]bool{}
			began := time.Now()
			for end = start; end < len(rows); end++ {
				pr := rows[end]
				if im.alone(pr.row) || pr.row.ID != 0 && written[recordOf{pr.row.Kind, pr.row.ID}] {
					return nil // its reads must see what the batch wrote: the next batch's
				}
				if end > start && time.Since(began) > maxBatchTime {
					return nil // others have waited long enough: the rest in the next batch
				}
				// A run of rows the store takes many at once: new records, or plain updates.
				var (
					rs  []Result
					err error
				)
				run := im.newRecords(bctx, rows[end:])
				if len(run) > 0 {
					rs, err = im.createAll(bctx, run, im.st.(store.BulkCreator), false)
				} else if run = im.plainUpdates(rows[end:], written); len(run) > 0 {
					rs, err = im.updateAll(bctx, run)
				}
				if err != nil {
					return err
				}
				if len(run) > 0 {
					results = append(results, rs...)
					for _, r := range rs {
						written[recordOf{r.Kind, r.ID}] = true
					}
					end += len(run) - 1
					continue
				}
				r, err := im.Apply(bctx, pr.pos, pr.row)
				if err != nil {
					return fmt.Errorf("line %d: %w", pr.row.Line, err)
				}
				if pr.row.ID == 0 && r.ID != 0 && written[recordOf{r.Kind, r.ID}] {
					// A row imported before (its key says so), whose record this batch
					// wrote since: it wrote nothing, and its report reads the record again
					// in the next batch, after this one's commit.
					return nil
				}
				results = append(results, r)
				if r.ID != 0 {
					written[recordOf{r.Kind, r.ID}] = true
				}
			}
			return nil
		})
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			// Nothing of the batch stays: its rows go one at a time, as without a batch.
			// What the import's view of the trees took from them is forgotten.
			im.view.trees = nil
			last := min(end+1, len(rows))
			for _, pr := range rows[start:last] {
				if err := one(pr); err != nil {
					return err
				}
			}
			start = last
			continue
		}
		for k, r := range results {
			if err := done(rows[start+k], r); err != nil {
				return err
			}
		}
		start = end
	}
	return nil
}

// alone reports whether row runs outside any batch: a row that may move a record of a tree
// kind (an update that names the parent).
func (im *Importer) alone(row *Row) bool {
	if row.ID == 0 || row.Err != nil || !im.reg.Tree(row.Kind) {
		return false
	}
	_, ok := row.Set[store.ParentField]
	return ok
}

// listKeys looks up the idempotency keys of rows in one read, on a store that can
// (store.KeyLister), and keeps in im.absent those it does not hold: most rows of a new
// import, whose one-by-one look-up (FindKey) would cost a query each.
func (im *Importer) listKeys(ctx context.Context, rows []posRow) error {
	kl, ok := im.st.(store.KeyLister)
	if !ok || len(rows) == 0 {
		return nil
	}
	actor, err := store.ActorFrom(ctx)
	if err != nil {
		return nil // Apply says so, row by row
	}
	keys := make([]string, 0, len(rows))
	for _, pr := range rows {
		if pr.row.Err == nil {
			keys = append(keys, im.Key(actor.Role, pr.pos, pr.row))
		}
	}
	held, err := kl.ListKeys(ctx, store.ScopeAPI, keys)
	if err != nil {
		return err
	}
	im.absent = make(map[string]bool, len(keys))
	for _, k := range keys {
		if !held[k] {
			im.absent[k] = true
		}
	}
	return nil
}

// newRecords returns the leading rows that make new records a store that creates in bulk
// (store.BulkCreator) may take at once: rows without an id whose keys the store did not
// hold when their chunk began (listKeys), outside a dry run. None when the store cannot.
func (im *Importer) newRecords(ctx context.Context, rows []posRow) []posRow {
	if _, ok := im.st.(store.BulkCreator); !ok || im.opt.DryRun {
		return nil
	}
	actor, err := store.ActorFrom(ctx)
	if err != nil {
		return nil
	}
	n := 0
	for n < len(rows) {
		row := rows[n].row
		if row.Err != nil || row.ID != 0 || !im.absent[im.Key(actor.Role, rows[n].pos, row)] {
			break
		}
		n++
	}
	return rows[:n]
}

// createAll applies rows that make new records (newRecords) as Apply would one by one, in
// order: each row planned (planCreate), the valid ones created by the store in bulk
// (store.BulkCreator), and each the store leaves to a create of its own (one its checks
// refuse) created, or refused, with CreateRecord, in its place among them.
//
// bc is the store in a batch, or outside any batch (load) its Loader (im.loader), each of
// whose calls commits on its own; when the Loader takes none of a call's records, createAll
// returns the results of the rows before that one's row alone, the rest being the
// batches' to apply.
func (im *Importer) createAll(ctx context.Context, rows []posRow, bc store.BulkCreator, load bool) ([]Result, error) {
	actor, err := store.ActorFrom(ctx)
	if err != nil {
		return nil, err
	}
	results := make([]Result, len(rows))
	var (
		recs []store.NewRecord
		of   []int // of[k] is the row of recs[k]
	)
	for i, pr := range rows {
		res := Result{Row: pr.row.Pos, Line: pr.row.Line, Kind: pr.row.Kind}
		opt := store.CreateOptions{IdempotencyKey: im.Key(actor.Role, pr.pos, pr.row)}
		res, vals, ok, err := im.planCreate(ctx, res, pr.row, actor, opt)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", pr.row.Line, err)
		}
		results[i] = res
		if ok {
			recs, of = append(recs, store.NewRecord{Kind: pr.row.Kind, Values: vals, Options: opt}), append(of, i)
		}
	}
	for len(recs) > 0 {
		created, err := bc.CreateRecords(ctx, recs)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", rows[of[0]].row.Line, err)
		}
		if load && len(created) == 0 {
			// The load took none (a check refused the first, or the kind is not the
			// load's): the rows from that one on go to the batches, which create or
			// refuse it as row by row would.
			return results[:of[0]], nil
		}
		for k, r := range created {
			if results[of[k]], err = im.createdAs(results[of[k]], r, nil); err != nil {
				return nil, err
			}
		}
		n := len(created)
		if n == len(recs) {
			break
		}
		r, err := im.st.CreateRecord(ctx, recs[n].Kind, recs[n].Values, recs[n].Options)
		if results[of[n]], err = im.createdAs(results[of[n]], r, err); err != nil {
			return nil, fmt.Errorf("line %d: %w", rows[of[n]].row.Line, err)
		}
		recs, of = recs[n+1:], of[n+1:]
	}
	return results, nil
}

// plainUpdates returns the leading rows that update a record the chunk read
// (readRecords), each once and none the batch wrote, for a store that saves in bulk
// (store.BulkUpdater), outside a dry run and --merge: rows whose save (if they make one) the
// store may take with others (updateAll). None when the store cannot.
func (im *Importer) plainUpdates(rows []posRow, written map[recordOf]bool) []posRow {
	if _, ok := im.st.(store.BulkUpdater); !ok || im.opt.DryRun || im.opt.Merge {
		return nil
	}
	seen := map[recordOf]bool{}
	n := 0
	for ; n < len(rows); n++ {
		row := rows[n].row
		rec := recordOf{row.Kind, row.ID}
		if row.Err != nil || row.ID == 0 || im.alone(row) || im.read[rec] == nil || written[rec] || seen[rec] {
			break
		}
		seen[rec] = true
	}
	return rows[:n]
}

// updateAll applies rows that update records (plainUpdates) as Apply would one by one, in
// order: each row decided by Apply, the saves it would make taken aside (im.pending) and
// made by the store in bulk (store.BulkUpdater), and each the store leaves (one that is
// not plain: a unique field, a lease row, a record changed since the read) applied again
// by Apply, which saves it with UpdateRecord, in its place among them. A row that saves
// nothing (unchanged, a conflict, invalid) writes nothing either way, so the changes come
// in the file's order, as row by row.
func (im *Importer) updateAll(ctx context.Context, rows []posRow) ([]Result, error) {
	bu := im.st.(store.BulkUpdater)
	results := make([]Result, len(rows))
	var (
		ups []store.RecordUpdate
		of  []int // of[k] is the row of ups[k]
	)
	for i, pr := range rows {
		n := len(ups)
		im.pending = &ups
		r, err := im.Apply(ctx, pr.pos, pr.row)
		im.pending = nil
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", pr.row.Line, err)
		}
		results[i] = r
		if len(ups) > n {
			of = append(of, i)
		}
	}
	for len(ups) > 0 {
		saved, err := bu.UpdateRecords(ctx, ups)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", rows[of[0]].row.Line, err)
		}
		for k, ur := range saved {
			results[of[k]].Version = ur.Version
		}
		n := len(saved)
		if n == len(ups) {
			break
		}
		pr := rows[of[n]]
		if results[of[n]], err = im.Apply(ctx, pr.pos, pr.row); err != nil {
			return nil, fmt.Errorf("line %d: %w", pr.row.Line, err)
		}
		ups, of = ups[n+1:], of[n+1:]
	}
	return results, nil
}

// readRecords reads the records that rows with an id name, a query per kind, into im.read:
// an update import's rows then cost the store a read per chunk, not one each, and a row
// whose record already holds its values writes nothing. A row takes its record once
// (findRecord): one that another row of the chunk may have written since is read again.
func (im *Importer) readRecords(ctx context.Context, rows []posRow) error {
	ids := map[store.Kind][]int64{}
	for _, pr := range rows {
		if pr.row.Err == nil && pr.row.ID != 0 {
			ids[pr.row.Kind] = append(ids[pr.row.Kind], pr.row.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	im.read = make(map[recordOf]*store.Record, len(rows))
	for kind, of := range ids {
		recs, err := im.st.FindRecords(ctx, store.Filter{Kind: kind, IDs: of})
		if err != nil {
			return fmt.Errorf("read the %ss the rows name: %w", kind, err)
		}
		for _, r := range recs {
			im.read[recordOf{r.Kind, r.ID}] = r
		}
	}
	return nil
}

// findRecord returns the record, as its chunk read it (readRecords) the first time a row
// asks, else as the store has it now.
func (im *Importer) findRecord(ctx context.Context, kind store.Kind, id int64) (*store.Record, error) {
	k := recordOf{kind, id}
	if r, ok := im.read[k]; ok {
		delete(im.read, k)
		return r, nil
	}
	return im.st.FindRecord(ctx, kind, id)
}
