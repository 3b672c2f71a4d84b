package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store/postgres/pgtest"
)

// TestCLI_CopySchemaAndOutsideWrites: a working copy of a store of one's own kinds
// (store/testdata/parts.yaml), cloned by the binary before a schema change, with pending
// edits while another program (a real sqlite3 or psql process) updates, inserts and deletes
// rows of the parts table on the source. The copy's sync takes the source's schema first,
// merges the edit that collides with nothing, queues the one whose field the other program
// changed too, takes the insert and the delete; history names the outside writer. A
// person's schema apply on the copy is refused, naming the source. A later destructive
// change that drops a field the copy edited keeps that edit pending and says what to do,
// in text and --json, until --drop-unfit.
func TestCLI_CopySchemaAndOutsideWrites(t *testing.T) {
	besideOthers(t)
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) { testCopySchemaOutside(t, b) })
	}
}

// outsideSQL runs SQL statements on the store dsn of backend b as another program would:
// sqlite3 on the file, psql on the server with the store's schema as search_path. It
// returns the name history gives that writer.
func outsideSQL(t *testing.T, b backend, dsn string) (run func(stmts ...string), who string) {
	t.Helper()
	if b.name == "sqlite" {
		sqlite3, err := exec.LookPath("sqlite3")
		if err != nil {
			t.Skip("no sqlite3 command to write the store as another program")
		}
		return func(stmts ...string) {
			t.Helper()
			if out, err := exec.Command(sqlite3, "-bail", "-cmd", ".timeout 10000", dsn, strings.Join(stmts, ";\n")).CombinedOutput(); err != nil {
				t.Fatalf("sqlite3: %v\n%s", err, out)
			}
		}, "outside"
	}
	psql, err := exec.LookPath("psql")
	if err != nil {
		t.Skip("no psql command to write the store as another program")
	}
	schema := ""
	if i := strings.Index(dsn, "search_path="); i >= 0 {
		schema, _, _ = strings.Cut(dsn[i+len("search_path="):], "&")
	}
	if schema == "" {
		t.Fatalf("no search_path in the test DSN %s", dsn)
	}
	server := pgtest.ServerDSN(t)
	return func(stmts ...string) {
		t.Helper()
		args := []string{"--quiet", "--no-psqlrc", "--set", "ON_ERROR_STOP=1", server, "-c", "SET search_path TO " + schema}
		for _, s := range stmts {
			args = append(args, "-c", s)
		}
		if out, err := exec.Command(psql, args...).CombinedOutput(); err != nil {
			t.Fatalf("psql: %v\n%s", err, out)
		}
	}, "postgres"
}

func testCopySchemaOutside(t *testing.T, b backend) {
	parts, err := filepath.Abs("../../store/testdata/parts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(parts)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "parts.db")
	if b.name != "sqlite" {
		src = b.dsn(t)
	}
	mustTandem(t, src, "init", "--schema", parts)
	outside, who := outsideSQL(t, b, src)
	sup := mustCreate(t, src, "supplier", "code=ACME", "name=Acme")
	var ids []int64
	for _, label := range []string{"bolt", "nut", "washer", "screw"} {
		ids = append(ids, mustCreate(t, src, "part", "label="+label, fmt.Sprintf("supplier=%d", sup.ID)).ID)
	}
	bolt, nut, washer, screw := ids[0], ids[1], ids[2], ids[3]
	mustCreate(t, src, "area", "name=hall")

	copyFile := filepath.Join(dir, "copy.db")
	mustTandem(t, src, "clone", src, copyFile)
	if got := mustGet(t, copyFile, "part", bolt); got.Fields["label"] != "bolt" {
		t.Fatalf("the copy's part %d: %v", bolt, got.Fields)
	}

	// The source's schema changes: parts get a colour.
	next := writeFile(t, "parts-v2.yaml", strings.Replace(string(text),
		"      - {name: status,", "      - {name: colour,   type: string, owner: editor, rule: scalar, default: grey}\n      - {name: status,", 1))
	mustTandem(t, src, "schema", "apply", next)
	wantExit(t, "schema apply on the copy", tandem(t, copyFile, "schema", "apply", next), exitUsage,
		"working copy", "apply the change to the source")

	// Offline edits in the copy, on the schema it has (version 1).
	setOn(t, copyFile, "part", bolt, "label=bolt M8")
	setOn(t, copyFile, "part", nut, "label=nut (copy)")
	setOn(t, copyFile, "supplier", sup.ID, "notes=call first")

	// Another program writes the source's parts table.
	stamp := "'2026-01-01T00:00:00.000Z'"
	outside(
		fmt.Sprintf("UPDATE parts SET colour = 'red' WHERE id = %d", bolt),
		fmt.Sprintf("UPDATE parts SET label = 'nut (outside)' WHERE id = %d", nut),
		fmt.Sprintf("UPDATE parts SET status = 'active' WHERE id = %d", washer),
		"INSERT INTO parts (label, colour, updated_at, updated_by) VALUES ('rivet', 'blue', "+stamp+", 'script')",
		fmt.Sprintf("DELETE FROM parts WHERE id = %d", screw),
	)

	r := tandem(t, copyFile, "sync")
	wantExit(t, "sync with a colliding outside write", r, exitConflict,
		"took the source's schema version 2", "add field part.colour", "conflict:", fmt.Sprintf("part %d", nut))
	t.Logf("sync:\n%s", r.stdout)

	got := mustGet(t, src, "part", bolt)
	if got.Fields["label"] != "bolt M8" || got.Fields["colour"] != "red" {
		t.Errorf("the source's part %d after the sync: %v; want the copy's label and the outside colour", bolt, got.Fields)
	}
	if got := mustGet(t, copyFile, "part", bolt); got.Fields["colour"] != "red" || got.Fields["label"] != "bolt M8" {
		t.Errorf("the copy's part %d after the sync: %v", bolt, got.Fields)
	}
	if got := mustGet(t, copyFile, "part", washer); got.Fields["status"] != "active" {
		t.Errorf("the copy's part %d: %v; want the outside status", washer, got.Fields)
	}
	if got := mustGet(t, src, "part", nut); got.Fields["label"] != "nut (outside)" {
		t.Errorf("the source's part %d: %v; want the outside label kept until the conflict is answered", nut, got.Fields)
	}
	list := mustTandem(t, copyFile, "list", "parts")
	if !strings.Contains(list, "rivet") || strings.Contains(list, "screw") {
		t.Errorf("the copy's parts after the sync (want the inserted rivet, not the deleted screw):\n%s", list)
	}
	hist := mustTandem(t, src, "history", "part", fmt.Sprint(nut))
	if !strings.Contains(hist, who) {
		t.Errorf("history of part %d on the source does not name %s:\n%s", nut, who, hist)
	}

	// The conflict answered, the copy is in sync.
	mustTandem(t, copyFile, "resolve", "part", fmt.Sprint(nut), "label=mine")
	mustTandem(t, copyFile, "sync")
	if got := mustGet(t, src, "part", nut); got.Fields["label"] != "nut (copy)" {
		t.Errorf("the source's part %d after resolving mine: %v", nut, got.Fields)
	}

	// A field the copy edits is dropped on the source: the edit stays, said so.
	setOn(t, copyFile, "supplier", sup.ID, "notes=ask for Ann")
	setOn(t, copyFile, "part", washer, "label=washer 10")
	v3 := writeFile(t, "parts-v3.yaml", strings.Replace(readFile(t, next),
		"      - {name: notes,  type: text,   owner: editor, rule: text, search: true}\n", "", 1))
	mustTandem(t, src, "schema", "apply", v3, "--allow-destructive", "--export", filepath.Join(dir, "lost.jsonl"))
	r = tandem(t, copyFile, "sync")
	wantExit(t, "sync with an edit of a dropped field", r, exitConflict,
		"kept, not pushed", "supplier.notes is not in the schema any more", `"ask for Ann"`, "--drop-unfit")
	if got := mustGet(t, src, "part", washer); got.Fields["label"] != "washer 10" {
		t.Errorf("the fitting edit did not go out: %v", got.Fields)
	}
	r = tandem(t, copyFile, "sync", "--json")
	var js struct {
		InSync  bool `json:"in_sync"`
		Pending int  `json:"pending"`
		Unfit   []struct {
			Kind string   `json:"kind"`
			ID   int64    `json:"id"`
			Why  []string `json:"why"`
		} `json:"unfit"`
		Hint string `json:"unfit_hint"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &js); err != nil {
		t.Fatalf("sync --json: %v\n%s", err, r.stdout)
	}
	if js.InSync || js.Pending != 1 || len(js.Unfit) != 1 || js.Unfit[0].Kind != "supplier" || js.Hint == "" {
		t.Errorf("sync --json with an unfit edit: %+v", js)
	}
	if out := mustTandem(t, copyFile, "status"); !strings.Contains(out, "no longer fits the schema (version 3): your save of supplier") {
		t.Errorf("status with an unfit edit:\n%s", out)
	}
	mustTandem(t, copyFile, "sync", "--drop-unfit")
	if out := mustTandem(t, copyFile, "sync"); !strings.Contains(out, "in sync") {
		t.Errorf("sync after --drop-unfit:\n%s", out)
	}
}

// readFile returns the text of the file at path.
func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// setOn sets one field of a record of dsn on the version it has now.
func setOn(t *testing.T, dsn, kind string, id int64, assignment string) {
	t.Helper()
	v := mustGet(t, dsn, kind, id).Version
	mustTandem(t, dsn, "set", kind, fmt.Sprint(id), assignment, "--expect-version", fmt.Sprint(v))
}
