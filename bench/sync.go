package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tandem-editor/tandem/store"
	tsync "github.com/tandem-editor/tandem/sync"
)

// SyncConfig configures the working-copy benchmark.
type SyncConfig struct {
	Source   store.Store                                                       // the source (PostgreSQL for the figures)
	OpenCopy func(ctx context.Context, path string) (store.WorkingCopy, error) // opens (creates) a SQLite store at path
	Products int                                                               // products the source must hold at least
	Changes  int                                                               // saves to push, and to make directly
	Dir      string                                                            // where the copies go
	// CloneFile, when set, is how the clone is made: what tandem clone does, making path a
	// working copy of the source (a temporary file, checkpointed and linked into place).
	// Without it the copy is opened with OpenCopy and cloned into with sync's Clone.
	CloneFile func(ctx context.Context, path string) error
	// Export, when set, is the baseline for the clone: the time the database's own bulk
	// export of the products table takes (psql's \copy), measured in the same run.
	Export func(ctx context.Context) (time.Duration, error)
	// Rounds is how many times the clone and the export, and the push and the direct
	// saves, are each measured, taking turns (0: SyncRounds); the results are the medians.
	Rounds int
}

// SyncRounds is how many rounds Sync measures when SyncConfig.Rounds is 0: on a shared
// machine one round can land on another program's burst (the export's and the direct
// saves' times varied by a third from run to run here), and the median of three taking
// turns does not.
const SyncRounds = 3

// SyncResult is what tandem bench sync measured.
type SyncResult struct {
	Products    int           `json:"products"`      // products in the source (what a clone copies)
	Rounds      int           `json:"rounds"`        // rounds measured; the figures below are their medians
	Clone       time.Duration `json:"clone_ns"`      // tandem clone --kind product, whole
	FirstOpen   time.Duration `json:"first_open_ns"` // then the copy's first open, which builds its search index (CloneFile only)
	Export      time.Duration `json:"export_ns"`     // the baseline bulk export (0 if not run)
	CloneRatio  float64       `json:"clone_ratio"`   // Clone / Export of each round, the median
	CloneRatios []float64     `json:"clone_ratios"`  // each round's
	Changes     int           `json:"changes"`       // saves pushed, and saves made directly
	Push        time.Duration `json:"push_ns"`       // one sync that pushes Changes outbox entries
	Direct      time.Duration `json:"direct_ns"`     // the same saves made directly on the source
	PushRatio   float64       `json:"push_ratio"`    // Push / Direct of each round, the median
	PushRatios  []float64     `json:"push_ratios"`   // each round's
	PushPull    time.Duration `json:"push_pull_ns"`  // of Push, the pulls (the source\'s echo of the push)
	PushedOK    bool          `json:"pushed_ok"`     // the sync pushed every change and ended in sync
	SourceBuilt time.Duration `json:"seeded_ns"`     // time spent creating missing products (not measured)
}

// Sync measures a clone of the source's products against the database's bulk export, and
// a push of Changes outbox entries against the same saves made directly on the source. The
// products it needs are created first (named bench-sync-N) when the source has fewer.
func Sync(ctx context.Context, cfg SyncConfig) (*SyncResult, error) {
	res := &SyncResult{Changes: cfg.Changes}
	actor := store.WithActor(ctx, store.Actor{Name: "bench", Role: store.RoleEditor})
	// A working copy cannot be cloned, and the products fill creates below would go into
	// its outbox, for the next sync to create on the real source: refuse it before writing.
	switch st, err := tsync.CopyOf(ctx, cfg.Source); {
	case err != nil:
		return nil, err
	case st != nil:
		return nil, store.Errorf(store.EINVALID, "bench sync: the store is a working copy (of %s); point --db at a store for benchmarks", st.Source)
	}
	n, err := cfg.Source.CountRecords(ctx, store.KindProduct)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := fill(actor, cfg.Source, n, cfg.Products); err != nil {
		return nil, err
	}
	res.SourceBuilt = time.Since(start)
	if res.Products, err = cfg.Source.CountRecords(ctx, store.KindProduct); err != nil {
		return nil, err
	}

	rounds := cfg.Rounds
	if rounds <= 0 {
		rounds = SyncRounds
	}
	res.Rounds = rounds

	// Clone, then the baseline export, one after the other, round after round. The last
	// round's copy stays for the push.
	var (
		clones, exports []time.Duration
		wc              store.WorkingCopy
	)
	for r := range rounds {
		path := filepath.Join(cfg.Dir, fmt.Sprintf("bench-sync-%d.db", time.Now().UnixNano()))
		d, open, err := cloneOnce(ctx, cfg, path)
		drop := func() {
			if open != nil {
				open.Close()
			}
			removeCopy(path)
		}
		if err != nil {
			drop()
			return nil, err
		}
		clones = append(clones, d)
		if r < rounds-1 {
			drop()
		} else {
			defer removeCopy(path)
			if open != nil {
				defer open.Close()
				wc = open
			} else {
				// The copy's first open, which builds what the clone left to it.
				start := time.Now()
				if wc, err = cfg.OpenCopy(ctx, path); err != nil {
					return nil, err
				}
				res.FirstOpen = time.Since(start)
				defer wc.Close()
			}
		}
		if cfg.Export != nil {
			e, err := cfg.Export(ctx)
			if err != nil {
				return nil, err
			}
			exports = append(exports, e)
			res.CloneRatios = append(res.CloneRatios, float64(d)/float64(e))
		}
	}
	res.Clone = median(clones)
	if len(exports) > 0 {
		res.Export = median(exports)
		res.CloneRatio = medianOf(res.CloneRatios)
	}

	// Push: Changes saves in the copy, each on its own product, pushed by one sync; then the
	// same saves, on other products, made directly on the source; round after round.
	var pushes, directs []time.Duration
	res.PushedOK = true
	for range rounds {
		p, d, pushedOK, pullTime, err := pushOnce(ctx, actor, cfg, wc)
		if err != nil {
			return nil, err
		}
		pushes, directs = append(pushes, p), append(directs, d)
		res.PushRatios = append(res.PushRatios, float64(p)/float64(d))
		res.PushPull += pullTime / time.Duration(rounds)
		res.PushedOK = res.PushedOK && pushedOK
	}
	res.Push, res.Direct, res.PushRatio = median(pushes), median(directs), medianOf(res.PushRatios)
	return res, nil
}

// cloneOnce makes path a working copy of the source as cfg says, and returns the time it
// took and, when it opened one (without CloneFile), the copy.
func cloneOnce(ctx context.Context, cfg SyncConfig, path string) (time.Duration, store.WorkingCopy, error) {
	start := time.Now()
	if cfg.CloneFile != nil {
		err := cfg.CloneFile(ctx, path)
		return time.Since(start), nil, err
	}
	wc, err := cfg.OpenCopy(ctx, path)
	if err != nil {
		return 0, nil, err
	}
	if _, err := tsync.Clone(ctx, cfg.Source, wc, tsync.CloneOptions{Kinds: []store.Kind{store.KindProduct}, Source: "bench"}); err != nil {
		return 0, wc, err
	}
	return time.Since(start), wc, nil
}

// pushOnce makes cfg.Changes saves in the copy, each on its own product, and times one sync
// pushing them; then times the same saves, on other products, made directly on the source.
func pushOnce(ctx, actor context.Context, cfg SyncConfig, wc store.WorkingCopy) (push, direct time.Duration, ok bool, pull time.Duration, err error) {
	recs, err := cfg.Source.FindRecords(ctx, store.Filter{Kind: store.KindProduct, Limit: 2 * cfg.Changes})
	if err != nil {
		return 0, 0, false, 0, err
	}
	if len(recs) < 2*cfg.Changes {
		return 0, 0, false, 0, store.Errorf(store.EINVALID, "bench sync: %d changes need %d products, the source has %d", cfg.Changes, 2*cfg.Changes, len(recs))
	}
	// The copy takes in what the source has had since its last sync (the direct saves of
	// the round before), unmeasured: the measured sync pulls only its own push's echo.
	if _, err := tsync.Sync(ctx, cfg.Source, wc); err != nil {
		return 0, 0, false, 0, err
	}
	stamp := time.Now().Format("15:04:05.000")
	for _, r := range recs[:cfg.Changes] {
		local, err := wc.FindRecord(ctx, store.KindProduct, r.ID)
		if err != nil {
			return 0, 0, false, 0, err
		}
		if _, err := wc.UpdateRecord(actor, store.KindProduct, r.ID, store.Update{BaseVersion: local.Version,
			Set: store.Values{"name": "pushed " + stamp}}); err != nil {
			return 0, 0, false, 0, err
		}
	}
	start := time.Now()
	rep, err := tsync.Sync(ctx, cfg.Source, wc)
	if err != nil {
		return 0, 0, false, 0, err
	}
	push = time.Since(start)
	ok = rep.InSync() && rep.Pushed == cfg.Changes

	start = time.Now()
	for _, r := range recs[cfg.Changes:] {
		if _, err := cfg.Source.UpdateRecord(actor, store.KindProduct, r.ID, store.Update{BaseVersion: r.Version,
			Set: store.Values{"name": "direct " + stamp}}); err != nil {
			return 0, 0, false, 0, err
		}
	}
	return push, time.Since(start), ok, rep.PullTime, nil
}

// medianOf returns the median of xs (the upper one of an even count), sorting xs' copy.
func medianOf(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// fill creates products until the source has want, four writers at a time.
func fill(ctx context.Context, st store.Store, have, want int) error {
	if have >= want {
		return nil
	}
	const writers = 4
	errs := make(chan error, writers)
	for w := range writers {
		go func() {
			for i := have + w; i < want; i += writers {
				if _, err := st.CreateRecord(ctx, store.KindProduct, store.Values{
					"sku": fmt.Sprintf("bench-sync-%07d", i), "name": fmt.Sprintf("bench product %d", i),
					"description": "A product made by tandem bench sync.", "price": int64(1000 + i%5000), "stock": int64(i % 100),
					"categories": []string{"bench"}}); err != nil {
					errs <- fmt.Errorf("bench sync: create product %d: %w", i, err)
					return
				}
			}
			errs <- nil
		}()
	}
	var first error
	for range writers {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

func removeCopy(path string) {
	for _, s := range []string{"", "-wal", "-shm"} {
		_ = os.Remove(path + s)
	}
}

// WriteSync prints the sync benchmark.
func WriteSync(w io.Writer, r *SyncResult) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	export, ratio := "-", "-"
	if r.Export > 0 {
		export, ratio = round(r.Export), fmt.Sprintf("%.2f", r.CloneRatio)
	}
	fmt.Fprintf(tw, "what (median of %d rounds)\tcount\ttandem\tbaseline\ttandem/baseline\t\n", r.Rounds)
	fmt.Fprintf(tw, "clone vs psql \\copy\t%d\t%s\t%s\t%s\t\n", r.Products, round(r.Clone), export, ratio)
	if r.FirstOpen > 0 {
		fmt.Fprintf(tw, "  then the first open (builds the search index)\t\t%s\t\t\t\n", round(r.FirstOpen))
	}
	fmt.Fprintf(tw, "push vs direct saves\t%d\t%s\t%s\t%.2f\t\n", r.Changes, round(r.Push), round(r.Direct), r.PushRatio)
	fmt.Fprintf(tw, "  of the push, pulling\t\t%s\t\t\t\n", round(r.PushPull))
	if err := tw.Flush(); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(w, "\nthe rounds' ratios: clone %s; push %s\n", ratios(r.CloneRatios), ratios(r.PushRatios)); err != nil {
		return err
	}
	if !r.PushedOK {
		_, err := fmt.Fprintln(w, "warning: the sync did not push every change or did not end in sync")
		return err
	}
	return nil
}

// ratios lists xs as "1.23 1.31 1.27", or "-" for none.
func ratios(xs []float64) string {
	if len(xs) == 0 {
		return "-"
	}
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = fmt.Sprintf("%.2f", x)
	}
	return strings.Join(out, " ")
}
