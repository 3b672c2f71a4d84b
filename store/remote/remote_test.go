package remote_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/memory"
	"github.com/tandem-editor/tandem/store/remote"
	"github.com/tandem-editor/tandem/store/storetest"
)

// served returns a Client of st over an in-memory stream, served with o.
func served(t *testing.T, st store.Store, o remote.Options) *remote.Client {
	t.Helper()
	a, b := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- remote.Serve(ctx, st, b, o) }()
	c, err := remote.Dial(ctx, a)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() {
		c.Close()
		b.Close()
		cancel()
		<-stopped
		st.Close()
	})
	return c
}

func open(t *testing.T, opts store.Options) store.Store {
	return served(t, memory.New(opts), remote.Options{})
}

// The whole contract holds through the wire: every call, its results and its typed errors
// travel as the store returned them.
func TestClient_Contract(t *testing.T) { storetest.Run(t, open) }

func TestClient_Concurrency(t *testing.T) { storetest.RunConcurrency(t, open) }

// A stream that belongs to a user writes as that user whatever actor the client names;
// where a replayed edit came from travels.
func TestServe_ActorIsTheStreams(t *testing.T) {
	st := memory.New(store.Options{})
	c := served(t, st, remote.Options{Actor: &store.Actor{Name: "alice", Role: store.RoleEditor}})
	if c.User() != "alice" {
		t.Fatalf("user = %q, want alice", c.User())
	}
	edited := time.Date(2026, 12, 1, 10, 5, 0, 0, time.UTC)
	ctx := store.WithActor(context.Background(), store.Actor{Name: "mallory", Role: store.RoleSystem, Via: "offline copy", EditedAt: edited})
	rec, err := c.CreateRecord(ctx, store.KindProduct, store.Values{"sku": "A-1", "name": "lamp"})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if rec.UpdatedBy != "alice" {
		t.Errorf("updated_by = %q, want alice", rec.UpdatedBy)
	}
	vs, err := st.FindHistory(context.Background(), store.KindProduct, rec.ID)
	if err != nil || len(vs) != 1 {
		t.Fatalf("history = %v, %v", vs, err)
	}
	if want := "alice (offline copy, edited 2026-12-01T10:05:00Z)"; vs[0].Actor != want {
		t.Errorf("history names %q, want %q", vs[0].Actor, want)
	}
	// The system role was not taken: a system field stays refused to the stream's editor.
	_, err = c.UpdateRecord(ctx, store.KindProduct, rec.ID, store.Update{BaseVersion: rec.Version, Set: store.Values{"thumbnail": "x"}})
	if store.ErrorCode(err) != store.EFORBIDDEN {
		t.Errorf("system field written through an editor's stream: %v, want forbidden", err)
	}
}

// A call after the server went away fails as unavailable, not as a hang.
func TestClient_ServerGone(t *testing.T) {
	a, b := net.Pipe()
	st := memory.New(store.Options{})
	defer st.Close()
	go remote.Serve(context.Background(), st, b, remote.Options{})
	c, err := remote.Dial(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	b.Close()
	_, err = c.FindRecord(context.Background(), store.KindProduct, 1)
	if store.ErrorCode(err) != store.EUNAVAILABLE {
		t.Fatalf("call after the server went: %v, want unavailable", err)
	}
}

// A reader's stream writes no idempotency key either: those are writes too.
func TestServe_ReaderWritesNoKey(t *testing.T) {
	st := memory.New(store.Options{})
	c := served(t, st, remote.Options{Actor: &store.Actor{Name: "vic", Role: store.RoleEditor, ReadOnly: "role viewer"}})
	ctx := store.WithActor(context.Background(), store.Actor{Name: "vic"})
	if _, err := c.ClaimKey(ctx, "import", "k1", "h", time.Minute); store.ErrorCode(err) != store.EFORBIDDEN {
		t.Errorf("a reader's key claim: %v, want forbidden", err)
	}
	if _, err := c.PurgeKeys(ctx); store.ErrorCode(err) != store.EFORBIDDEN {
		t.Errorf("a reader's purge: %v, want forbidden", err)
	}
	if _, err := st.FindKey(context.Background(), "import", "k1"); store.ErrorCode(err) != store.ENOTFOUND {
		t.Errorf("the key after a refused claim: %v, want not found", err)
	}
}

// A team server's user is never the system: the keys of the system's jobs (guessable from
// the task, record and version) are refused to the stream, so no editor can claim,
// complete or fail a job and keep a worker from a record. Other scopes go ahead.
func TestServe_EditorTouchesNoJobKey(t *testing.T) {
	st := memory.New(store.Options{})
	c := served(t, st, remote.Options{Actor: &store.Actor{Name: "eve", Role: store.RoleEditor}})
	ctx := context.Background()
	if _, err := c.ClaimKey(ctx, store.ScopeJob, "wordcount/document/1/1", "h", time.Hour); store.ErrorCode(err) != store.EFORBIDDEN {
		t.Errorf("an editor's claim of a job key: %v, want forbidden", err)
	}
	if err := c.CompleteKey(ctx, store.ScopeJob, "wordcount/document/1/2", []byte("x"), time.Hour); store.ErrorCode(err) != store.EFORBIDDEN {
		t.Errorf("an editor's completion of a job key: %v, want forbidden", err)
	}
	if err := c.FailKey(ctx, store.ScopeJob, "wordcount/document/1/3"); store.ErrorCode(err) != store.EFORBIDDEN {
		t.Errorf("an editor's failing of a job key: %v, want forbidden", err)
	}
	if _, err := st.FindKey(ctx, store.ScopeJob, "wordcount/document/1/1"); store.ErrorCode(err) != store.ENOTFOUND {
		t.Errorf("the job key after a refused claim: %v, want not found", err)
	}
	if _, err := c.ClaimKey(ctx, "copy-create", "k1", "h", time.Minute); err != nil {
		t.Errorf("an editor's claim of a copy's create key: %v", err)
	}
}
