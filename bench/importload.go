package bench

import (
	"bufio"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// LoadFigures compare tandem's import of a file of new products, and of an update of them,
// with the database's own load of the same file (sqlite3 .import, psql \copy) into a table
// of the same columns with a unique index on sku. Each side is a process of its own, timed
// from its start to its end, once.
type LoadFigures struct {
	Rows int    `json:"rows"`
	Tool string `json:"native_tool"`
	// Native is the database's load of the new rows' file; NativeUpdate its load of the
	// update file (the same columns as an export: id, version and the rest).
	Native       time.Duration `json:"native_ns"`
	NativeUpdate time.Duration `json:"native_update_ns"`
	// Create is `tandem import` of the new rows (each one created, with its history version,
	// change and key), CreateRatio Create / Native, CreateRSS the import's peak resident
	// memory in bytes, CreateCPU its processor time (user and system): on a loaded machine
	// the wall time says more about the others than about the import.
	Create      time.Duration `json:"create_ns"`
	CreateRatio float64       `json:"create_ratio"`
	CreateRSS   int64         `json:"create_rss_bytes"`
	CreateCPU   time.Duration `json:"create_cpu_ns"`
	// Update is `tandem import` of every row again, Changed of them (one in ten) with a new
	// price, the rest as the store holds them (unchanged), each version-checked and keyed.
	Update      time.Duration `json:"update_ns"`
	UpdateRatio float64       `json:"update_ratio"` // Update / NativeUpdate
	UpdateRSS   int64         `json:"update_rss_bytes"`
	UpdateCPU   time.Duration `json:"update_cpu_ns"`
	Changed     int           `json:"changed"`
}

// Load runs the load comparison of cfg.Rows new products (their SKUs start with run) on the
// store cfg names, in cfg.Dir.
func Load(ctx context.Context, cfg ImportConfig, run string) (*LoadFigures, error) {
	fig := &LoadFigures{Rows: cfg.Rows}
	newRows := filepath.Join(cfg.Dir, "load-new.csv")
	if err := writeFileWith(newRows, func(w *bufio.Writer) {
		w.WriteString("kind,sku,name,price,stock\n")
		for i := range cfg.Rows {
			fmt.Fprintf(w, "product,%s-%d,Bench product %d,%d.50,%d\n", run, i, i, i%500, i%100)
		}
	}); err != nil {
		return nil, err
	}
	var err error
	if fig.Native, fig.Tool, err = nativeLoad(ctx, cfg, newRows, run+"_new", []string{"kind", "sku", "name", "price", "stock"}); err != nil {
		return nil, err
	}
	if fig.Create, fig.CreateRSS, fig.CreateCPU, err = tandemImport(ctx, cfg, newRows, run+"-load-create"); err != nil {
		return nil, err
	}
	fig.CreateRatio = float64(fig.Create) / float64(fig.Native)

	// The update file: the run's rows as an export writes them, one in ten with a new price.
	exported := filepath.Join(cfg.Dir, "load-export.csv")
	cmd := exec.CommandContext(ctx, cfg.Exe, slices.Concat(cfg.Args, []string{"export", "product", "--fields", "sku,name,price,stock",
		"--search", run + "-", "-o", exported})...)
	if _, err := runTimed(cmd, "tandem export of the loaded rows"); err != nil {
		return nil, err
	}
	update := filepath.Join(cfg.Dir, "load-update.csv")
	var cols []string
	if cols, fig.Changed, err = changeOneInTen(exported, update); err != nil {
		return nil, err
	}
	if fig.NativeUpdate, _, err = nativeLoad(ctx, cfg, update, run+"_upd", cols); err != nil {
		return nil, err
	}
	if fig.Update, fig.UpdateRSS, fig.UpdateCPU, err = tandemImport(ctx, cfg, update, run+"-load-update"); err != nil {
		return nil, err
	}
	fig.UpdateRatio = float64(fig.Update) / float64(fig.NativeUpdate)
	return fig, nil
}

// writeFileWith writes the file at path with fill.
func writeFileWith(path string, fill func(*bufio.Writer)) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fill(w)
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// changeOneInTen copies the exported CSV file in to out with every tenth row's price
// raised by one, and returns the file's columns and how many rows it changed.
func changeOneInTen(in, out string) ([]string, int, error) {
	f, err := os.Open(in)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	r := csv.NewReader(bufio.NewReaderSize(f, 1<<20))
	head, err := r.Read()
	if err != nil {
		return nil, 0, fmt.Errorf("read %s: %w", in, err)
	}
	price := slices.Index(head, "price")
	if price < 0 {
		return nil, 0, fmt.Errorf("%s has no price column", in)
	}
	changed := 0
	err = writeFileWith(out, func(bw *bufio.Writer) {
		w := csv.NewWriter(bw)
		w.Write(head)
		for i := 0; ; i++ {
			rec, rerr := r.Read()
			if rerr == io.EOF {
				break
			}
			if rerr != nil {
				err = rerr
				return
			}
			if i%10 == 0 {
				p, perr := strconv.ParseFloat(rec[price], 64)
				if perr != nil {
					err = fmt.Errorf("price %q: %w", rec[price], perr)
					return
				}
				rec[price] = strconv.FormatFloat(p+1, 'f', 2, 64)
				changed++
			}
			w.Write(rec)
		}
		w.Flush()
		if err == nil {
			err = w.Error()
		}
	})
	return head, changed, err
}

// tandemImport runs `tandem import path` as a process of its own and returns its wall time,
// peak resident memory and processor time (user and system). Every row must land (exit 0).
func tandemImport(ctx context.Context, cfg ImportConfig, path, prefix string) (wall time.Duration, rss int64, cpu time.Duration, err error) {
	cmd := exec.CommandContext(ctx, cfg.Exe, slices.Concat(cfg.Args, []string{"import", path, "--key-prefix", prefix})...)
	if wall, err = runTimed(cmd, "tandem import"); err != nil {
		return 0, 0, 0, err
	}
	return wall, maxRSS(cmd), cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), nil
}

// nativeLoad loads the CSV file at path (with a header line of cols) with the database's
// own tool into a new table of those columns, all text but for a unique index on sku, in a
// scratch database (SQLite: a file of its own in cfg.Dir; PostgreSQL: a table named after
// name, dropped afterwards). It returns the load's wall time (the tool's process, the
// table made before) and the tool's name.
func nativeLoad(ctx context.Context, cfg ImportConfig, path, name string, cols []string) (time.Duration, string, error) {
	t := "bench_load_" + strings.ToLower(name)
	defs := make([]string, len(cols))
	for i, c := range cols {
		defs[i] = c + " TEXT"
		if c == "sku" {
			defs[i] += " NOT NULL"
		}
	}
	create := "CREATE TABLE " + t + " (" + strings.Join(defs, ", ") + "); CREATE UNIQUE INDEX " + t + "_sku ON " + t + " (sku);"
	if !isPostgres(cfg.DSN) {
		tool := "sqlite3 .import"
		db := filepath.Join(cfg.Dir, t+".db")
		if out, err := exec.CommandContext(ctx, "sqlite3", db, create).CombinedOutput(); err != nil {
			return 0, "", fmt.Errorf("sqlite3: make the table: %w: %s", err, out)
		}
		cmd := exec.CommandContext(ctx, "sqlite3", db, ".mode csv", ".import --skip 1 "+path+" "+t)
		d, err := runTimed(cmd, tool)
		return d, tool, err
	}
	conn, env := psqlDSN(cfg.DSN)
	if _, err := exec.LookPath("psql"); err != nil {
		return copyFromLoad(ctx, cfg.DSN, path, t, create, cols)
	}
	tool := `psql \copy`
	psql := func(args ...string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, "psql", slices.Concat([]string{"-q", "-v", "ON_ERROR_STOP=1", conn}, args)...)
		cmd.Env = append(os.Environ(), env...)
		return cmd
	}
	if out, err := psql("-c", create).CombinedOutput(); err != nil {
		return 0, "", fmt.Errorf("psql: make the table: %w: %s", err, out)
	}
	defer psql("-c", "DROP TABLE "+t).Run()
	d, err := runTimed(psql("-c", `\copy `+t+` FROM '`+path+`' CSV HEADER`), tool)
	return d, tool, err
}

// copyFromLoad is nativeLoad through pgx's CopyFrom, in this process, when psql is not on
// $PATH: the database's own load (COPY FROM STDIN), without a process start.
func copyFromLoad(ctx context.Context, dsn, path, t, create string, cols []string) (time.Duration, string, error) {
	tool := "COPY FROM (pgx CopyFrom; psql is not on $PATH)"
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return 0, "", err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, create); err != nil {
		return 0, "", fmt.Errorf("make the table: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), "DROP TABLE "+t)
	start := time.Now()
	f, err := os.Open(path)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	if _, err := conn.PgConn().CopyFrom(ctx, f, "COPY "+t+" ("+strings.Join(cols, ", ")+") FROM STDIN (FORMAT csv, HEADER true)"); err != nil {
		return 0, "", fmt.Errorf("%s: %w", tool, err)
	}
	return time.Since(start), tool, nil
}
