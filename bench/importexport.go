package bench

import (
	"bufio"
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
}

// ImportResult is one run's figures, all from the same store and rows.
type ImportResult struct {
	Rows int `json:"rows"`
	// Create is the import of Rows new products (by an editor: each keeps a history version).
	Create time.Duration `json:"create_ns"`
	// Relative is the same rows written one by one by tandem's relative path (stock += 1 with
	// an idempotency key, as bench contention's relative writer, by a system writer).
	Relative time.Duration `json:"relative_ns"`
	// Update is an import changing every row's stock (absolute, version-checked, keyed, by
	// a system writer like Relative).
	Update      time.Duration `json:"update_ns"`
	UpdateRatio float64       `json:"update_ratio"` // Update / Relative
	// Export is tandem's CSV export of the rows to a file; Native the database's own CSV
	// export of the same rows and columns (sqlite3 -csv, psql \copy), a process of its own;
	// each the median of ExportRounds runs, the two taking turns.
	Export      time.Duration `json:"export_ns"`
	Native      time.Duration `json:"native_ns"`
	NativeTool  string        `json:"native_tool"`
	ExportRatio float64       `json:"export_ratio"` // Export / Native
}

// Import runs the benchmark: create Rows products by import, write each once by the relative
// path, update each by import, then export them with tandem and with the database's tool.
func Import(ctx context.Context, cfg ImportConfig) (*ImportResult, error) {
	st, err := cfg.Open(ctx)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	res := &ImportResult{Rows: cfg.Rows}
	run := fmt.Sprintf("BI%d", time.Now().UnixNano()%1e9)
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

	// Each export runs ExportRounds times, the two tools taking turns, and the medians are
	// compared: on a shared machine one run of either moves by tens of percent.
	cols := []string{"sku", "name", "description", "categories", "price", "stock", "availability"}
	var ours, native []time.Duration
	for range ExportRounds {
		start = time.Now()
		if err := exportFile(ctx, st, filepath.Join(cfg.Dir, "tandem.csv"), cols, run); err != nil {
			return nil, err
		}
		ours = append(ours, time.Since(start))
		d, tool, err := nativeExport(ctx, cfg.DSN, filepath.Join(cfg.Dir, "native.csv"), cols, run)
		if err != nil {
			return nil, err
		}
		native, res.NativeTool = append(native, d), tool
	}
	res.Export, res.Native = median(ours), median(native)
	res.ExportRatio = float64(res.Export) / float64(res.Native)
	return res, nil
}

// ExportRounds is how many times Import runs each export, interleaved, for their medians.
const ExportRounds = 5

// median returns the median of ds (the upper one of an even count), sorting ds.
func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
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

func exportFile(ctx context.Context, st store.Store, path string, cols []string, run string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 64<<10)
	x, err := exchange.NewWriter(bw, exchange.CSV, st.Registry(), store.KindProduct, exchange.WriterOptions{Fields: cols})
	if err != nil {
		return err
	}
	if err := exchange.Export(ctx, st, x, store.Filter{Kind: store.KindProduct, Search: run + "-"}, nil); err != nil {
		return err
	}
	if err := x.Close(); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return f.Close()
}

// nativeExport exports the same rows and columns with the database's own CSV export.
func nativeExport(ctx context.Context, dsn, path string, cols []string, run string) (time.Duration, string, error) {
	// run is "BI" and digits, made by Import: nothing from outside reaches the query.
	q := "SELECT 'product', id, version, " + strings.Join(cols, ", ") + ", updated_by, updated_at FROM products WHERE sku LIKE '" + run + "-%' ORDER BY id"
	var cmd *exec.Cmd
	tool := "sqlite3 -csv"
	if isPostgres(dsn) {
		tool = `psql \copy`
		conn, env := psqlDSN(dsn)
		cmd = exec.CommandContext(ctx, "psql", "-q", conn, "-c", `\copy (`+q+`) TO '`+path+`' CSV HEADER`)
		cmd.Env = append(os.Environ(), env...)
	} else {
		cmd = exec.CommandContext(ctx, "sqlite3", "-csv", "-header", "-readonly", dsn, q)
		out, err := os.Create(path)
		if err != nil {
			return 0, "", err
		}
		defer out.Close()
		cmd.Stdout = out
	}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, "", fmt.Errorf("%s: %v: %s", tool, err, strings.TrimSpace(errb.String()))
	}
	return time.Since(start), tool, nil
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

// WriteImport writes an import benchmark's figures for people.
func WriteImport(w io.Writer, r *ImportResult) error {
	per := func(d time.Duration) string { return round(d / time.Duration(max(r.Rows, 1))) }
	_, err := fmt.Fprintf(w, `import and export of %d products

  import, creating        %10s  (%s a row; editor: history kept)
  relative path, per row  %10s  (%s a row; stock += 1 with a key, system writer)
  import, updating        %10s  (%s a row; stock set, version-checked, keyed, system writer)
    ratio to relative     %10.2fx
  export (tandem, CSV)    %10s  (median of %d, taking turns with the next)
  export (%s)  %10s
    ratio to native       %10.2fx
`, r.Rows, round(r.Create), per(r.Create), round(r.Relative), per(r.Relative), round(r.Update), per(r.Update),
		r.UpdateRatio, round(r.Export), ExportRounds, r.NativeTool, round(r.Native), r.ExportRatio)
	return err
}
