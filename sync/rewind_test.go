package sync_test

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/sqlite"
	tsync "github.com/tandem-editor/tandem/sync"
)

// rewindable is a SQLite source whose file can be put back from a backup taken earlier.
type rewindable struct {
	t    *testing.T
	path string
	db   *sqlite.DB
}

func newRewindable(t *testing.T) *rewindable {
	r := &rewindable{t: t, path: filepath.Join(t.TempDir(), "source.db")}
	r.db = openNew(t, r.path)
	t.Cleanup(func() { r.db.Close() })
	return r
}

func (r *rewindable) open() {
	db, err := sqlite.Open(context.Background(), r.path, store.Options{})
	if err != nil {
		r.t.Fatal(err)
	}
	r.db = db
}

// backup closes the source, copies its file aside and opens it again.
func (r *rewindable) backup() string {
	r.t.Helper()
	r.db.Close()
	to := r.path + ".bak"
	mustCopyFile(r.t, r.path, to)
	r.open()
	return to
}

// restore closes the source, puts the backup's file in its place and opens it again.
func (r *rewindable) restore(from string) {
	r.t.Helper()
	r.db.Close()
	for _, s := range []string{"-wal", "-shm"} {
		if err := os.Remove(r.path + s); err != nil && !os.IsNotExist(err) {
			r.t.Fatal(err)
		}
	}
	mustCopyFile(r.t, from, r.path)
	r.open()
}

func mustCopyFile(t *testing.T, from, to string) {
	t.Helper()
	if _, err := os.Stat(from + "-wal"); err == nil {
		t.Fatalf("%s has a -wal file after its store was closed", from)
	}
	in, err := os.Open(from)
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

// TestSync_SourceRewound: a source put back from an older backup is refused before anything
// moves, whether it was written to since (the copy's last change has another one's id now)
// or not (its log ends before the copy's position).
func TestSync_SourceRewound(t *testing.T) {
	for _, written := range []bool{true, false} {
		name := "written since"
		if !written {
			name = "not written since"
		}
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			src := newRewindable(t)
			f := seed(t, src.db)
			wc := mustClone(t, src.db, "copy")
			bak := src.backup()
			mustSet(t, src.db, "carol", store.KindProduct, f.disjoint, store.Values{"name": "lost on the source"})
			mustSet(t, src.db, "carol", store.KindDocument, f.text, store.Values{"title": "lost title"})
			mustAdjust(t, src.db, "carol", f.counter, 5)
			mustSync(t, src.db, wc)
			mustSet(t, wc, "alice", store.KindProduct, f.same, store.Values{"name": "alice offline"})
			before, err := wc.CopyState(ctx)
			if err != nil {
				t.Fatal(err)
			}

			src.restore(bak)
			if written {
				mustSet(t, src.db, "bob", store.KindProduct, f.leased, store.Values{"name": "bob after the restore"})
				mustSet(t, src.db, "bob", store.KindDocument, f.overlap, store.Values{"title": "bob's title"})
				mustAdjust(t, src.db, "bob", f.counter, -1)
			}
			_, err = tsync.Sync(ctx, src.db, wc)
			var rw *tsync.RewoundError
			if !errors.As(err, &rw) || !tsync.Refused(err) || store.ErrorCode(err) != store.EINVALID {
				t.Fatalf("sync from the rewound source: %v (code %s), want a refusal", err, store.ErrorCode(err))
			}
			if written && rw.Now == "" {
				t.Errorf("refusal does not say the source's change %d is another one now: %v", rw.Position, err)
			}
			if !written && !strings.Contains(err.Error(), "log ends at change") {
				t.Errorf("refusal does not say where the source's log ends: %v", err)
			}
			if !strings.Contains(err.Error(), "older backup") || !strings.Contains(err.Error(), "Nothing was pulled or pushed") {
				t.Errorf("refusal: %v", err)
			}
			after, err := wc.CopyState(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if after.Position != before.Position || after.Mark != before.Mark || after.Pending != before.Pending {
				t.Errorf("the refused sync changed the copy: %+v, was %+v", after, before)
			}
			if got := mustGet(t, wc, store.KindProduct, f.disjoint).Fields["name"]; got != "lost on the source" {
				t.Errorf("the copy lost the value the source lost: %v", got)
			}
			if got := mustGet(t, wc, store.KindProduct, f.leased).Fields["name"]; got == "bob after the restore" {
				t.Errorf("the refused sync pulled the rewound source's write")
			}
			// Refused again, the same way, until a person acts.
			if _, err := tsync.Sync(ctx, src.db, wc); !errors.As(err, &rw) {
				t.Errorf("second sync: %v, want the same refusal", err)
			}
		})
	}
}

// TestSync_OldCopyTakesMark: a copy made before copies kept the mark of their position
// (format 1, no wc_meta.mark) syncs as before, takes the mark at its first sync, and is
// refused from then on when its source is put back.
func TestSync_OldCopyTakesMark(t *testing.T) {
	ctx := context.Background()
	src := newRewindable(t)
	f := seed(t, src.db)
	wc := mustClone(t, src.db, "copy")
	bak := src.backup()
	mustSet(t, src.db, "carol", store.KindProduct, f.disjoint, store.Values{"name": "lost on the source"})
	mustSync(t, src.db, wc)
	raw, err := sql.Open("sqlite", wc.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for _, q := range []string{`ALTER TABLE wc_meta DROP COLUMN mark`, `UPDATE wc_meta SET format = 1`} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("make the copy a format-1 copy: %v", err)
		}
	}
	if st, err := wc.CopyState(ctx); err != nil || st.Mark != "" {
		t.Fatalf("format-1 copy: %+v, %v", st, err)
	}
	mustSync(t, src.db, wc)
	st, err := wc.CopyState(ctx)
	if err != nil || !strings.Contains(st.Mark, "product") || !strings.Contains(st.Mark, "carol") {
		t.Fatalf("after its first sync the copy's mark is %q (%v), want carol's save", st.Mark, err)
	}
	src.restore(bak)
	mustSet(t, src.db, "bob", store.KindProduct, f.leased, store.Values{"name": "bob after the restore"})
	var rw *tsync.RewoundError
	if _, err := tsync.Sync(ctx, src.db, wc); !errors.As(err, &rw) {
		t.Fatalf("sync from the rewound source: %v, want a refusal", err)
	}
}

// TestRepush: the way on that keeps the copy's work. After a refusal, Repush puts the
// copy's values to the rewound source again: an edit made in the copy on a value the source
// still has is pushed; every other difference (a write the source lost, a write made on it
// after the restore) is a conflict keeping the copy's value; the source's new records come
// in. Once the person has answered, a sync converges both sides.
func TestRepush(t *testing.T) {
	ctx := context.Background()
	src := newRewindable(t)
	f := seed(t, src.db)
	wc := mustClone(t, src.db, "copy")
	bak := src.backup()
	mustSet(t, src.db, "carol", store.KindProduct, f.disjoint, store.Values{"name": "lost on the source"})
	mustSet(t, src.db, "carol", store.KindDocument, f.text, store.Values{"title": "lost title"})
	mustAdjust(t, src.db, "carol", f.counter, 5)
	mustSync(t, src.db, wc)
	mustSet(t, wc, "alice", store.KindProduct, f.same, store.Values{"name": "alice offline"})
	if _, err := wc.CreateRecord(as("alice"), store.KindProduct, store.Values{"sku": "NEW-A", "name": "made offline"}); err != nil {
		t.Fatal(err)
	}
	if _, err := wc.DeleteRecord(as("alice"), store.KindDocument, f.x, store.Delete{ExpectVersion: mustGet(t, wc, store.KindDocument, f.x).Version}); err != nil {
		t.Fatal(err)
	}
	if _, err := wc.DeleteRecord(as("alice"), store.KindDocument, f.y, store.Delete{ExpectVersion: mustGet(t, wc, store.KindDocument, f.y).Version}); err != nil {
		t.Fatal(err)
	}
	src.restore(bak)
	mustSet(t, src.db, "bob", store.KindProduct, f.leased, store.Values{"name": "bob after the restore"})
	mustSet(t, src.db, "bob", store.KindDocument, f.y, store.Values{"title": "y, bob's"})
	mustAdjust(t, src.db, "bob", f.counter, -1)
	created, err := src.db.CreateRecord(as("bob"), store.KindProduct, store.Values{"sku": "NEW-B", "name": "bob's new product"})
	if err != nil {
		t.Fatal(err)
	}
	var rw *tsync.RewoundError
	if _, err := tsync.Sync(ctx, src.db, wc); !errors.As(err, &rw) {
		t.Fatalf("sync: %v, want the refusal", err)
	}

	rep, err := tsync.Repush(as("alice"), src.db, wc)
	if err != nil {
		t.Fatalf("repush: %v", err)
	}
	got := fieldConflicts(rep.Conflicts)
	want := []string{
		"document " + itoa(f.text) + ": title",
		"document " + itoa(f.y) + ": ",
		"product " + itoa(f.counter) + ": stock",
		"product " + itoa(f.disjoint) + ": name",
		"product " + itoa(f.leased) + ": name",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("conflicts after the repush: %v, want %v", got, want)
	}
	if rep.Repushed != 1 || rep.Pushed != 3 {
		t.Errorf("repushed %d, pushed %d; want alice's edit, then it, her create and her delete pushed", rep.Repushed, rep.Pushed)
	}
	if recs, err := src.db.FindRecords(ctx, store.Filter{Kind: store.KindProduct, Search: "NEW-A"}); err != nil || len(recs) != 1 {
		t.Errorf("alice's offline create on the source: %v, %v", recs, err)
	}
	if _, err := src.db.FindRecord(ctx, store.KindDocument, f.x); store.ErrorCode(err) != store.ENOTFOUND {
		t.Errorf("alice's offline delete of document %d: the source has it (%v)", f.x, err)
	}
	if got := mustGet(t, src.db, store.KindProduct, f.same).Fields["name"]; got != "alice offline" {
		t.Errorf("alice's offline edit on the source: %v", got)
	}
	if got := mustGet(t, wc, store.KindProduct, created.ID).Fields["name"]; got != "bob's new product" {
		t.Errorf("the source's new product in the copy: %v", got)
	}
	if got := mustGet(t, wc, store.KindProduct, f.disjoint).Fields["name"]; got != "lost on the source" {
		t.Errorf("the copy's value of a conflict: %v", got)
	}
	// The person's answers: the lost writes are the copy's, bob's the source's.
	for _, a := range []struct {
		kind  store.Kind
		id    int64
		picks tsync.Picks
	}{
		{store.KindProduct, f.disjoint, tsync.Picks{"name": "mine"}},
		{store.KindDocument, f.text, tsync.Picks{"title": "mine"}},
		{store.KindProduct, f.counter, tsync.Picks{"stock": "54"}},
		{store.KindProduct, f.leased, tsync.Picks{"name": "theirs"}},
	} {
		if _, err := tsync.Resolve(as("alice"), wc, a.kind, a.id, a.picks); err != nil {
			t.Fatalf("resolve %s %d: %v", a.kind, a.id, err)
		}
	}
	if err := tsync.ResolveDelete(as("alice"), wc, store.KindDocument, f.y, "theirs"); err != nil {
		t.Fatalf("resolve the delete of document %d: %v", f.y, err)
	}
	if rep = mustSync(t, src.db, wc); !rep.InSync() {
		t.Fatalf("after the answers: %+v", rep)
	}
	assertConverged(t, src.db, wc, nil)
	if got := mustGet(t, wc, store.KindDocument, f.y).Fields["title"]; got != "y, bob's" {
		t.Errorf("document %d, kept as the source has it: %v", f.y, got)
	}
	for id, w := range map[int64]any{f.disjoint: "lost on the source", f.leased: "bob after the restore", f.same: "alice offline"} {
		if got := mustGet(t, src.db, store.KindProduct, id).Fields["name"]; got != w {
			t.Errorf("product %d on the source: %v, want %v", id, got, w)
		}
	}
	if got := mustGet(t, src.db, store.KindProduct, f.counter).Fields["stock"]; got != int64(54) {
		t.Errorf("stock on the source: %v, want 54", got)
	}
	if got := mustGet(t, src.db, store.KindDocument, f.text).Fields["title"]; got != "lost title" {
		t.Errorf("document title on the source: %v", got)
	}
	// The copy follows the source again: a later write there comes in.
	mustSet(t, src.db, "bob", store.KindProduct, f.leased, store.Values{"name": "bob again"})
	mustSync(t, src.db, wc)
	if got := mustGet(t, wc, store.KindProduct, f.leased).Fields["name"]; got != "bob again" {
		t.Errorf("a write after the repush: the copy has %v", got)
	}
}

// TestRepush_LostRecord: a record the copy took from the source that the restore took away
// is a conflict of a create; answering mine creates it on the source anew.
func TestRepush_LostRecord(t *testing.T) {
	ctx := context.Background()
	src := newRewindable(t)
	seed(t, src.db)
	wc := mustClone(t, src.db, "copy")
	bak := src.backup()
	lost, err := src.db.CreateRecord(as("carol"), store.KindProduct, store.Values{"sku": "LOST-1", "name": "lost with the backup", "stock": int64(7)})
	if err != nil {
		t.Fatal(err)
	}
	mustSync(t, src.db, wc)
	src.restore(bak)
	mustSet(t, src.db, "bob", store.KindDocument, 1, store.Values{"title": "bob after the restore"})

	rep, err := tsync.Repush(as("alice"), src.db, wc)
	if err != nil {
		t.Fatalf("repush: %v", err)
	}
	if len(rep.Conflicts) != 2 {
		t.Fatalf("conflicts %v, want the lost product's create and bob's document", describe(rep.Conflicts))
	}
	for _, c := range rep.Conflicts {
		if c.Kind == store.KindProduct && (c.ID != lost.ID || c.Op != store.CopyCreate) {
			t.Errorf("conflict %s, want product %d's create", tsync.Describe(&c), lost.ID)
		}
		// carol created the record on the source: the answers must not say the copy made it.
		if hint := tsync.Hint(&c); c.Kind == store.KindProduct &&
			(strings.Contains(hint, "created here") || !strings.Contains(hint, "lost on the source") || !strings.Contains(hint, "=mine creates it there anew")) {
			t.Errorf("hint for the lost record: %q, want it lost on the source, mine creating it there anew", hint)
		}
	}
	_, err = tsync.Resolve(as("alice"), wc, store.KindProduct, lost.ID, tsync.Picks{"sku": "theirs"})
	if err == nil || strings.Contains(err.Error(), "was created here") || !strings.Contains(err.Error(), "lost") {
		t.Errorf("resolve sku=theirs of the lost record: %v, want a refusal saying the source lost it", err)
	}
	if _, err := tsync.Resolve(as("alice"), wc, store.KindProduct, lost.ID, tsync.Picks{"sku": "mine"}); err != nil {
		t.Fatal(err)
	}
	if _, err := tsync.Resolve(as("alice"), wc, store.KindDocument, 1, tsync.Picks{"title": "theirs"}); err != nil {
		t.Fatal(err)
	}
	if rep = mustSync(t, src.db, wc); !rep.InSync() {
		t.Fatalf("after the answers: %+v", rep)
	}
	recs, err := src.db.FindRecords(ctx, store.Filter{Kind: store.KindProduct, Search: "LOST-1"})
	if err != nil || len(recs) != 1 || recs[0].Fields["stock"] != int64(7) {
		t.Fatalf("the lost product on the source: %v, %v", recs, err)
	}
	assertConverged(t, src.db, wc, nil)
}

// TestRepush_NotRewound: on a source that did not go back in time, Repush is a plain sync:
// the source's newer values come in, nothing becomes a conflict.
func TestRepush_NotRewound(t *testing.T) {
	src := newRewindable(t)
	f := seed(t, src.db)
	wc := mustClone(t, src.db, "copy")
	mustSet(t, src.db, "carol", store.KindProduct, f.disjoint, store.Values{"name": "carol's"})
	mustSet(t, wc, "alice", store.KindProduct, f.same, store.Values{"name": "alice's"})
	rep, err := tsync.Repush(as("alice"), src.db, wc)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.InSync() || rep.Repushed != 0 || rep.Pushed != 1 {
		t.Fatalf("repush on a source that did not go back: %+v", rep)
	}
	assertConverged(t, src.db, wc, nil)
}
