package tui

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/memory"
	tsync "github.com/tandem-editor/tandem/sync"
)

// TestTeatest_PartialCopyRefusesOtherKind runs the App in a real program on a copy cloned as
// tandem clone --subtree does (documents only, one subtree): n on the products tab shows the
// store's refusal in the status line and opens no editor, so no product is made that the
// sync could never push; n on the documents tab still opens a new document.
func TestTeatest_PartialCopyRefusesOtherKind(t *testing.T) {
	ctx := store.WithActor(context.Background(), store.Actor{Name: "erin", Role: store.RoleEditor})
	dir := t.TempDir()
	src, wc := memory.New(store.Options{}), memory.New(store.Options{})
	defer src.Close()
	defer wc.Close()
	mustSeed(t, src, 2)
	root, err := src.CreateRecord(ctx, store.KindDocument, store.Values{"title": "Handbook"})
	if err != nil {
		t.Fatal(err)
	}
	st, err := tsync.Clone(ctx, src, wc, tsync.CloneOptions{Source: "/data/src.db", Kinds: []store.Kind{store.KindDocument}, Subtree: root.ID})
	if err != nil {
		t.Fatal(err)
	}

	pctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	app, err := New(pctx, wc, Options{User: "erin", DraftDir: filepath.Join(dir, "drafts"), Now: func() time.Time { return t0 }, Editor: "true"})
	if err != nil {
		t.Fatal(err)
	}
	tm := teatest.NewTestModel(t, app, teatest.WithInitialTermSize(100, 24),
		teatest.WithProgramOptions(tea.WithEnvironment([]string{"TERM=xterm-256color"}), tea.WithColorProfile(colorprofile.Ascii)))
	waitForAll(t, tm, "offline copy of src.db")
	tm.Send(tea.KeyPressMsg{Code: 'n', Text: "n"})
	waitForAll(t, tm, "holds no products")
	tm.Send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	final := tm.FinalModel(t, teatest.WithFinalTimeout(teatestWait)).(*App)
	want := "new product: " + store.CheckCopyCreate(st, store.KindProduct, 0).Error()
	if got := final.list.status.text; got != want {
		t.Errorf("status after n on products = %q, want %q", got, want)
	}
	if final.screen != scrList || final.editor != nil {
		t.Errorf("n on a kind the copy does not hold opened a screen:\n%s", ansi.Strip(final.Render()))
	}
	if n, err := wc.CountRecords(ctx, store.KindProduct); err != nil || n != 0 {
		t.Errorf("%d products in the copy (%v), want none", n, err)
	}
}

// TestWorkCopy_NewDocumentInPartialCopy: in a documents-only copy, n on the documents tab
// opens a new document, which saves into the copy's outbox.
func TestWorkCopy_NewDocumentInPartialCopy(t *testing.T) {
	cs := newCopySetupWith(t, 1, tsync.CloneOptions{Kinds: []store.Kind{store.KindDocument}})
	d := cs.d
	d.key("tab")
	d.key("n")
	if d.app.screen != scrEditor {
		t.Fatalf("n on documents opened no editor:\n%s", d.screen())
	}
	d.typeText("Local note")
	d.key("ctrl+s")
	d.waitFor("created document")
	st, err := cs.wc.CopyState(cs.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Pending != 1 {
		t.Fatalf("%d outbox entries after creating a document, want 1", st.Pending)
	}
}

// TestWorkCopy_HeaderShowsHeldBack: a source record the copy cannot take yet (a local create
// holds its sku) is counted in the header, as tandem status lists it, and leaves the header
// once the sync takes it.
func TestWorkCopy_HeaderShowsHeldBack(t *testing.T) {
	cs := newCopySetup(t, 2)
	d := cs.d
	if strings.Contains(d.screen(), "held back") {
		t.Fatalf("a copy holding nothing back says so:\n%s", d.screen())
	}
	mine, err := cs.wc.CreateRecord(cs.ctx, store.KindProduct, store.Values{"sku": "ZZ-9", "name": "mine"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.src.CreateRecord(cs.ctx, store.KindProduct, store.Values{"sku": "zz-9", "name": "theirs"}); err != nil {
		t.Fatal(err)
	}
	d.key("S")
	d.waitFor("1 conflict")
	if got := strings.SplitN(d.screen(), "\n", 2)[0]; !strings.Contains(got, "· 0 pending · 1 held back · 1 conflict · synced just now") {
		t.Fatalf("header %q does not count the held-back product", got)
	}
	if _, err := cs.wc.DeleteRecord(cs.ctx, store.KindProduct, mine.ID, store.Delete{ExpectVersion: 1}); err != nil {
		t.Fatal(err)
	}
	d.key("esc") // leave the conflict's merge view
	d.key("S")
	d.waitFor("in sync")
	if got := strings.SplitN(d.screen(), "\n", 2)[0]; strings.Contains(got, "held back") {
		t.Fatalf("header %q still counts a record the sync took", got)
	}
}

// TestWorkCopy_EditorOnRecordASyncRemoved: the source deletes a record while its editor is
// open on the copy with unsaved edits. When a sync removes it from the copy (this TUI's S,
// or another tandem's sync, seen at the header's poll), the editor says it is gone from this
// copy, keeps the edits as a draft, and a save says why it cannot save instead of failing on
// a missing record.
func TestWorkCopy_EditorOnRecordASyncRemoved(t *testing.T) {
	for _, how := range []string{"S", "other"} {
		t.Run(how, func(t *testing.T) {
			cs := newCopySetup(t, 3)
			d := cs.d
			openProduct(t, d, 2, "enter")
			focusField(t, d, "name")
			d.typeText(" edited")
			if _, err := cs.src.DeleteRecord(cs.ctx, store.KindProduct, 2, store.Delete{ExpectVersion: 1}); err != nil {
				t.Fatal(err)
			}
			// The sync runs while the editor is open: S started it from the list just before
			// enter opened the record, or another tandem ran it.
			rep := cs.syncElsewhere(t)
			if rep.Removed != 1 {
				t.Fatalf("sync removed %v, want product 2", rep)
			}
			if how == "S" {
				d.app.wc.syncing = true
				d.apply(copySyncedMsg{rep: rep})
			} else {
				d.apply(copyPollMsg{})
			}
			d.waitFor("gone from this copy")
			d.settle() // the draft's write
			if d.app.screen != scrEditor || d.app.editor.readOnly == "" {
				t.Fatalf("the editor is not read-only on a record the copy no longer has:\n%s", d.screen())
			}
			dr, err := d.app.c.drafts.Load(store.KindProduct, 2)
			if err != nil || dr == nil || dr.Values["name"] != "Product 2 edited" {
				t.Fatalf("draft %+v (%v), want the unsaved name kept", dr, err)
			}
			d.key("ctrl+s")
			if st := d.app.editor.status.text; !strings.Contains(st, "gone from this copy") || strings.Contains(st, "not found") {
				t.Fatalf("save on a removed record says %q, want that it is gone from this copy", st)
			}
			if _, err := cs.wc.FindRecord(cs.ctx, store.KindProduct, 2); store.ErrorCode(err) != store.ENOTFOUND {
				t.Fatalf("product 2 in the copy after the save: %v", err)
			}
		})
	}
}

func TestWorkCopy_RewoundSourceSaysTheWaysOn(t *testing.T) {
	err := waysOn(&tsync.RewoundError{Position: 9, Last: 4})
	for _, want := range []string{"went back in time", "tandem sync --repush", "clone the source afresh"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
	var rw *tsync.RewoundError
	if !errors.As(err, &rw) {
		t.Errorf("the refusal is no longer a *RewoundError: %T", err)
	}
	if other := errors.New("boom"); waysOn(other) != other {
		t.Errorf("another error changed: %v", waysOn(other))
	}
}

// TestWorkCopy_ConflictScreenFollowsResize: the merge view of a copy's conflict is one of
// the screens, so a window resized while it is open lays it out again (it once sat outside
// the screen list, and the broadcast of the size missed it).
func TestWorkCopy_ConflictScreenFollowsResize(t *testing.T) {
	cs := newCopySetup(t, 1)
	d := cs.d
	if _, err := cs.wc.UpdateRecord(cs.ctx, store.KindProduct, 1, store.Update{BaseVersion: 1, Set: store.Values{"name": "mine"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.src.UpdateRecord(cs.ctx, store.KindProduct, 1, store.Update{BaseVersion: 1, Set: store.Values{"name": "theirs"}}); err != nil {
		t.Fatal(err)
	}
	d.key("S")
	d.waitFor("1 conflict")
	cm, ok := d.app.screens[scrCopyMerge].(*copyMerge)
	if !ok || d.app.screen != scrCopyMerge {
		t.Fatalf("S opened no merge view of the conflict:\n%s", d.screen())
	}
	d.apply(tea.WindowSizeMsg{Width: 120, Height: 30})
	d.settle()
	if got, want := cm.m.line.Width(), 100; got != want {
		t.Errorf("merge view's value line is %d wide after a resize to 120 columns, want %d", got, want)
	}
}
