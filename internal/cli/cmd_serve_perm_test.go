package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestServe_Permissions: the users file limits editors to kinds and to subtrees, and keeps
// schema changes and ending others' leases to admins; the store refuses each write outside
// them over SSH (a save, an import, a move, a lease break, a schema apply; exit 6, naming
// what the role allows) and writes nothing, and allows each write inside them.
func TestServe_Permissions(t *testing.T) {
	dir := t.TempDir()
	dsn := filepath.Join(dir, "team.db")
	madeStoreAt(t, dsn, "seed")
	a := mustCreate(t, dsn, "document", "title=A")
	a1 := mustCreate(t, dsn, "document", "title=A1", fmt.Sprintf("parent_id=%d", a.ID))
	b := mustCreate(t, dsn, "document", "title=B")
	pat, sue, ada, eddie := newKey(t), newKey(t), newKey(t), newKey(t)
	users := writeFile(t, "users.yaml", fmt.Sprintf(`users:
  - name: pat
    role: editor
    kinds: [product]
    keys: [%s]
  - name: sue
    role: editor
    subtrees: {document: [%d]}
    keys: [%s]
  - name: ada
    role: admin
    keys: [%s]
  - name: eddie
    role: editor
    keys: [%s]
`, authorized(pat.PublicKey()), a.ID, authorized(sue.PublicKey()), authorized(ada.PublicKey()), authorized(eddie.PublicKey())))
	srv := startServe(t, dsn, users)

	t.Run("kinds", func(t *testing.T) {
		wantExit(t, "pat's save of a product", sshRun(t, srv.addr, pat, "set product 1 price=1 --expect-version 1"), 0)
		wantExit(t, "pat's save of a document", sshRun(t, srv.addr, pat, fmt.Sprintf("set document %d title=x --expect-version 1", b.ID)),
			6, `the save of document`, `editor "pat" may write product records`, "nothing was written")
		export := sshRun(t, srv.addr, pat, "export document --format csv")
		wantExit(t, "pat's export of documents", export, 0)
		row := fmt.Sprintf("document,%d,1,,B,", b.ID)
		if !strings.Contains(export.stdout, row) {
			t.Fatalf("export has no row %q:\n%s", row, export.stdout)
		}
		edited := strings.Replace(export.stdout, row, fmt.Sprintf("document,%d,1,,B edited,", b.ID), 1)
		wantExit(t, "pat's import of documents", sshRunIn(t, srv.addr, pat, "import - --format csv", edited), 6, `editor "pat" may write product records`)
		if got := mustGet(t, dsn, "document", b.ID); got.Version != 1 {
			t.Fatalf("document %d is v%d after pat's refused save and import; want v1", b.ID, got.Version)
		}
	})
	t.Run("subtree", func(t *testing.T) {
		allows := fmt.Sprintf(`editor "sue" may write document records: document only at document %d and below`, a.ID)
		wantExit(t, "sue's save in her subtree", sshRun(t, srv.addr, sue, fmt.Sprintf("set document %d title=A1! --expect-version 1", a1.ID)), 0)
		wantExit(t, "sue's move out of her subtree", sshRun(t, srv.addr, sue, fmt.Sprintf("move document %d %d", a1.ID, b.ID)),
			6, "to where it would go", allows)
		wantExit(t, "sue's move to the root", sshRun(t, srv.addr, sue, fmt.Sprintf("move document %d root", a1.ID)), 6, allows)
		wantExit(t, "sue's move into her subtree", sshRun(t, srv.addr, sue, fmt.Sprintf("move document %d %d", b.ID, a1.ID)),
			6, "out of where it is", allows)
		got := mustGet(t, dsn, "document", a1.ID)
		if got.Version != 2 || fmt.Sprint(got.Fields["parent_id"]) != fmt.Sprint(a.ID) {
			t.Fatalf("document %d after sue's refused moves: v%d under %v; want v2 under %d", a1.ID, got.Version, got.Fields["parent_id"], a.ID)
		}
		wantExit(t, "sue's save of a product", sshRun(t, srv.addr, sue, "adjust product 2 stock +1"), 6, allows)
	})
	t.Run("lease break", func(t *testing.T) {
		r := sshRun(t, srv.addr, pat, "lease acquire product 3")
		wantExit(t, "pat's lease", r, 0)
		wantExit(t, "eddie's break of pat's lease", sshRun(t, srv.addr, eddie, "lease break product 3"), 6, "only an admin may do that")
		wantExit(t, "pat's lease after a refused break", sshRun(t, srv.addr, ada, "set product 3 price=2 --expect-version 1"), 4, "pat")
		wantExit(t, "ada's break of pat's lease", sshRun(t, srv.addr, ada, "lease break product 3"), 0, `ended pat's lease on product 3 (editor)`)
		wantExit(t, "ada's save after the break", sshRun(t, srv.addr, ada, "set product 3 price=2 --expect-version 1"), 0)
	})
	t.Run("schema", func(t *testing.T) {
		show := sshRun(t, srv.addr, eddie, "schema show")
		wantExit(t, "schema show", show, 0)
		last := "      - {name: last_sync_at,"
		i := strings.Index(show.stdout, last)
		if i < 0 {
			t.Fatalf("schema show has no %q:\n%s", last, show.stdout)
		}
		end := i + strings.Index(show.stdout[i:], "\n") + 1
		next := show.stdout[:end] + "      - {name: note, label: note, type: string, owner: editor, rule: scalar, group: editor}\n" + show.stdout[end:]
		wantExit(t, "eddie's schema apply", sshRunIn(t, srv.addr, eddie, "schema apply -", next), 6,
			"the schema change: only an admin may do that", `editor "eddie" may write records of every kind`)
		if strings.Contains(mustInProcess(t, dsn, "schema", "show"), "name: note") {
			t.Fatal("the schema changed after an editor's refused apply")
		}
		wantExit(t, "a schema file of the server", sshRun(t, srv.addr, ada, "schema apply /etc/passwd"), 2, "stdin only")
		wantExit(t, "ada's schema apply", sshRunIn(t, srv.addr, ada, "schema apply -", next), 0, "the store's schema is now version 2")
		if !strings.Contains(mustInProcess(t, dsn, "schema", "show"), "name: note") {
			t.Fatal("the schema lacks the field an admin's apply added")
		}
	})
}
