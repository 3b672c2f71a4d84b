package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tandem-editor/tandem/internal/exchange"
)

// TestE2E_ImportBesideTUIAndAdjust: an import lands on records that a person holds open in
// the TUI (a real terminal) and that `tandem adjust` processes change at the same time.
// Nothing is lost: every adjust counts, every merged row lands, a second import made on
// stale versions reports each moved record as a conflict of its own row, and the person's
// save on the version they opened meets the conflict dialog and is merged in the merge
// view, keeping the import's and the adjusts' writes.
func TestE2E_ImportBesideTUIAndAdjust(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("no tmux")
	}
	if !longTests() {
		t.Skip("half a minute of processes beside a TUI; it runs with TANDEM_LONG_TESTS=1 (CI)")
	}
	const n = 30
	dsn := newSQLiteStore(t)
	mustTandem(t, dsn, "import", writeFile(t, "base.csv", importBase(n))) // product i: stock i, v1

	tm := newTmuxServer(t)
	tm.start("alice", fmt.Sprintf("exec env XDG_CACHE_HOME=%s TERM=xterm-256color %s --db '%s' --user alice",
		filepath.Join(t.TempDir(), "cache"), binary, dsn))
	tm.waitFor("alice", "Base 1", fmt.Sprintf("1 of %d", n))
	tm.keys("alice", "Enter")
	tm.waitFor("alice", "product 1 · v1")

	// Adjust processes and a merging import at once, on the same records.
	var rows strings.Builder
	rows.WriteString("kind,id,version,name\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&rows, "product,%d,1,Imported %d\n", i, i)
	}
	file := writeFile(t, "names.csv", rows.String())
	imp := tandemCmd(dsn, "--user", "importer", "import", file, "--merge", "--batch", "3", "--json")
	var out, errb bytes.Buffer
	imp.Stdout, imp.Stderr = &out, &errb
	if err := imp.Start(); err != nil {
		t.Fatal(err)
	}
	adjusted := map[int]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 1 + w; i <= n; i += 3 {
				if r := tandem(t, dsn, "adjust", "product", strconv.Itoa(i), "stock", "1"); r.code != 0 {
					t.Errorf("adjust product %d: exit %d: %s", i, r.code, r.stderr)
					continue
				}
				mu.Lock()
				adjusted[i]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := imp.Wait(); err != nil {
		t.Fatalf("merging import: %v: %s", err, errb.String())
	}
	var rep struct {
		Rows []exchange.Result `json:"rows"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil || len(rep.Rows) != n {
		t.Fatalf("import report: %d rows, %v\n%s", len(rep.Rows), err, out.String())
	}
	for i := 1; i <= n; i++ {
		got := mustGet(t, dsn, "product", int64(i))
		if got.Fields["name"] != fmt.Sprintf("Imported %d", i) || fmt.Sprint(got.Fields["stock"]) != strconv.Itoa(i+adjusted[i]) {
			t.Errorf("product %d: name %v stock %v; want the import's name and stock %d (%d adjusts)",
				i, got.Fields["name"], got.Fields["stock"], i+adjusted[i], adjusted[i])
		}
	}

	// Other names on the versions the rows were first written from, without --merge: every
	// record moved since, and each row says so on its own. (The same file again would be
	// recognised as imported before and change nothing.)
	stale := writeFile(t, "stale.csv", strings.ReplaceAll(rows.String(), ",Imported ", ",Renamed "))
	r := tandem(t, dsn, "import", stale, "--json")
	wantExit(t, "a stale import", r, 3)
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || len(rep.Rows) != n {
		t.Fatalf("stale import report: %d rows, %v\n%s", len(rep.Rows), err, r.stdout)
	}
	for _, row := range rep.Rows {
		if row.Outcome != exchange.Conflict {
			t.Errorf("stale row of product %d: %s %s, want a conflict", row.ID, row.Outcome, row.Message)
		}
	}

	// Alice, still on v1 of product 1, renames it: the dialog, the merge view, her name
	// against the import's, and the adjust kept.
	tm.keys("alice", "Tab")
	tm.waitFor("alice", "▸ name")
	tm.keys("alice", "C-u")
	tm.text("alice", "Alice's lamp")
	tm.keys("alice", "C-s")
	tm.waitFor("alice", "you edited v1", "m  merge field by field")
	tm.keys("alice", "m")
	tm.waitFor("alice", "1 of 1 conflict left", "Alice's lamp", "Imported 1")
	tm.keys("alice", "1")
	tm.waitFor("alice", "0 of 1 conflict left")
	tm.keys("alice", "C-s")
	tm.waitFor("alice", "saved v")
	got := mustGet(t, dsn, "product", 1)
	if got.Fields["name"] != "Alice's lamp" || fmt.Sprint(got.Fields["stock"]) != strconv.Itoa(1+adjusted[1]) || got.UpdatedBy != "alice" {
		t.Errorf("product 1 = %v, stock %v by %s; want Alice's lamp, stock %d, by alice", got.Fields["name"], got.Fields["stock"], got.UpdatedBy, 1+adjusted[1])
	}
	hist := mustTandem(t, dsn, "history", "product", "1")
	for _, who := range []string{"alice", "importer"} {
		if !strings.Contains(hist, who) {
			t.Errorf("history of product 1 does not name %s:\n%s", who, hist)
		}
	}
}
