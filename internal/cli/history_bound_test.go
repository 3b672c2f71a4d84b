package cli

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tandem-editor/tandem/store"
)

// historyRSSBound is what a history command may hold resident, whatever the history's
// length: the binary, the store's connections and one page.
const historyRSSBound = 100 << 20

// TestHistory_BoundedMemory: a document of 57 KB with 10,001 history versions, on every
// backend. history, history --json, history --all and history --all --json (every field of
// every version, streamed) run as processes whose peak resident memory stays under
// historyRSSBound; the text pages line up for five-digit versions and say how to see the
// older ones. A minute or more of CPU under TANDEM_LONG_TESTS, one process at a time, with
// no deadline: it runs beside the other process tests (besideOthers), each backend too.
func TestHistory_BoundedMemory(t *testing.T) {
	besideOthers(t)
	const versions = 10001
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			besideOthers(t) // one process at a time, on a store of its own
			dsn := b.dsn(t)
			id := mustLongHistory(t, dsn, versions)
			ref := []string{"history", "document", fmt.Sprint(id)}

			out, rss := runMeasured(t, dsn, append(ref, "--limit", "60")...)
			if rss > historyRSSBound {
				t.Errorf("history: peak RSS %d MB, want under %d MB", rss>>20, historyRSSBound>>20)
			}
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			if got, want := len(lines), 1+60+2+1; got != want {
				t.Fatalf("history --limit 60 printed %d lines, want %d:\n%s", got, want, out)
			}
			if want := fmt.Sprintf("  v%d ", versions); !strings.HasPrefix(lines[1], want) {
				t.Errorf("first row %q, want it to start with %q", lines[1], want)
			}
			if want := fmt.Sprintf("  v%-5d ", versions-59); !strings.HasPrefix(lines[60], want) {
				t.Errorf("row of v%d %q, want it to start with %q (aligned under v%d)", versions-59, lines[60], want, versions)
			}
			if want := fmt.Sprintf("tandem history document %d --before %d --limit 60", id, versions-59); !strings.Contains(lines[len(lines)-1], want) {
				t.Errorf("last line %q, want it to name %q", lines[len(lines)-1], want)
			}

			out, rss = runMeasured(t, dsn, append(ref, "--json")...)
			if rss > historyRSSBound {
				t.Errorf("history --json: peak RSS %d MB, want under %d MB", rss>>20, historyRSSBound>>20)
			}
			if got, want := countVersions(t, strings.NewReader(string(out))), historyLimit; got != want {
				t.Errorf("history --json lists %d versions, want %d (the default page)", got, want)
			}
			if want := fmt.Sprintf(`"more_before": %d`, versions-historyLimit+1); !strings.Contains(string(out), want) {
				t.Errorf("history --json does not say %s", want)
			}

			out, rss = runMeasured(t, dsn, append(ref, "--all")...)
			if rss > historyRSSBound {
				t.Errorf("history --all: peak RSS %d MB, want under %d MB", rss>>20, historyRSSBound>>20)
			}
			if got := strings.Count(string(out), "\n  v"); got != versions {
				t.Errorf("history --all lists %d versions, want %d", got, versions)
			}

			// Every field of every version is some 600 MB of JSON and half a minute of a
			// core: the long tests stream all of it; a plain run the newest 2,000 (114 MB of
			// snapshots, over the bound if they were held), through the same pages.
			args, want := append(ref, "--all", "--json", "--since", fmt.Sprint(versions-2000)), 2000
			if longTests() {
				args, want = append(ref, "--all", "--json"), versions
			}
			n, rss := runCounting(t, dsn, args...)
			if rss > historyRSSBound {
				t.Errorf("history %v: peak RSS %d MB, want under %d MB", args[3:], rss>>20, historyRSSBound>>20)
			}
			t.Logf("history %v: %d versions streamed, peak RSS %d MB", args[3:], n, rss>>20)
			if n != want {
				t.Errorf("history %v lists %d versions, want %d", args[3:], n, want)
			}
		})
	}
}

// runMeasured runs tandem to its end, fails the test unless it exits 0, and returns its
// stdout and its peak resident memory in bytes.
func runMeasured(t *testing.T, dsn string, args ...string) ([]byte, int64) {
	t.Helper()
	cmd, rss := measuredCmd(t, dsn, args...)
	var errb strings.Builder
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tandem %v: %v\n%s", args, err, errb.String())
	}
	return out, maxRSS(t, cmd, rss)
}

// runCounting runs tandem --json, counting the versions it prints as they stream by (its
// output is too large to keep), and returns that count and its peak resident memory.
func runCounting(t *testing.T, dsn string, args ...string) (int, int64) {
	t.Helper()
	cmd, rss := measuredCmd(t, dsn, args...)
	var errb strings.Builder
	cmd.Stderr = &errb
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	n := countVersions(t, stdout)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("tandem %v: %v\n%s", args, err, errb.String())
	}
	return n, maxRSS(t, cmd, rss)
}

// countVersions counts the entries of "versions" in history --json's layout (an entry's
// "version" key indented by six spaces) and checks that the document ends.
func countVersions(t *testing.T, r io.Reader) int {
	t.Helper()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 4<<20)
	n, ops, last := 0, false, ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, `  "operations"`):
			ops = true
		case !ops && strings.HasPrefix(line, `      "version": `):
			n++
		}
		last = line
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read history --json: %v", err)
	}
	if !ops || last != "}" {
		t.Fatalf("history --json ended without its operations and closing brace (last line %.80q)", last)
	}
	return n
}

// measuredCmd is tandemCmd run under GNU time, which writes the process's peak resident
// memory to the file it returns ("" without /usr/bin/time). A child this test process
// starts itself reports at least this process's own peak: Linux keeps the peak of the
// address space an exec replaces, and Go starts children sharing its own (vfork), whose
// peak earlier tests in the package may have raised. time's child is a fork of time.
func measuredCmd(t *testing.T, dsn string, args ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := tandemCmd(dsn, args...)
	gnuTime, err := exec.LookPath("/usr/bin/time")
	if err != nil {
		return cmd, ""
	}
	rss := filepath.Join(t.TempDir(), "rss")
	cmd.Args = append([]string{gnuTime, "-q", "-f", "%M", "-o", rss}, cmd.Args...)
	cmd.Path = gnuTime
	return cmd, rss
}

// maxRSS returns the peak resident memory of the ended process cmd, in bytes: as GNU time
// wrote it to rss, or as the system reports it when rss is "".
func maxRSS(t *testing.T, cmd *exec.Cmd, rss string) int64 {
	t.Helper()
	if rss != "" {
		b, err := os.ReadFile(rss)
		if err != nil {
			t.Fatalf("peak memory from time: %v", err)
		}
		kb, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			t.Fatalf("peak memory from time: %q: %v", b, err)
		}
		return kb << 10
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		t.Skip("this system reports no resource usage of a child process")
	}
	return ru.Maxrss << 10 // Linux reports kilobytes
}

// mustLongHistory makes a document of some 57 KB whose history holds n versions: the
// create through the store, then n-1 saves that each edit one line of the body, encoded
// as every save is (store.Registry.NewHistoryRow: snapshots and line patches) but written
// straight into the history table in one transaction, since 10,000 saves through the
// store take minutes. The document's version is set to n to match. It returns its id.
func mustLongHistory(t *testing.T, dsn string, n int64) int64 {
	t.Helper()
	ctx := store.WithActor(context.Background(), store.Actor{Name: "tester", Role: store.RoleEditor})
	st, err := openStore(ctx, dsn, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lines := make([]string, 1000)
	for i := range lines {
		lines[i] = fmt.Sprintf("line %04d of a long document, which runs on and on.\n", i)
	}
	rec, err := st.CreateRecord(ctx, store.KindDocument, store.Values{"title": "Long history", "body": strings.Join(lines, "")})
	if err != nil {
		t.Fatal(err)
	}
	reg := st.Registry()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tail := store.HistoryTail{Version: 1, Base: 1, Chain: 1}
	rows := make([]store.HistoryRow, 0, n-1)
	for v := int64(2); v <= n; v++ {
		pre := store.Values{"body": rec.Fields["body"]}
		i := int(v*37) % len(lines)
		lines[i] = fmt.Sprintf("line %04d of a long document, edited in version %d.\n", i, v)
		rec.Fields["body"], rec.Version = strings.Join(lines, ""), v
		h, err := reg.NewHistoryRow(rec, "tester", at.Add(time.Duration(v)*time.Second), []string{"body"}, tail, pre)
		if err != nil {
			t.Fatal(err)
		}
		if h.IsSnapshot() {
			tail = store.HistoryTail{Version: v, Base: v, Chain: 1}
		} else {
			tail = store.HistoryTail{Version: v, Base: h.Base, Chain: tail.Chain + 1, ChainBytes: tail.ChainBytes + len(h.Delta)}
		}
		rows = append(rows, h)
	}
	if isPostgresDSN(dsn) {
		insertHistoryPostgres(t, dsn, rec.ID, rows)
	} else {
		insertHistorySQLite(t, dsn, rec.ID, rows)
	}
	return rec.ID
}

// insertHistorySQLite writes history rows of document id into the SQLite store at path.
func insertHistorySQLite(t *testing.T, path string, id int64, rows []store.HistoryRow) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var at string // the store's own time format, as the create wrote it
	if err := tx.QueryRow(`SELECT at FROM history WHERE kind = 'document' AND record_id = ? AND version = 1`, id).Scan(&at); err != nil {
		t.Fatal(err)
	}
	for _, h := range rows {
		var base, snap, delta any
		if h.IsSnapshot() {
			snap = string(h.Snapshot)
		} else {
			base, delta = h.Base, string(h.Delta)
		}
		if _, err := tx.Exec(`INSERT INTO history (kind, record_id, version, actor, at, fields, base, snapshot, delta)
			VALUES ('document', ?, ?, ?, ?, '["body"]', ?, ?, ?)`, id, h.Version, h.Actor, at, base, snap, delta); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tx.Exec(`UPDATE documents SET version = ? WHERE id = ?`, rows[len(rows)-1].Version, id); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// insertHistoryPostgres writes history rows of document id into the PostgreSQL store dsn.
func insertHistoryPostgres(t *testing.T, dsn string, id int64, rows []store.HistoryRow) {
	t.Helper()
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	src := make([][]any, len(rows))
	for i, h := range rows {
		var base, snap, delta any
		if h.IsSnapshot() {
			snap = string(h.Snapshot)
		} else {
			base, delta = h.Base, string(h.Delta)
		}
		src[i] = []any{"document", id, h.Version, h.Actor, h.At, h.Fields, base, snap, delta, ""}
	}
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{"history"},
		[]string{"kind", "record_id", "version", "actor", "at", "fields", "base", "snapshot", "delta", "event"},
		pgx.CopyFromRows(src)); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `UPDATE documents SET version = $1 WHERE id = $2`, rows[len(rows)-1].Version, id); err != nil {
		t.Fatal(err)
	}
}

// TestE2E_HistoryScreenBounded: the TUI's history screen of the document with 10,001
// versions, in a real terminal: it opens at v10001, end goes to v1 (loading every page on
// the way), and the process's peak resident memory stays under historyRSSBound.
func TestE2E_HistoryScreenBounded(t *testing.T) {
	waitsBeside(t)
	tm := newTmuxServer(t)
	dir := t.TempDir()
	dsn := newSQLiteStore(t)
	id := mustLongHistory(t, dsn, 10001)
	tm.start("hist", fmt.Sprintf("exec env XDG_CACHE_HOME=%s TERM=xterm-256color %s --db %s --user tester",
		filepath.Join(dir, "cache"), binary, dsn))
	tm.waitFor("hist", "[ products ]")
	tm.keys("hist", "Tab")
	tm.waitFor("hist", "Long history")
	tm.keys("hist", "h")
	tm.waitFor("hist", fmt.Sprintf("history of document %d", id), "▸ v10001 tester", "v10000 → v10001")
	tm.keys("hist", "End")
	tm.waitFor("hist", "▸ v1     tester", "created")
	tm.keys("hist", "PageUp")
	tm.waitFor("hist", "▸ v14    tester", "v13 → v14") // 13 rows up: (30-4)/2 show above the diff
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", tm.pid("hist")))
	if err != nil {
		t.Skipf("the peak memory of a process is read from /proc: %v", err)
	}
	var hwm int64
	for line := range strings.SplitSeq(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), &hwm)
		}
	}
	if hwm == 0 {
		t.Fatalf("no VmHWM in /proc/PID/status:\n%s", status)
	}
	t.Logf("the TUI's peak RSS on the history screen: %d MB", hwm>>10)
	if hwm<<10 > historyRSSBound {
		t.Errorf("the TUI's peak RSS on the history screen: %d MB, want under %d MB", hwm>>10, historyRSSBound>>20)
	}
	tm.keys("hist", "Escape")
	tm.waitFor("hist", "Long history")
}
