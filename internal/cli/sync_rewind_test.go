package cli

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/postgres/pgtest"
	"github.com/tandem-editor/tandem/store/sqlite"
)

// A source put back from an older backup, in real processes. SQLite: the source's file is
// copied aside and copied back, as a person restores a file. PostgreSQL: the test's schema
// is dumped with pg_dump and, later, dropped and loaded back with psql, as a restore from a
// dump does (sequences included, so new writes take the ids of the lost ones).

// rewinder takes a backup of a source and puts it back.
type rewinder struct {
	backup  func(t *testing.T)
	restore func(t *testing.T)
}

// rewinderFor gives the rewinder of b's store at dsn.
func rewinderFor(t *testing.T, b backend, dsn string) rewinder {
	t.Helper()
	if b.name == "sqlite" {
		return sqliteRewinder(dsn)
	}
	return postgresRewinder(t, dsn)
}

// setNameAt sets product id's name as who, version-checked on the version it has now.
func setNameAt(t *testing.T, dsn, who string, id int64, name string) {
	t.Helper()
	v := mustGet(t, dsn, "product", id).Version
	mustTandem(t, dsn, "--user", who, "set", "product", fmt.Sprint(id), "name="+name, "--expect-version", fmt.Sprint(v))
}

func sqliteRewinder(path string) rewinder {
	bak := path + ".bak"
	files := []string{"", "-wal"}
	return rewinder{
		backup: func(t *testing.T) {
			for _, s := range files {
				copyIfThere(t, path+s, bak+s)
			}
		},
		restore: func(t *testing.T) {
			for _, s := range []string{"", "-wal", "-shm"} {
				if err := os.Remove(path + s); err != nil && !os.IsNotExist(err) {
					t.Fatal(err)
				}
			}
			for _, s := range files {
				copyIfThere(t, bak+s, path+s)
			}
		},
	}
}

func copyIfThere(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if os.IsNotExist(err) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

func postgresRewinder(t *testing.T, dsn string) rewinder {
	for _, tool := range []string{"pg_dump", "psql"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: the PostgreSQL restore is made with pg_dump and psql", tool)
		}
	}
	server := pgtest.ServerDSN(t)
	schema := ""
	if i := strings.Index(dsn, "search_path="); i >= 0 {
		schema, _, _ = strings.Cut(dsn[i+len("search_path="):], "&")
	}
	if schema == "" {
		t.Fatalf("no search_path in the test DSN")
	}
	dump := filepath.Join(t.TempDir(), "backup.sql")
	run := func(t *testing.T, name string, args ...string) {
		t.Helper()
		out, err := exec.Command(name, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, out)
		}
	}
	return rewinder{
		backup: func(t *testing.T) {
			run(t, "pg_dump", "--schema", schema, "--no-owner", "--file", dump, server)
		},
		restore: func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			conn, err := pgx.Connect(ctx, server)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(context.Background())
			if _, err := conn.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
				WHERE pid <> pg_backend_pid() AND application_name LIKE '%' || $1`, schema); err != nil {
				t.Fatal(err)
			}
			if _, err := conn.Exec(ctx, "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
				t.Fatal(err)
			}
			run(t, "psql", "--quiet", "--set", "ON_ERROR_STOP=1", "--file", dump, server)
		},
	}
}

// copyState is the working copy at path: its records (crashState) and its state.
func copyState(t *testing.T, path string) (map[string]string, store.CopyState) {
	t.Helper()
	db, err := sqlite.OpenWith(context.Background(), path, store.Options{}, sqlite.OpenConfig{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st, err := db.CopyState(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return crashState(t, db), *st
}

// TestSync_SourceWentBack: clone, sync, put the source back from a backup taken before the
// sync, write to it; the next sync stops with a message naming what happened and the ways
// on, exits 2 and changes nothing in the copy. Both ways then work: a fresh clone, and
// sync --repush, whose conflicts a person answers before the copy and the source agree.
func TestSync_SourceWentBack(t *testing.T) {
	besideOthers(t)
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			src := b.seeded(t)
			rw := rewinderFor(t, b, src)
			dir := t.TempDir()
			cp := filepath.Join(dir, "copy.db")
			mustTandem(t, src, "clone", src, cp)
			rw.backup(t)

			// Written on the source after the backup, and synced into the copy.
			setNameAt(t, src, "carol", 1, "lost one")
			setNameAt(t, src, "carol", 2, "lost two")
			mustTandem(t, src, "--user", "carol", "adjust", "product", "3", "stock", "5")
			lost := mustCreate(t, src, "product", "sku=LOST-1", "name=lost with the backup")
			mustTandem(t, cp, "sync")
			setNameAt(t, cp, "alice", 6, "alice offline")

			// The restore, and new writes on the restored source.
			// More writes than were lost: the source's log reaches past the copy's
			// position again, with other changes under the ids the copy read.
			rw.restore(t)
			setNameAt(t, src, "bob", 4, "bob's draft")
			setNameAt(t, src, "bob", 4, "bob after the restore")
			setNameAt(t, src, "bob", 5, "bob's draft")
			setNameAt(t, src, "bob", 5, "bob's second draft")
			setNameAt(t, src, "bob", 5, "bob five")
			stock3 := mustGet(t, src, "product", 3).Fields["stock"]
			before, beforeState := copyState(t, cp)

			r := tandem(t, cp, "sync")
			if r.code != 2 {
				t.Fatalf("sync after the restore: exit %d, want 2\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
			}
			for _, want := range []string{"sync refused: the source went back in time", "older backup", "Nothing was pulled or pushed",
				"1 pending change", "tandem sync --repush", "tandem clone " + src} {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("the refusal does not say %q:\n%s", want, r.stderr)
				}
			}
			after, afterState := copyState(t, cp)
			if !maps.Equal(before, after) {
				t.Errorf("the refused sync changed the copy's records")
			}
			if afterState.Position != beforeState.Position || afterState.Mark != beforeState.Mark || afterState.Pending != beforeState.Pending {
				t.Errorf("the refused sync changed the copy's state: %+v, was %+v", afterState, beforeState)
			}

			// Way on (b): a fresh clone has the source as it is now.
			fresh := filepath.Join(dir, "fresh.db")
			mustTandem(t, src, "clone", src, fresh)
			if out := mustTandem(t, fresh, "sync"); !strings.Contains(out, "in sync") {
				t.Errorf("sync of the fresh clone: %s", out)
			}
			if got := mustGet(t, fresh, "product", 4).Fields["name"]; got != "bob after the restore" {
				t.Errorf("fresh clone: product 4 is %v", got)
			}

			// Way on (a): the copy's values again as changes; what differs waits.
			r = tandem(t, cp, "sync", "--repush", "--json")
			if r.code != 3 {
				t.Fatalf("sync --repush: exit %d, want 3 (conflicts)\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
			}
			var got []string
			for _, c := range syncConflicts(t, r.stdout) {
				got = append(got, fmt.Sprintf("%s %d %s", c.Kind, c.ID, c.Op))
			}
			want := []string{"product 1 save", "product 2 save", "product 3 save", "product 4 save", "product 5 save",
				fmt.Sprintf("product %d create", lost.ID)}
			if strings.Join(got, ", ") != strings.Join(want, ", ") {
				t.Fatalf("conflicts after --repush: %v, want %v", got, want)
			}
			// --json says what the text says: "repushed 1 record" (alice's edit).
			var counts struct {
				Repushed *int `json:"repushed"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &counts); err != nil || counts.Repushed == nil || *counts.Repushed != 1 {
				t.Errorf("sync --repush --json: repushed %v (%v), want 1 (alice's edit)\n%s", counts.Repushed, err, r.stdout)
			}
			if got := mustGet(t, src, "product", 6).Fields["name"]; got != "alice offline" {
				t.Errorf("alice's offline edit on the source after --repush: %v", got)
			}
			for _, a := range [][]string{
				{"product", "1", "name=mine"}, {"product", "2", "name=mine"}, {"product", "3", "stock=theirs"},
				{"product", "4", "name=theirs"}, {"product", "5", "name=theirs"}, {"product", fmt.Sprint(lost.ID), "sku=mine"},
			} {
				mustTandem(t, cp, append([]string{"resolve"}, a...)...)
			}
			if out := mustTandem(t, cp, "sync"); !strings.Contains(out, "in sync") {
				t.Fatalf("sync after the answers: %s", out)
			}
			for id, want := range map[int64]string{1: "lost one", 2: "lost two", 4: "bob after the restore", 5: "bob five", 6: "alice offline"} {
				if got := mustGet(t, src, "product", id).Fields["name"]; got != want {
					t.Errorf("source product %d: %v, want %q", id, got, want)
				}
			}
			if got := mustGet(t, src, "product", 3).Fields["stock"]; got != stock3 {
				t.Errorf("source product 3 stock: %v, want the source's %v", got, stock3)
			}
			if out := mustTandem(t, src, "list", "product", "--json"); !strings.Contains(out, "LOST-1") {
				t.Errorf("the lost product is not on the source again")
			}
			// The copy follows the source again.
			setNameAt(t, src, "bob", 4, "bob again")
			mustTandem(t, cp, "sync")
			if got := mustGet(t, cp, "product", 4).Fields["name"]; got != "bob again" {
				t.Errorf("a write after the repush: the copy has %v", got)
			}
		})
	}
}

// syncConflicts returns the conflicts of a sync's --json output, by kind and id.
func syncConflicts(t *testing.T, out string) []jsonConflict {
	t.Helper()
	var v struct {
		Conflicts []jsonConflict `json:"conflicts"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("decode sync --json: %v\n%s", err, out)
	}
	return v.Conflicts
}

// TestSync_SourceWentBackUnmarkedCopy: a copy made by an older tandem keeps no mark of its
// position, and its first sync takes the mark of whatever change the source has there now,
// also on a source that went back in time. A pull then meets a record the source has at a
// version below the one the copy took: the sync is refused as a source that went back (exit
// 2, the ways on), and --repush takes the copy on from there, where before every sync
// stopped on the record for good and --repush was a plain sync.
func TestSync_SourceWentBackUnmarkedCopy(t *testing.T) {
	besideOthers(t)
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			src := b.seeded(t)
			rw := rewinderFor(t, b, src)
			cp := filepath.Join(t.TempDir(), "copy.db")
			mustTandem(t, src, "clone", src, cp)
			rw.backup(t)
			setNameAt(t, src, "carol", 1, "lost one")
			setNameAt(t, src, "carol", 1, "lost two")
			mustTandem(t, cp, "sync")
			setNameAt(t, cp, "alice", 6, "alice offline")

			// The copy as an older tandem left it: format 1, no mark.
			raw, err := sql.Open("sqlite", "file:"+cp+"?_pragma=busy_timeout(10000)")
			if err != nil {
				t.Fatal(err)
			}
			_, err = raw.Exec(`ALTER TABLE wc_meta DROP COLUMN mark`)
			if err == nil {
				_, err = raw.Exec(`UPDATE wc_meta SET format = 1`)
			}
			raw.Close()
			if err != nil {
				t.Fatal(err)
			}

			// The source put back, and written past the copy's position again: product 1
			// comes back at a version below the one the copy took.
			rw.restore(t)
			for _, id := range []int64{2, 3, 4} {
				setNameAt(t, src, "bob", id, "bob after the restore")
			}
			setNameAt(t, src, "bob", 1, "bob one")

			r := tandem(t, cp, "sync")
			if r.code != 2 {
				t.Fatalf("sync after the restore: exit %d, want 2\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
			}
			for _, want := range []string{"sync refused: the source went back in time", "product 1 at version 2", "took version 3",
				"older backup", "1 pending change", "tandem sync --repush", "tandem clone " + src} {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("the refusal does not say %q:\n%s", want, r.stderr)
				}
			}
			if strings.Contains(r.stderr, "the next sync continues") {
				t.Errorf("the refusal says the next sync continues, which it does not:\n%s", r.stderr)
			}

			r = tandem(t, cp, "sync", "--repush", "--json")
			if r.code != 3 {
				t.Fatalf("sync --repush: exit %d, want 3 (conflicts)\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
			}
			if got := mustGet(t, src, "product", 6).Fields["name"]; got != "alice offline" {
				t.Errorf("alice's offline edit on the source after --repush: %v", got)
			}
			var got []string
			for _, c := range syncConflicts(t, r.stdout) {
				got = append(got, fmt.Sprintf("%s %d %s", c.Kind, c.ID, c.Op))
			}
			if want := "product 1 save, product 2 save, product 3 save, product 4 save"; strings.Join(got, ", ") != want {
				t.Errorf("conflicts after --repush: %v, want %s", got, want)
			}
			mustTandem(t, cp, "resolve", "product", "1", "name=mine")
			for _, id := range []string{"2", "3", "4"} {
				mustTandem(t, cp, "resolve", "product", id, "name=theirs")
			}
			if out := mustTandem(t, cp, "sync"); !strings.Contains(out, "in sync") {
				t.Fatalf("sync after the answers: %s", out)
			}
			if got := mustGet(t, src, "product", 1).Fields["name"]; got != "lost two" {
				t.Errorf("source product 1: %v, want the lost write brought back", got)
			}
		})
	}
}

// TestSync_RepushKeepsAnOpenConflict: a conflict open in the copy when the source went back
// in time holds a write of the source (theirs) that the restore lost. --repush must not push
// the copy's value over the restored one as if it were a plain local edit: the copy has seen
// the source's write, so the field stays a conflict a person answers (base brings the lost
// write back).
func TestSync_RepushKeepsAnOpenConflict(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			src := b.seeded(t)
			rw := rewinderFor(t, b, src)
			cp := filepath.Join(t.TempDir(), "copy.db")
			mustTandem(t, src, "clone", src, cp)
			rw.backup(t)
			restored := mustGet(t, src, "product", 1).Fields["name"]
			setNameAt(t, src, "bob", 1, "bob's name")
			setNameAt(t, cp, "alice", 1, "alice's name")
			if r := tandem(t, cp, "sync"); r.code != 3 {
				t.Fatalf("sync with both names: exit %d, want 3 (a conflict)\n%s%s", r.code, r.stdout, r.stderr)
			}

			rw.restore(t)
			setNameAt(t, src, "carol", 2, "carol after the restore")
			setNameAt(t, src, "carol", 3, "carol after the restore")
			if r := tandem(t, cp, "sync"); r.code != 2 {
				t.Fatalf("sync after the restore: exit %d, want 2\n%s%s", r.code, r.stdout, r.stderr)
			}
			r := tandem(t, cp, "sync", "--repush", "--json")
			if r.code != 3 {
				t.Fatalf("sync --repush: exit %d, want 3 (conflicts)\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
			}
			if got := mustGet(t, src, "product", 1).Fields["name"]; got != restored {
				t.Errorf("--repush pushed %q over the restored name %q, though the copy had seen bob's write there", got, restored)
			}
			var found bool
			for _, c := range syncConflicts(t, r.stdout) {
				if c.Kind == "product" && c.ID == 1 {
					found = true
				}
			}
			if !found {
				t.Fatalf("no conflict of product 1 after --repush:\n%s", r.stdout)
			}
			mustTandem(t, cp, "resolve", "product", "1", "name=base")
			mustTandem(t, cp, "resolve", "product", "2", "name=theirs")
			mustTandem(t, cp, "resolve", "product", "3", "name=theirs")
			if out := mustTandem(t, cp, "sync"); !strings.Contains(out, "in sync") {
				t.Fatalf("sync after the answers: %s", out)
			}
			if got := mustGet(t, src, "product", 1).Fields["name"]; got != "bob's name" {
				t.Errorf("source product 1 after answering base: %v, want bob's lost write back", got)
			}
		})
	}
}

// TestSync_RepushSubtreeRoot: a copy of a subtree holds its root without the root's parent,
// which is not in the copy. --repush must not take that for a difference: before, the root
// became a conflict on parent_id after every restore, though nobody had moved it.
func TestSync_RepushSubtreeRoot(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			src := b.seeded(t)
			rw := rewinderFor(t, b, src)
			// A document with a parent, and a child of its own, makes the subtree.
			var docs []record
			if err := json.Unmarshal([]byte(mustTandem(t, src, "list", "documents", "--json")), &docs); err != nil {
				t.Fatal(err)
			}
			var root, child int64
			for _, d := range docs {
				if d.Fields["parent_id"] == nil {
					continue
				}
				for _, c := range docs {
					if p, ok := c.Fields["parent_id"].(float64); ok && int64(p) == d.ID {
						root, child = d.ID, c.ID
					}
				}
				if root != 0 {
					break
				}
			}
			if root == 0 {
				t.Fatal("the sample data has no document with both a parent and a child")
			}
			cp := filepath.Join(t.TempDir(), "copy.db")
			mustTandem(t, src, "clone", src, cp, "--subtree", fmt.Sprint(root))
			rw.backup(t)
			retitle := func(dsn string, id int64, title string) {
				t.Helper()
				v := mustGet(t, dsn, "document", id).Version
				mustTandem(t, dsn, "set", "document", fmt.Sprint(id), "title="+title, "--expect-version", fmt.Sprint(v))
			}
			retitle(src, child, "lost with the backup")
			mustTandem(t, cp, "sync")
			rw.restore(t)
			retitle(src, child, "after the restore")
			retitle(src, child, "after the restore, again")

			r := tandem(t, cp, "sync", "--repush", "--json")
			if r.code != 3 {
				t.Fatalf("sync --repush: exit %d, want 3 (the child's conflict)\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
			}
			var got []string
			for _, c := range syncConflicts(t, r.stdout) {
				got = append(got, fmt.Sprintf("%s %d %v", c.Kind, c.ID, c.Fields))
			}
			if want := fmt.Sprintf("document %d [title]", child); strings.Join(got, ", ") != want {
				t.Errorf("conflicts after --repush: %v, want only %s (the root %d was not moved)", got, want, root)
			}
		})
	}
}
