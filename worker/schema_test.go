package worker

import (
	"slices"
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/memory"
)

// memStore returns a memory store on the schema file at path.
func memStore(t *testing.T, path string) store.Store {
	t.Helper()
	reg, err := store.LoadRegistry(path)
	if err != nil {
		t.Fatal(err)
	}
	return memory.New(store.Options{Registry: reg})
}

// TestTask_KindsFromSchema: the sample schema names the fields the tasks keep, so they work
// on the kinds they always did; a schema without such fields gives them none.
func TestTask_KindsFromSchema(t *testing.T) {
	sample := store.DefaultRegistry()
	parts, err := store.LoadRegistry("../store/testdata/parts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		task  Task
		kinds []store.Kind
	}{
		{Checksum, []store.Kind{store.KindProduct, store.KindDocument}},
		{Thumbnail, []store.Kind{store.KindProduct}},
		{WordCount, []store.Kind{store.KindDocument}},
	} {
		if got := tc.task.Kinds(sample); !slices.Equal(got, tc.kinds) {
			t.Errorf("%s on the sample schema works on %v, want %v", tc.task.Name, got, tc.kinds)
		}
		if got := tc.task.Kinds(parts); len(got) != 0 {
			t.Errorf("%s on parts.yaml works on %v, want none", tc.task.Name, got)
		}
	}
}

// TestWorker_SchemaWithoutFields: on a schema whose kinds keep none of the workers' fields
// (suppliers, parts, areas), every task runs, does nothing and writes nothing.
func TestWorker_SchemaWithoutFields(t *testing.T) {
	st := memStore(t, "../store/testdata/parts.yaml")
	acme := mustCreate(t, st, "supplier", store.Values{"code": "ACME", "name": "Acme", "notes": "ships on Tuesdays"})
	bolt := mustCreate(t, st, "part", store.Values{"label": "Bolt", "supplier": acme.ID})
	hall := mustCreate(t, st, "area", store.Values{"name": "Hall"})
	for _, task := range Tasks {
		var logged []string
		w := New(st, task, Options{Logf: func(format string, args ...any) {
			logged = append(logged, format)
		}})
		if got, err := w.RunOnce(systemCtx(t, ActorName(task.Name))); err != nil || got != (Summary{}) {
			t.Errorf("%s on parts.yaml = %v, %v; want nothing done and no error", task.Name, got, err)
		}
		if !slices.ContainsFunc(logged, func(s string) bool { return strings.Contains(s, "nothing to keep") }) {
			t.Errorf("%s on parts.yaml logged %q, want that it has nothing to keep", task.Name, logged)
		}
	}
	for _, r := range []*store.Record{acme, bolt, hall} {
		got := mustFind(t, st, r.Kind, r.ID)
		if got.Version != 1 || got.UpdatedBy != "alice" {
			t.Errorf("%s %d after the workers: v%d by %s, want v1 by alice", r.Kind, r.ID, got.Version, got.UpdatedBy)
		}
		ops, err := st.FindOps(t.Context(), r.Kind, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range ops {
			if strings.HasPrefix(op.Actor, "worker:") {
				t.Errorf("%s %d: operation by %s", r.Kind, r.ID, op.Actor)
			}
		}
	}
}

// TestWorker_CustomKind: a schema of a team's own names the fields under names of its own
// (a claim's content_sha and words, a photo's pic); the workers keep them current after
// every save, and leave alone a kind that only has a field called checksum without naming
// the worker.
func TestWorker_CustomKind(t *testing.T) {
	st := memStore(t, "testdata/claims.yaml")
	reg := st.Registry()
	cust := mustCreate(t, st, "customer", store.Values{"name": "Ada"})
	claim := mustCreate(t, st, "claim", store.Values{"subject": "Broken lamp", "customer": cust.ID,
		"statement": "It arrived\nbroken.", "reply": "Sorry about that", "amount": int64(4200)})
	ctx := systemCtx(t, "worker:checksum@test:1")
	sum, words := New(st, Checksum, Options{}), New(st, WordCount, Options{})

	if got, want := mustRunOnce(t, sum, ctx), (Summary{Done: 1}); got != want {
		t.Fatalf("checksum pass = %v, want %v (the claim only)", got, want)
	}
	if got, want := mustRunOnce(t, words, ctx), (Summary{Done: 1}); got != want {
		t.Fatalf("wordcount pass = %v, want %v", got, want)
	}
	r := mustFind(t, st, "claim", claim.ID)
	first := r.Fields["content_sha"]
	if want := "sha256:" + ContentHash(reg, r); first != want {
		t.Errorf("content_sha = %v, want %v", first, want)
	}
	// Words of the editor text: the statement's 3, not the shared reply's.
	if got := r.Fields["words"]; got != int64(3) {
		t.Errorf("words = %v, want 3", got)
	}
	if got := mustFind(t, st, "customer", cust.ID); got.Version != 1 || got.Fields["checksum"] != "" {
		t.Errorf("customer after the workers: v%d checksum %q, want untouched", got.Version, got.Fields["checksum"])
	}

	// A person's save makes both stale; the next passes bring them up to date.
	if _, err := st.UpdateRecord(editorCtx(t, "alice"), "claim", claim.ID, store.Update{BaseVersion: r.Version,
		Set: store.Values{"statement": "It arrived broken and scratched."}}); err != nil {
		t.Fatal(err)
	}
	if got, want := mustRunOnce(t, sum, ctx), (Summary{Done: 1}); got != want {
		t.Fatalf("checksum pass after the save = %v, want %v", got, want)
	}
	if got, want := mustRunOnce(t, words, ctx), (Summary{Done: 1}); got != want {
		t.Fatalf("wordcount pass after the save = %v, want %v", got, want)
	}
	r = mustFind(t, st, "claim", claim.ID)
	if got, want := r.Fields["content_sha"], "sha256:"+ContentHash(reg, r); got != want || got == first {
		t.Errorf("content_sha after the save = %v, want %v (not the old %v)", got, want, first)
	}
	if got := r.Fields["words"]; got != int64(5) {
		t.Errorf("words after the save = %v, want 5", got)
	}
	// The thumbnail worker keeps a photo's pic, named after its title (photos have no
	// unique field), and leaves claims alone.
	photo := mustCreate(t, st, "photo", store.Values{"caption": "Lamp, broken (front)"})
	if got, want := mustRunOnce(t, New(st, Thumbnail, Options{}), ctx), (Summary{Done: 1}); got != want {
		t.Errorf("thumbnail pass = %v, want %v (the photo only)", got, want)
	}
	p := mustFind(t, st, "photo", photo.ID)
	if got, want := p.Fields["pic"], "thumbs/lamp-broken-front-"+ContentHash(reg, p)[:12]+".png"; got != want {
		t.Errorf("pic = %v, want %v", got, want)
	}
	if got := mustFind(t, st, "claim", claim.ID); got.Version != r.Version {
		t.Errorf("claim written by the thumbnail worker: v%d, want v%d", got.Version, r.Version)
	}
	if got, want := mustRunOnce(t, sum, ctx), (Summary{}); got != want {
		t.Errorf("checksum pass with nothing stale = %v, want %v (photos keep no checksum)", got, want)
	}
}
