package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tandem-editor/tandem/internal/exchange"
	"github.com/tandem-editor/tandem/store"
)

// ImportConfig describes one run of the import and export benchmark.
type ImportConfig struct {
	Rows int    // products created, updated and exported
	DSN  string // the store, for the native export tool (sqlite3 or psql)
	Dir  string // where the export files are written
	// Open opens the store on DSN.
	Open func(ctx context.Context) (store.Store, error)
	// Exe is the tandem binary and Args the flags that name the store to it (--db, --fields):
	// tandem's exports run as processes of their own, "Exe Args export …", as the native
	// tool's do, so that both sides pay a start, an open and a read of a store at rest.
	Exe  string
	Args []string
	// LoadOnly runs the load comparison (Load) alone: no relative writes, no exports.
	LoadOnly bool
	// Other, when set, is a second store (PostgreSQL beside SQLite) on which the load
	// comparison runs too, in the same run, after the first's: its figures are OtherLoad.
	Other *ImportConfig
}

// ImportResult is one run's figures, all from the same store and rows.
type ImportResult struct {
	Rows int `json:"rows"`
	// Load compares tandem's import with the database's own load of the same file.
	Load *LoadFigures `json:"load"`
	// OtherLoad is the load comparison on ImportConfig.Other's store, when there is one.
	OtherLoad *LoadFigures `json:"other_load,omitempty"`
	// Create is the import of Rows new products (by an editor: each keeps a history version).
	Create time.Duration `json:"create_ns"`
	// Relative is the same rows written one by one by tandem's relative path (stock += 1 with
	// an idempotency key, as bench contention's relative writer, by a system writer).
	Relative time.Duration `json:"relative_ns"`
	// Update is an import changing every row's stock (absolute, version-checked, keyed, by
	// a system writer like Relative).
	Update      time.Duration `json:"update_ns"`
	UpdateRatio float64       `json:"update_ratio"` // Update / Relative
	// Kind is the export of every product, every field (the run's Rows and whatever the
	// store held before: Before); Search the export of the run's rows alone, found by a
	// search for the run's SKU prefix, in fewer columns.
	Kind   ExportFigures `json:"export_kind"`
	Search ExportFigures `json:"export_search"`
	Before int           `json:"products_before"`
}

// ExportFigures compare one export by tandem with the database's own CSV export (sqlite3
// -csv, psql \copy) of the same rows and columns, each a process of its own, each the median
// of ExportRounds runs, the two taking turns.
type ExportFigures struct {
	Lines  int           `json:"lines"` // lines of tandem's file, the header's included
	Tandem time.Duration `json:"tandem_ns"`
	Native time.Duration `json:"native_ns"`
	Tool   string        `json:"native_tool"`
	Ratio  float64       `json:"ratio"` // Tandem / Native
}

// Import runs the benchmark: create Rows products by import, write each once by the relative
// path, update each by import, then export them with tandem and with the database's tool.
func Import(ctx context.Context, cfg ImportConfig) (*ImportResult, error) {
	res := &ImportResult{Rows: cfg.Rows}
	run := fmt.Sprintf("BI%d", time.Now().UnixNano()%1e9)
	// The store is made (--create) before the load's processes open it.
	st, err := cfg.Open(ctx)
	if err != nil {
		return nil, err
	}
	if err := st.Close(); err != nil {
		return nil, err
	}
	if res.Load, err = Load(ctx, cfg, run+"L"); err != nil {
		return nil, err
	}
	if o := cfg.Other; o != nil {
		st, err := o.Open(ctx)
		if err != nil {
			return nil, err
		}
		if err := st.Close(); err != nil {
			return nil, err
		}
		if res.OtherLoad, err = Load(ctx, *o, run+"P"); err != nil {
			return nil, err
		}
	}
	if cfg.LoadOnly {
		return res, nil
	}
	// The exports read the store at rest, as a user's export would: write closes this
	// process's connections first (on SQLite the last one checkpoints the WAL).
	reg, err := res.write(ctx, cfg, run)
	if err != nil {
		return nil, err
	}
	var all []string
	for _, f := range reg.Fields(store.KindProduct) {
		all = append(all, f.Name)
	}
	if res.Kind, err = compareExports(ctx, cfg, []string{"export", "product"}, all, ""); err != nil {
		return nil, err
	}
	// The run's rows: every one holds the run's prefix in its SKU; the native tool finds them
	// with LIKE on the SKU, tandem with its search (SKU, name and title, any case).
	cols := []string{"sku", "name", "description", "categories", "price", "stock", "availability"}
	if res.Search, err = compareExports(ctx, cfg, []string{"export", "product", "--fields", strings.Join(cols, ","),
		"--search", run + "-"}, cols, "WHERE sku LIKE '"+run+"-%'"); err != nil {
		return nil, err
	}
	return res, nil
}

// write opens the store, counts the products it holds, creates, writes and updates the
// run's rows, timing each step into res, and closes the store; it returns its registry.
func (res *ImportResult) write(ctx context.Context, cfg ImportConfig, run string) (*store.Registry, error) {
	st, err := cfg.Open(ctx)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	if res.Before, err = st.CountRecords(ctx, store.KindProduct); err != nil {
		return nil, fmt.Errorf("count products: %w", err)
	}
	editor := store.WithActor(ctx, store.Actor{Name: "bench", Role: store.RoleEditor})
	system := store.WithActor(ctx, store.Actor{Name: "bench", Role: store.RoleSystem})

	var file bytes.Buffer
	file.WriteString("kind,sku,name,price,stock\n")
	for i := range cfg.Rows {
		fmt.Fprintf(&file, "product,%s-%d,Bench product %d,%d.50,%d\n", run, i, i, i%500, i%100)
	}
	start := time.Now()
	created, err := importFile(editor, st, file.Bytes(), run+"-create")
	if err != nil {
		return nil, err
	}
	res.Create = time.Since(start)
	ids := make([]int64, 0, len(created))
	for _, r := range created {
		if r.Outcome != exchange.Created {
			return nil, fmt.Errorf("bench import: line %d: %s: %s", r.Line, r.Outcome, r.Message)
		}
		ids = append(ids, r.ID)
	}

	start = time.Now()
	for i, id := range ids {
		_, err := st.UpdateRecord(system, store.KindProduct, id, store.Update{Add: map[string]int64{"stock": 1},
			IdempotencyKey: fmt.Sprintf("%s-rel-%d", run, i)})
		if err != nil {
			return nil, fmt.Errorf("relative write of product %d: %w", id, err)
		}
	}
	res.Relative = time.Since(start)

	file.Reset()
	file.WriteString("kind,id,version,stock\n")
	for i, id := range ids {
		fmt.Fprintf(&file, "product,%d,2,%d\n", id, i%100+10)
	}
	start = time.Now()
	updated, err := importFile(system, st, file.Bytes(), run+"-update")
	if err != nil {
		return nil, err
	}
	res.Update = time.Since(start)
	for _, r := range updated {
		if r.Outcome != exchange.Updated {
			return nil, fmt.Errorf("bench import update: line %d: %s: %s", r.Line, r.Outcome, r.Message)
		}
	}
	res.UpdateRatio = float64(res.Update) / float64(res.Relative)

	reg := st.Registry()
	// Closed here, before the exports (the deferred Close, for the returns above, is then a
	// no-op: a store's Close is idempotent).
	if err := st.Close(); err != nil {
		return nil, fmt.Errorf("close the store: %w", err)
	}
	return reg, nil
}

// compareExports runs tandem's export (Exe, Args, then args) and the native export of the
// product columns cols with the condition where (made by Import, never from outside)
// ExportRounds times, taking turns, and compares the medians. The two files must hold as many
// lines: the same rows (the bench's values hold no line breaks).
func compareExports(ctx context.Context, cfg ImportConfig, args, cols []string, where string) (ExportFigures, error) {
	var (
		fig          ExportFigures
		ours, native []time.Duration
	)
	path, nativePath := filepath.Join(cfg.Dir, "tandem.csv"), filepath.Join(cfg.Dir, "native.csv")
	q := "SELECT 'product', id, version, " + strings.Join(cols, ", ") + ", updated_by, updated_at FROM products " +
		where + " ORDER BY id"
	for range ExportRounds {
		cmd := exec.CommandContext(ctx, cfg.Exe, slices.Concat(cfg.Args, args, []string{"-o", path})...)
		d, err := runTimed(cmd, "tandem "+strings.Join(args, " "))
		if err != nil {
			return fig, err
		}
		ours = append(ours, d)
		d, tool, err := nativeExport(ctx, cfg.DSN, nativePath, q)
		if err != nil {
			return fig, err
		}
		native, fig.Tool = append(native, d), tool
	}
	fig.Tandem, fig.Native = median(ours), median(native)
	fig.Ratio = float64(fig.Tandem) / float64(fig.Native)
	var err error
	if fig.Lines, err = countLines(path); err != nil {
		return fig, err
	}
	n, err := countLines(nativePath)
	if err != nil {
		return fig, err
	}
	if n != fig.Lines {
		return fig, fmt.Errorf("bench import: tandem %s wrote %d lines, %s %d", strings.Join(args, " "), fig.Lines, fig.Tool, n)
	}
	return fig, nil
}

// ExportRounds is how many times Import runs each export, interleaved, for their medians.
const ExportRounds = 5

// median returns the median of ds (the upper one of an even count), sorting ds.
func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// countLines returns how many lines the file at path holds.
func countLines(path string) (int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return bytes.Count(data, []byte{'\n'}), nil
}

// runTimed runs cmd and returns its wall time; what names it in an error.
func runTimed(cmd *exec.Cmd, what string) (time.Duration, error) {
	var errb bytes.Buffer
	cmd.Stderr = &errb
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("%s: %w: %s", what, err, strings.TrimSpace(errb.String()))
	}
	return time.Since(start), nil
}

func importFile(ctx context.Context, st store.Store, data []byte, prefix string) ([]exchange.Result, error) {
	src, err := exchange.NewSource(bytes.NewReader(data), exchange.CSV, st.Registry())
	if err != nil {
		return nil, err
	}
	defer src.Close()
	rep, err := exchange.NewReport()
	if err != nil {
		return nil, err
	}
	defer rep.Close()
	if err := exchange.NewImporter(st, exchange.ImportOptions{KeyPrefix: prefix}).ApplyAll(ctx, src, false, nil, rep); err != nil {
		return nil, err
	}
	res := make([]exchange.Result, 0, rep.Len())
	err = rep.Each(func(r exchange.Result) error { res = append(res, r); return nil })
	return res, err
}

// nativeExport runs the query q with the database's own CSV export (sqlite3 -csv, psql
// \copy), writing path.
func nativeExport(ctx context.Context, dsn, path, q string) (time.Duration, string, error) {
	if isPostgres(dsn) {
		tool := `psql \copy`
		conn, env := psqlDSN(dsn)
		cmd := exec.CommandContext(ctx, "psql", "-q", conn, "-c", `\copy (`+q+`) TO '`+path+`' CSV HEADER`)
		cmd.Env = append(os.Environ(), env...)
		d, err := runTimed(cmd, tool)
		return d, tool, err
	}
	tool := "sqlite3 -csv"
	out, err := os.Create(path)
	if err != nil {
		return 0, "", err
	}
	defer out.Close()
	cmd := exec.CommandContext(ctx, "sqlite3", "-csv", "-header", "-readonly", dsn, q)
	cmd.Stdout = out
	d, err := runTimed(cmd, tool)
	if err != nil {
		return 0, "", err
	}
	return d, tool, out.Close()
}

// psqlDSN returns dsn for psql: a search_path parameter (which pgx takes and psql refuses) is
// moved into PGOPTIONS.
func psqlDSN(dsn string) (string, []string) {
	u, err := url.Parse(dsn)
	if err != nil || u.Query().Get("search_path") == "" {
		return dsn, nil
	}
	q := u.Query()
	sp := q.Get("search_path")
	q.Del("search_path")
	u.RawQuery = q.Encode()
	return u.String(), []string{"PGOPTIONS=-c search_path=" + sp}
}

// writeLoad writes a load comparison's figures for people.
func writeLoad(w io.Writer, l *LoadFigures) error {
	rate := func(d time.Duration) float64 { return float64(l.Rows) / max(d.Seconds(), 1e-9) }
	mb := func(b int64) float64 { return float64(b) / (1 << 20) }
	_, err := fmt.Fprintf(w, `import of %d products against the database's own load (%s), each a process, once

  %-22s %10s  (%.0f rows/s)
  tandem import, new     %10s  (%.0f rows/s; %.0f MB resident; %s CPU)
    ratio to native      %10.2fx
  %-22s %10s  (the update file: id, version and the fields)
  tandem import, update  %10s  (%.0f rows/s; %d changed, the rest unchanged; %.0f MB resident; %s CPU)
    ratio to native      %10.2fx

`, l.Rows, l.Tool, l.Tool, round(l.Native), rate(l.Native), round(l.Create), rate(l.Create), mb(l.CreateRSS), round(l.CreateCPU), l.CreateRatio,
		l.Tool, round(l.NativeUpdate), round(l.Update), rate(l.Update), l.Changed, mb(l.UpdateRSS), round(l.UpdateCPU), l.UpdateRatio)
	return err
}

// WriteImport writes an import benchmark's figures for people.
func WriteImport(w io.Writer, r *ImportResult) error {
	per := func(d time.Duration) string { return round(d / time.Duration(max(r.Rows, 1))) }
	for _, l := range []*LoadFigures{r.Load, r.OtherLoad} {
		if l == nil {
			continue
		}
		if err := writeLoad(w, l); err != nil {
			return err
		}
	}
	if r.Kind.Tool == "" {
		return nil // the load alone
	}
	_, err := fmt.Fprintf(w, `import and export of %d products

  import, creating        %10s  (%s a row; editor: history kept)
  relative path, per row  %10s  (%s a row; stock += 1 with a key, system writer)
  import, updating        %10s  (%s a row; stock set, version-checked, keyed, system writer)
    ratio to relative     %10.2fx

  exports, each a process, each the median of %d taking turns with the native one:
`, r.Rows, round(r.Create), per(r.Create), round(r.Relative), per(r.Relative), round(r.Update), per(r.Update),
		r.UpdateRatio, ExportRounds)
	if err != nil {
		return err
	}
	for _, e := range []struct {
		what string
		fig  ExportFigures
	}{
		{fmt.Sprintf("every product, every field (%d rows; %d before the run)", r.Kind.Lines-1, r.Before), r.Kind},
		{fmt.Sprintf("the run's rows by --search, 7 fields (%d rows)", r.Search.Lines-1), r.Search},
	} {
		if _, err := fmt.Fprintf(w, `  %s
    tandem export         %10s
    %-21s %10s
    ratio to native       %10.2fx
`, e.what, round(e.fig.Tandem), e.fig.Tool, round(e.fig.Native), e.fig.Ratio); err != nil {
			return err
		}
	}
	return nil
}
