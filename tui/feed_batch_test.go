package tui

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/memory"
)

// TestWaitChange_TakesWaitingChanges: changes waiting on the feed together come as one
// message, in order; a single one as before; a closed feed after the changes it had.
func TestWaitChange_TakesWaitingChanges(t *testing.T) {
	for _, linger := range []time.Duration{0, time.Hour} {
		ch := make(chan store.Change, 8)
		for i := int64(1); i <= 3; i++ {
			ch <- store.Change{ID: i}
		}
		if linger > 0 {
			close(ch) // a lingering wait ends at the close, not after the hour
		}
		msg := waitChange(ch, linger)()
		got, ok := msg.(changesMsg)
		if !ok || len(got.cs) != 3 || got.cs[0].ID != 1 || got.cs[2].ID != 3 {
			t.Fatalf("linger %s: three waiting changes came as %#v", linger, msg)
		}
		if linger == 0 {
			ch <- store.Change{ID: 4}
			if msg, ok := waitChange(ch, 0)().(changeMsg); !ok || msg.c.ID != 4 {
				t.Fatalf("one change came as %#v", msg)
			}
			close(ch)
		}
		if msg, ok := waitChange(ch, linger)().(feedClosedMsg); !ok {
			t.Fatalf("linger %s: closed feed came as %#v", linger, msg)
		}
	}
}

// countingStore counts the reads of records by id (the list's refreshes).
type countingStore struct {
	*memory.DB
	refreshes atomic.Int64
}

func (s *countingStore) FindRecords(ctx context.Context, f store.Filter) ([]*store.Record, error) {
	if len(f.IDs) > 0 {
		s.refreshes.Add(1)
	}
	return s.DB.FindRecords(ctx, f)
}

// TestList_ChangesTogether: saves that come from the feed together are read again in one
// query, and every one of them shows.
func TestList_ChangesTogether(t *testing.T) {
	fake := newFakeStore(t)
	mustSeed(t, fake, 5)
	s := &countingStore{DB: fake}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	app := openAppList(t, ctx, s, Options{User: "alice", DraftDir: filepath.Join(t.TempDir(), "drafts"), Editor: "true"})
	var cs []store.Change
	for _, id := range []int64{2, 4, 2} {
		rec := mustRecord(t, fake, id)
		saved, err := fake.UpdateRecord(actorCtx("bob"), store.KindProduct, id, store.Update{BaseVersion: rec.Version,
			Set: store.Values{"name": "Renamed " + itoa(id) + " v" + itoa(rec.Version+1)}})
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, store.Change{ID: int64(len(cs) + 1), Event: store.EventSaved, Kind: store.KindProduct,
			RecordID: id, Version: saved.Version})
	}
	_, cmd := app.Update(changesMsg{cs: cs})
	runSync(t, app, cmd)
	if n := s.refreshes.Load(); n != 1 {
		t.Errorf("%d reads for three changes of two records, want 1", n)
	}
	screen := ansi.Strip(app.Render())
	for _, want := range []string{"Renamed 2 v3", "Renamed 4 v2"} {
		if !strings.Contains(screen, want) {
			t.Errorf("%q not on screen:\n%s", want, screen)
		}
	}
	if slices.ContainsFunc(strings.Split(screen, "\n"), func(l string) bool { return strings.Contains(l, "Renamed 2 v2") }) {
		t.Errorf("the older save of record 2 is on screen:\n%s", screen)
	}
}
