package sync_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/sqlite"
	tsync "github.com/tandem-editor/tandem/sync"
)

func mustDelete(t *testing.T, st store.Store, kind store.Kind, id int64, subtree bool) {
	t.Helper()
	r := mustGet(t, st, kind, id)
	if _, err := st.DeleteRecord(as("dora"), kind, id, store.Delete{ExpectVersion: r.Version, Subtree: subtree}); err != nil {
		t.Fatalf("delete %s %d: %v", kind, id, err)
	}
}

func mustRestore(t *testing.T, st store.Store, kind store.Kind, id int64) {
	t.Helper()
	if _, err := st.RestoreRecord(as("dora"), kind, id, store.Restore{}); err != nil {
		t.Fatalf("restore %s %d: %v", kind, id, err)
	}
}

func absent(t *testing.T, st store.Store, kind store.Kind, id int64) bool {
	t.Helper()
	_, err := st.FindRecord(context.Background(), kind, id)
	if err != nil && store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatal(err)
	}
	return err != nil
}

// TestSync_SourceDeletes: a record deleted on the source goes from the copy at the next
// sync, and comes back when the source restores it; one edited in the copy meanwhile is a
// conflict that keeps the edit until a person restores the record on the source or accepts
// the delete: an edit is never dropped silently.
func TestSync_SourceDeletes(t *testing.T) {
	for name, open := range sources {
		t.Run(name, func(t *testing.T) {
			src := open(t)
			f := seed(t, src)
			wc := mustClone(t, src, "wc")

			mustDelete(t, src, store.KindProduct, f.counter, false)
			mustDelete(t, src, store.KindDocument, f.root, true) // root, x and y
			mustSet(t, wc, "erin", store.KindProduct, f.same, store.Values{"name": "mine"})
			mustSet(t, wc, "erin", store.KindProduct, f.disjoint, store.Values{"name": "let go"})
			mustDelete(t, src, store.KindProduct, f.same, false)
			mustDelete(t, src, store.KindProduct, f.disjoint, false)

			rep := mustSync(t, src, wc)
			if rep.Removed != 4 {
				t.Errorf("sync reports %d records removed, want 4 (a product and a subtree of 3; the edited ones stay)", rep.Removed)
			}
			for _, id := range []int64{f.root, f.x, f.y} {
				if !absent(t, wc, store.KindDocument, id) {
					t.Errorf("document %d, deleted on the source with its subtree, is still in the copy", id)
				}
			}
			if !absent(t, wc, store.KindProduct, f.counter) {
				t.Errorf("product %d, deleted on the source, is still in the copy", f.counter)
			}
			if len(rep.Conflicts) != 2 || !rep.Conflicts[0].Gone() || !rep.Conflicts[1].Gone() {
				t.Fatalf("conflicts %v, want the two edited products as deleted on the source", describe(rep.Conflicts))
			}
			if r := mustGet(t, wc, store.KindProduct, f.same); r.Fields["name"] != "mine" {
				t.Errorf("the local edit of a record deleted on the source: name %v, want mine", r.Fields["name"])
			}

			// mine cannot be pushed to a record that is not there: refused, nothing changes.
			_, err := tsync.Resolve(as("erin"), wc, store.KindProduct, f.same, tsync.Picks{"name": "mine"})
			if store.ErrorCode(err) != store.EINVALID || !strings.Contains(err.Error(), "deleted on the source") {
				t.Fatalf("resolve mine of a deleted record: %v, want a refusal saying it was deleted", err)
			}
			if err := wc.ResolveConflict(as("erin"), store.KindProduct, f.same, store.Values{"name": "mine"}); store.ErrorCode(err) != store.EINVALID {
				t.Fatalf("ResolveConflict of a deleted record (the TUI's path): %v, want EINVALID", err)
			}
			if rep := mustSync(t, src, wc); len(rep.Conflicts) != 2 || rep.InSync() {
				t.Fatalf("after a refused resolve the conflicts are %v and in sync %v: the edit was dropped", describe(rep.Conflicts), rep.InSync())
			}

			// theirs accepts the delete: the local record and its edit go.
			if vals, err := tsync.Resolve(as("erin"), wc, store.KindProduct, f.disjoint, tsync.Picks{"name": "theirs"}); err != nil || vals != nil {
				t.Fatalf("resolve theirs of a deleted record: %v, %v", vals, err)
			}
			if !absent(t, wc, store.KindProduct, f.disjoint) {
				t.Errorf("product %d is still in the copy after its delete was accepted", f.disjoint)
			}

			// The source restores: the untouched records come back, and the edited one's
			// conflict now resolves against the restored record.
			mustRestore(t, src, store.KindProduct, f.counter)
			mustRestore(t, src, store.KindDocument, f.root)
			mustRestore(t, src, store.KindProduct, f.same)
			rep = mustSync(t, src, wc)
			if r := mustGet(t, wc, store.KindProduct, f.counter); r.Version != mustGet(t, src, store.KindProduct, f.counter).Version {
				t.Errorf("restored product %d in the copy at v%d", f.counter, r.Version)
			}
			if absent(t, wc, store.KindDocument, f.root) {
				t.Errorf("restored document %d is not back in the copy", f.root)
			}
			if len(rep.Conflicts) != 1 || rep.Conflicts[0].Gone() || !strings.Contains(rep.Conflicts[0].Reason, "restored") {
				t.Fatalf("conflicts after the restore %v, want product %d against the restored record", describe(rep.Conflicts), f.same)
			}
			if _, err := tsync.Resolve(as("erin"), wc, store.KindProduct, f.same, tsync.Picks{"name": "mine"}); err != nil {
				t.Fatal(err)
			}
			if rep := mustSync(t, src, wc); !rep.InSync() {
				t.Fatalf("not in sync after resolving: %v", describe(rep.Conflicts))
			}
			if r := mustGet(t, src, store.KindProduct, f.same); r.Fields["name"] != "mine" {
				t.Errorf("the source has name %v after the resolution was pushed, want mine", r.Fields["name"])
			}
		})
	}
}

// TestClone_SubtreeOfChild: a subtree whose root has a parent on the source clones (the
// parent is outside the copy, so there the root sits at the top), syncs new documents under
// it, and pushes an edit of the root without moving it on the source.
func TestClone_SubtreeOfChild(t *testing.T) {
	for name, open := range sources {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			src := open(t)
			f := seed(t, src)
			wc := openNew(t, filepath.Join(t.TempDir(), "wc.db"))
			defer wc.Close()
			if _, err := tsync.Clone(ctx, src, wc, tsync.CloneOptions{Kinds: []store.Kind{store.KindDocument}, Subtree: f.x}); err != nil {
				t.Fatalf("clone --subtree of document %d (under %d): %v", f.x, f.root, err)
			}
			if r := mustGet(t, wc, store.KindDocument, f.x); r.Fields[store.ParentField] != nil {
				t.Errorf("the subtree root in the copy has parent %v, want none (its parent is not in the copy)", r.Fields[store.ParentField])
			}
			under, err := src.CreateRecord(as("carol"), store.KindDocument, store.Values{"title": "under x", "parent_id": f.x})
			if err != nil {
				t.Fatal(err)
			}
			mustSet(t, src, "carol", store.KindDocument, f.x, store.Values{"title": "x on the source"})
			mustSync(t, src, wc)
			if r := mustGet(t, wc, store.KindDocument, under.ID); r.Fields[store.ParentField] != f.x {
				t.Errorf("new document under the subtree root: parent %v in the copy, want %d", r.Fields[store.ParentField], f.x)
			}
			if r := mustGet(t, wc, store.KindDocument, f.x); r.Fields["title"] != "x on the source" {
				t.Errorf("the subtree root did not take the source's title: %v", r.Fields["title"])
			}
			mustSet(t, wc, "erin", store.KindDocument, f.x, store.Values{"title": "x offline"})
			if rep := mustSync(t, src, wc); !rep.InSync() {
				t.Fatalf("not in sync: %v", describe(rep.Conflicts))
			}
			r := mustGet(t, src, store.KindDocument, f.x)
			if r.Fields["title"] != "x offline" || r.Fields[store.ParentField] != f.root {
				t.Errorf("source after the push: title %v parent %v, want the offline title under %d", r.Fields["title"], r.Fields[store.ParentField], f.root)
			}
			if !absent(t, wc, store.KindDocument, f.root) {
				t.Errorf("the subtree root's parent %d came into the copy", f.root)
			}
		})
	}
}

// TestSync_SourceBehindPosition: a source put back from an older backup (same store id, a
// shorter change log) is refused with a message saying so, and nothing moves either way.
func TestSync_SourceBehindPosition(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "source.db")
	src, err := sqlite.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := seed(t, src)
	backup := filepath.Join(dir, "backup.db")
	if _, err := src.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	copyFile(t, path, backup)
	wc := mustClone(t, src, "wc")
	mustSet(t, src, "carol", store.KindProduct, f.same, store.Values{"name": "after the backup"})
	mustSync(t, src, wc)
	mustSet(t, wc, "erin", store.KindProduct, f.disjoint, store.Values{"name": "offline"})
	src.Close()

	old, err := sqlite.Open(ctx, backup, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if old.StoreID() != src.StoreID() {
		t.Fatalf("the backup has store id %s, the source %s", old.StoreID(), src.StoreID())
	}
	before, _ := wc.CopyState(ctx)
	_, err = tsync.Sync(ctx, old, wc)
	if store.ErrorCode(err) != store.EINVALID || !strings.Contains(err.Error(), "older backup") {
		t.Fatalf("sync against a source behind the copy's position: %v, want a refusal naming the backup", err)
	}
	after, _ := wc.CopyState(ctx)
	if after.Position != before.Position || after.Pending != 1 {
		t.Errorf("the refused sync moved the copy: position %d→%d, pending %d", before.Position, after.Position, after.Pending)
	}
	if r := mustGet(t, old, store.KindProduct, f.disjoint); r.Fields["name"] == "offline" {
		t.Errorf("the refused sync pushed to the backup")
	}
}

// TestClone_OfWorkingCopyRefused: a working copy is not a source (a copy of it would never
// see what it pulls from its own source).
func TestClone_OfWorkingCopyRefused(t *testing.T) {
	ctx := context.Background()
	src := sources["sqlite"](t)
	seed(t, src)
	wc := mustClone(t, src, "wc")
	dst := openNew(t, filepath.Join(t.TempDir(), "copy2.db"))
	defer dst.Close()
	_, err := tsync.Clone(ctx, wc, dst, tsync.CloneOptions{})
	if store.ErrorCode(err) != store.EINVALID || !strings.Contains(err.Error(), "itself a working copy") {
		t.Fatalf("clone of a working copy: %v, want a refusal", err)
	}
	if _, err := dst.CopyState(ctx); store.ErrorCode(err) != store.ENOTFOUND {
		t.Errorf("the refused clone made the target a working copy: %v", err)
	}
}

// TestSync_LastSyncAfterConflict: a sync that reached the source and ran its pull and push
// is the last sync, whatever it left (here a conflict, exit 3 in the CLI).
func TestSync_LastSyncAfterConflict(t *testing.T) {
	ctx := context.Background()
	src := sources["sqlite"](t)
	f := seed(t, src)
	wc := mustClone(t, src, "wc")
	mustSet(t, wc, "erin", store.KindProduct, f.same, store.Values{"name": "mine"})
	mustSet(t, src, "carol", store.KindProduct, f.same, store.Values{"name": "theirs"})
	start := time.Now()
	if rep := mustSync(t, src, wc); len(rep.Conflicts) != 1 {
		t.Fatalf("conflicts %v, want one", describe(rep.Conflicts))
	}
	st, err := wc.CopyState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.SyncedAt.Before(start.Add(-time.Second)) {
		t.Errorf("last sync %v after a sync that ended with a conflict, want about %v", st.SyncedAt, start)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestClone_ParentAfterChild: ids do not follow the tree. A document under a parent with a
// higher id clones (the parent comes in a later batch), and a pull that brings a document
// under a parent created on the source after it syncs, with local changes pending.
func TestClone_ParentAfterChild(t *testing.T) {
	for name, open := range sources {
		t.Run(name, func(t *testing.T) {
			src := open(t)
			f := seed(t, src)
			var last int64
			for i := range 130 { // more than one batch of the clone's bulk writes
				r, err := src.CreateRecord(as("root"), store.KindDocument, store.Values{"title": "d" + itoa(int64(i))})
				if err != nil {
					t.Fatal(err)
				}
				last = r.ID
			}
			mustMove(t, src, "root", f.text, last)
			wc := mustClone(t, src, "wc")
			if r := mustGet(t, wc, store.KindDocument, f.text); r.Fields[store.ParentField] != last {
				t.Fatalf("document %d in the copy under %v, want %d", f.text, r.Fields[store.ParentField], last)
			}
			if st, err := wc.Stale(context.Background()); err != nil || len(st) != 0 {
				t.Errorf("stale after the clone: %v (%v)", st, err)
			}

			mustSet(t, wc, "erin", store.KindProduct, f.disjoint, store.Values{"name": "pending"})
			p, err := src.CreateRecord(as("carol"), store.KindDocument, store.Values{"title": "new parent"})
			if err != nil {
				t.Fatal(err)
			}
			mustMove(t, src, "carol", f.overlap, p.ID)
			if rep := mustSync(t, src, wc); !rep.InSync() {
				t.Fatalf("not in sync: %v", describe(rep.Conflicts))
			}
			if r := mustGet(t, wc, store.KindDocument, f.overlap); r.Fields[store.ParentField] != p.ID {
				t.Errorf("document %d in the copy under %v after the pull, want %d", f.overlap, r.Fields[store.ParentField], p.ID)
			}
		})
	}
}

// TestSync_DeleteAfterChildrenMoved: the source moves a document's children away and then
// deletes it; one sync takes both, whatever order the copy meets them in.
func TestSync_DeleteAfterChildrenMoved(t *testing.T) {
	for name, open := range sources {
		t.Run(name, func(t *testing.T) {
			src := open(t)
			f := seed(t, src)
			wc := mustClone(t, src, "wc")
			mustMove(t, src, "carol", f.x, f.text)
			mustMove(t, src, "carol", f.y, f.text)
			mustDelete(t, src, store.KindDocument, f.root, false)
			if rep := mustSync(t, src, wc); !rep.InSync() {
				t.Fatalf("not in sync: %v", describe(rep.Conflicts))
			}
			if !absent(t, wc, store.KindDocument, f.root) {
				t.Errorf("document %d, deleted on the source after its children moved away, is still in the copy", f.root)
			}
			if r := mustGet(t, wc, store.KindDocument, f.x); r.Fields[store.ParentField] != f.text {
				t.Errorf("document %d under %v, want %d", f.x, r.Fields[store.ParentField], f.text)
			}
		})
	}
}

// TestSync_SourceBackRegrown: a source put back from an older backup whose change log has
// grown past the copy's position again is caught by a record whose version went back, and
// refused with nothing of that batch written.
func TestSync_SourceBackRegrown(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "source.db")
	src, err := sqlite.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := seed(t, src)
	if _, err := src.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	backup := filepath.Join(dir, "backup.db")
	copyFile(t, path, backup)
	wc := mustClone(t, src, "wc")
	for _, name := range []string{"a", "b", "c"} {
		mustSet(t, src, "carol", store.KindProduct, f.same, store.Values{"name": name})
	}
	mustSync(t, src, wc) // the copy has product f.same at version 4
	src.Close()

	old, err := sqlite.Open(ctx, backup, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	for i := range 5 { // the log grows past the copy's position again
		mustSet(t, old, "bob", store.KindProduct, f.disjoint, store.Values{"name": "again " + itoa(int64(i))})
	}
	mustSet(t, old, "bob", store.KindProduct, f.same, store.Values{"name": "after the restore"}) // version 2
	_, err = tsync.Sync(ctx, old, wc)
	if store.ErrorCode(err) != store.EINVALID || !strings.Contains(err.Error(), "older backup") {
		t.Fatalf("sync against a regrown older source: %v, want a refusal naming the backup", err)
	}
	if r := mustGet(t, wc, store.KindProduct, f.same); r.Version != 4 || r.Fields["name"] != "c" {
		t.Errorf("the refused sync wrote product %d: v%d %v", f.same, r.Version, r.Fields["name"])
	}
}
