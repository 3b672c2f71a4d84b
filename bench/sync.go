package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
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
}

// SyncResult is what tandem bench sync measured.
type SyncResult struct {
	Products    int           `json:"products"`      // products in the source (what a clone copies)
	Clone       time.Duration `json:"clone_ns"`      // tandem clone --kind product, whole
	FirstOpen   time.Duration `json:"first_open_ns"` // then the copy's first open, which builds its search index (CloneFile only)
	Export      time.Duration `json:"export_ns"`     // the baseline bulk export (0 if not run)
	CloneRatio  float64       `json:"clone_ratio"`   // Clone / Export
	Changes     int           `json:"changes"`       // saves pushed, and saves made directly
	Push        time.Duration `json:"push_ns"`       // one sync that pushes Changes outbox entries
	Direct      time.Duration `json:"direct_ns"`     // the same saves made directly on the source
	PushRatio   float64       `json:"push_ratio"`    // Push / Direct
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

	// Clone, then the baseline export, one after the other in the same run.
	path := filepath.Join(cfg.Dir, fmt.Sprintf("bench-sync-%d.db", time.Now().UnixNano()))
	defer removeCopy(path)
	start = time.Now()
	var wc store.WorkingCopy
	if cfg.CloneFile != nil {
		if err := cfg.CloneFile(ctx, path); err != nil {
			return nil, err
		}
		res.Clone = time.Since(start)
		start = time.Now()
		if wc, err = cfg.OpenCopy(ctx, path); err != nil {
			return nil, err
		}
		res.FirstOpen = time.Since(start)
		defer wc.Close()
	} else {
		if wc, err = cfg.OpenCopy(ctx, path); err != nil {
			return nil, err
		}
		defer wc.Close()
		if _, err := tsync.Clone(ctx, cfg.Source, wc, tsync.CloneOptions{Kinds: []store.Kind{store.KindProduct}, Source: "bench"}); err != nil {
			return nil, err
		}
		res.Clone = time.Since(start)
	}
	if cfg.Export != nil {
		if res.Export, err = cfg.Export(ctx); err != nil {
			return nil, err
		}
		res.CloneRatio = float64(res.Clone) / float64(res.Export)
	}

	// Push: Changes saves in the copy, each on its own product, pushed by one sync; then the
	// same saves, on other products, made directly on the source.
	recs, err := cfg.Source.FindRecords(ctx, store.Filter{Kind: store.KindProduct, Limit: 2 * cfg.Changes})
	if err != nil {
		return nil, err
	}
	if len(recs) < 2*cfg.Changes {
		return nil, store.Errorf(store.EINVALID, "bench sync: %d changes need %d products, the source has %d", cfg.Changes, 2*cfg.Changes, len(recs))
	}
	stamp := time.Now().Format("15:04:05.000")
	for _, r := range recs[:cfg.Changes] {
		local, err := wc.FindRecord(ctx, store.KindProduct, r.ID)
		if err != nil {
			return nil, err
		}
		if _, err := wc.UpdateRecord(actor, store.KindProduct, r.ID, store.Update{BaseVersion: local.Version,
			Set: store.Values{"name": "pushed " + stamp}}); err != nil {
			return nil, err
		}
	}
	start = time.Now()
	rep, err := tsync.Sync(ctx, cfg.Source, wc)
	if err != nil {
		return nil, err
	}
	res.Push = time.Since(start)
	res.PushPull = rep.PullTime
	res.PushedOK = rep.InSync() && rep.Pushed == cfg.Changes

	start = time.Now()
	for _, r := range recs[cfg.Changes:] {
		if _, err := cfg.Source.UpdateRecord(actor, store.KindProduct, r.ID, store.Update{BaseVersion: r.Version,
			Set: store.Values{"name": "direct " + stamp}}); err != nil {
			return nil, err
		}
	}
	res.Direct = time.Since(start)
	res.PushRatio = float64(res.Push) / float64(res.Direct)
	return res, nil
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
	fmt.Fprintln(tw, "what\tcount\ttandem\tbaseline\ttandem/baseline\t")
	fmt.Fprintf(tw, "clone vs psql \\copy\t%d\t%s\t%s\t%s\t\n", r.Products, round(r.Clone), export, ratio)
	if r.FirstOpen > 0 {
		fmt.Fprintf(tw, "  then the first open (builds the search index)\t\t%s\t\t\t\n", round(r.FirstOpen))
	}
	fmt.Fprintf(tw, "push vs direct saves\t%d\t%s\t%s\t%.2f\t\n", r.Changes, round(r.Push), round(r.Direct), r.PushRatio)
	fmt.Fprintf(tw, "  of the push, pulling\t\t%s\t\t\t\n", round(r.PushPull))
	if err := tw.Flush(); err != nil {
		return err
	}
	if !r.PushedOK {
		_, err := fmt.Fprintln(w, "warning: the sync did not push every change or did not end in sync")
		return err
	}
	return nil
}
