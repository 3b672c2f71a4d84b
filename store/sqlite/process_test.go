package sqlite_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/sqlite"
)

// Environment of a child process started by TestDB_TwoProcesses.
const (
	childDB = "TANDEM_SQLITE_TEST_CHILD_DB"
	childID = "TANDEM_SQLITE_TEST_CHILD_ID"
)

const processWrites = 60

// TestDB_TwoProcesses has two OS processes (this test binary, started again) write one file at
// once: absolute read-modify-writes under LockedUpdate, relative adds, and idempotent adds.
// Both wait for the lock instead of failing, and nothing is lost or applied twice.
func TestDB_TwoProcesses(t *testing.T) {
	if path := os.Getenv(childDB); path != "" {
		runChild(t, path, os.Getenv(childID))
		return
	}
	if testing.Short() {
		t.Skip("starts OS processes")
	}
	path := filepath.Join(t.TempDir(), "t.db")
	db := mustOpen(t, path)
	p := mustProduct(t, db) // stock 0
	d, err := db.CreateRecord(editor(t, "alice"), store.KindDocument, store.Values{"title": "counter"})
	if err != nil {
		t.Fatal(err)
	}
	if p.ID != 1 || d.ID != 1 {
		t.Fatalf("ids = %d, %d; the children expect 1, 1", p.ID, d.ID)
	}
	db.Close()

	const children = 2
	cmds := make([]*exec.Cmd, children)
	outs := make([]bytes.Buffer, children)
	for i := range cmds {
		cmd := exec.Command(os.Args[0], "-test.run=^TestDB_TwoProcesses$", "-test.count=1")
		cmd.Env = append(os.Environ(), childDB+"="+path, childID+"="+strconv.Itoa(i))
		cmd.Stdout, cmd.Stderr = &outs[i], &outs[i]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i] = cmd
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("child %d: %v\n%s", i, err, outs[i].String())
		}
	}
	check := mustOpen(t, path)
	gotP, err := check.FindRecord(t.Context(), store.KindProduct, 1)
	if err != nil {
		t.Fatal(err)
	}
	gotD, err := check.FindRecord(t.Context(), store.KindDocument, 1)
	if err != nil {
		t.Fatal(err)
	}
	// Each child adds 1 per write, and sends each idempotent add twice.
	if want := int64(2 * children * processWrites); gotP.Fields["stock"] != want {
		t.Errorf("stock = %v, want %d", gotP.Fields["stock"], want)
	}
	if want := int64(children * processWrites); gotD.Fields["word_count"] != want {
		t.Errorf("word_count = %v, want %d", gotD.Fields["word_count"], want)
	}
}

func runChild(t *testing.T, path, id string) {
	ctx := store.WithActor(context.Background(), store.Actor{Name: "child" + id, Role: store.RoleSystem})
	db, err := sqlite.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i := range processWrites {
		if _, err := db.LockedUpdate(ctx, store.KindDocument, 1, func(r *store.Record) (store.Update, error) {
			return store.Update{Set: store.Values{"word_count": r.Fields["word_count"].(int64) + 1}}, nil
		}); err != nil {
			t.Fatalf("locked update %d: %v", i, err)
		}
		if _, err := db.UpdateRecord(ctx, store.KindProduct, 1, store.Update{Add: map[string]int64{"stock": 1}}); err != nil {
			t.Fatalf("add %d: %v", i, err)
		}
		u := store.Update{Add: map[string]int64{"stock": 1}, IdempotencyKey: fmt.Sprintf("child%s-%d", id, i)}
		for range 2 {
			if _, err := db.UpdateRecord(ctx, store.KindProduct, 1, u); err != nil {
				t.Fatalf("idempotent add %d: %v", i, err)
			}
		}
	}
}
