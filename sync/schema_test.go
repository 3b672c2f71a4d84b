package sync_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/memory"
	"github.com/tandem-editor/tandem/store/postgres"
	"github.com/tandem-editor/tandem/store/postgres/pgtest"
	"github.com/tandem-editor/tandem/store/sqlite"
	"github.com/tandem-editor/tandem/store/storetest"
	tsync "github.com/tandem-editor/tandem/sync"
)

// partsSources opens each kind of source store with the parts schema
// (store/testdata/parts.yaml: suppliers, parts, a tree of areas; no product or document).
var partsSources = map[string]func(t *testing.T) store.Store{
	"sqlite": func(t *testing.T) store.Store {
		db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "source.db"), store.Options{Registry: storetest.PartsRegistry(t)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	},
	"postgres": func(t *testing.T) store.Store {
		db, err := postgres.Open(context.Background(), pgtest.DSN(t), store.Options{Registry: storetest.PartsRegistry(t)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	},
}

// copyStore is a working copy that also applies schemas (which it refuses as a copy).
type copyStore interface {
	store.WorkingCopy
	store.SchemaApplier
}

// copyMakers make an empty store with a schema, for a working copy: a SQLite file, as the
// clone command makes it, and the memory store.
var copyMakers = map[string]func(t *testing.T, reg *store.Registry) copyStore{
	"sqlite": func(t *testing.T, reg *store.Registry) copyStore {
		db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "copy.db"), store.Options{Registry: reg})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	},
	"memory": func(t *testing.T, reg *store.Registry) copyStore { return memory.New(store.Options{Registry: reg}) },
}

// mustCloneAs clones src into a new SQLite working copy made with src's schema, as the
// clone command makes it.
func mustCloneAs(t *testing.T, src store.Store) copyStore {
	t.Helper()
	return mustCloneInto(t, src, copyMakers["sqlite"](t, src.Registry()))
}

// mustCloneInto clones src into db.
func mustCloneInto(t *testing.T, src store.Store, db copyStore) copyStore {
	t.Helper()
	if _, err := tsync.Clone(context.Background(), src, db, tsync.CloneOptions{Source: "test source"}); err != nil {
		t.Fatalf("clone: %v", err)
	}
	return db
}

// partsChanged returns the parts schema with the edits applied to its file text, each a
// pair of old and new text.
func partsChanged(t *testing.T, edits ...string) *store.Registry {
	t.Helper()
	text := string(storetest.PartsRegistry(t).YAML())
	for i := 0; i+1 < len(edits); i += 2 {
		if !strings.Contains(text, edits[i]) {
			t.Fatalf("the parts schema has no %q:\n%s", edits[i], text)
		}
		text = strings.Replace(text, edits[i], edits[i+1], 1)
	}
	reg, err := store.ParseRegistry("parts.yaml (changed)", []byte(text))
	if err != nil {
		t.Fatalf("changed parts schema: %v\n%s", err, text)
	}
	return reg
}

// mustApply applies next to src as a schema change.
func mustApply(t *testing.T, src store.Store, next *store.Registry, destructive bool) {
	t.Helper()
	ap, ok := src.(store.SchemaApplier)
	if !ok {
		t.Fatalf("%T applies no schema", src)
	}
	if _, err := ap.ApplySchema(as("admin"), next, store.ApplyOptions{AllowDestructive: destructive}); err != nil {
		t.Fatalf("apply schema: %v", err)
	}
}

// additive is a schema change of the parts schema that only adds: a new field of parts
// with a default, a renamed field of suppliers (notes → remarks), a new enum value.
func additive(t *testing.T) *store.Registry {
	const status = "values: [draft, active, retired], default: draft}"
	return partsChanged(t,
		"{name: notes, label: notes,", "{name: remarks, rename_from: notes, label: notes,",
		status, "values: [draft, active, retired, archived], default: draft}\n"+
			"      - {name: colour, type: string, owner: editor, rule: scalar, default: grey}")
}

// TestSync_SchemaChangeAfterClone syncs a copy of the parts schema cloned before a schema
// change on the source, with the copy's edits made before or after the change, from a
// SQLite and a PostgreSQL source: the copy takes the source's schema before its records,
// its pending edits go out (a renamed field's under its new name), and the source's new
// field reaches the copy's records.
func TestSync_SchemaChangeAfterClone(t *testing.T) {
	for name, open := range partsSources {
		for cname, makeCopy := range copyMakers {
			for _, editsFirst := range []bool{false, true} {
				order := "SchemaThenEdits"
				if editsFirst {
					order = "EditsThenSchema"
				}
				t.Run(name+"/"+cname+"/"+order, func(t *testing.T) {
					if name == "postgres" {
						pgtest.DSN(t) // skips without a server
					}
					src := open(t)
					ctx := as("root")
					sup, err := src.CreateRecord(ctx, "supplier", store.Values{"code": "ACME", "name": "Acme", "notes": "old"})
					if err != nil {
						t.Fatal(err)
					}
					part, err := src.CreateRecord(ctx, "part", store.Values{"label": "bolt", "supplier": sup.ID})
					if err != nil {
						t.Fatal(err)
					}
					root, err := src.CreateRecord(ctx, "area", store.Values{"name": "hall"})
					if err != nil {
						t.Fatal(err)
					}
					if _, err := src.CreateRecord(ctx, "area", store.Values{"name": "shelf", store.ParentField: root.ID}); err != nil {
						t.Fatal(err)
					}
					wc := mustCloneInto(t, src, makeCopy(t, src.Registry()))
					if got, want := wc.Registry().Version(), src.Registry().Version(); got != want {
						t.Fatalf("the copy's schema is version %d, want the source's %d", got, want)
					}
					if n, err := wc.CountRecords(context.Background(), "area"); err != nil || n != 2 {
						t.Fatalf("the copy holds %d areas (%v), want 2", n, err)
					}
					edit := func() {
						mustSet(t, wc, "alice", "supplier", sup.ID, store.Values{"notes": "from the copy"})
						mustSet(t, wc, "alice", "part", part.ID, store.Values{"label": "bolt M8"})
					}
					if editsFirst {
						edit()
					}
					mustApply(t, src, additive(t), false)
					newPart, err := src.CreateRecord(ctx, "part", store.Values{"label": "nut", "colour": "red", "status": "archived"})
					if err != nil {
						t.Fatal(err)
					}
					if !editsFirst {
						edit()
					}
					rep := mustSync(t, src, wc)
					if rep.Schema == nil || rep.Schema.To != src.Registry().Version() {
						t.Fatalf("the sync took schema %+v, want version %d", rep.Schema, src.Registry().Version())
					}
					if !rep.InSync() || rep.Pushed != 2 {
						t.Fatalf("sync: in sync %v, pushed %d, unfit %v, conflicts %v; want in sync, 2 pushed", rep.InSync(), rep.Pushed, rep.Unfit, rep.Conflicts)
					}
					if got := mustGet(t, src, "supplier", sup.ID).Fields["remarks"]; got != "from the copy" {
						t.Errorf("the source's supplier remarks = %v, want the copy's edit of notes", got)
					}
					if got := mustGet(t, src, "part", part.ID).Fields["label"]; got != "bolt M8" {
						t.Errorf("the source's part label = %v, want the copy's edit", got)
					}
					got := mustGet(t, wc, "part", newPart.ID)
					if got.Fields["colour"] != "red" || got.Fields["status"] != "archived" {
						t.Errorf("the copy's new part = %v, want colour red, status archived", got.Fields)
					}
					if got := mustGet(t, wc, "part", part.ID).Fields["colour"]; got != "grey" {
						t.Errorf("the copy's old part colour = %v, want the default grey", got)
					}
					if got := wc.Registry().Version(); got != src.Registry().Version() {
						t.Errorf("the copy's schema is version %d, want %d", got, src.Registry().Version())
					}
					// A person's own schema change on the copy is refused, saying where to make it.
					_, err = wc.ApplySchema(as("alice"), storetest.PartsRegistry(t), store.ApplyOptions{})
					if err == nil || !strings.Contains(err.Error(), "apply the change to the source") {
						t.Errorf("apply schema on the copy: %v, want a refusal naming the source", err)
					}
				})
			}
		}
	}
}

// TestSync_SchemaChangeUnfit syncs a copy whose pending edits no longer fit the source's new
// schema (a field dropped, an enum value removed): they stay pending and are reported with
// their values, the copy's other edits go out, and once dropped the copy takes the
// source's values.
func TestSync_SchemaChangeUnfit(t *testing.T) {
	for name, open := range partsSources {
		t.Run(name, func(t *testing.T) {
			if name == "postgres" {
				pgtest.DSN(t)
			}
			src := open(t)
			ctx := as("root")
			sup, err := src.CreateRecord(ctx, "supplier", store.Values{"code": "ACME", "name": "Acme"})
			if err != nil {
				t.Fatal(err)
			}
			p1, err := src.CreateRecord(ctx, "part", store.Values{"label": "bolt"})
			if err != nil {
				t.Fatal(err)
			}
			p2, err := src.CreateRecord(ctx, "part", store.Values{"label": "nut"})
			if err != nil {
				t.Fatal(err)
			}
			wc := mustCloneAs(t, src)
			mustSet(t, wc, "alice", "supplier", sup.ID, store.Values{"notes": "keep me"})
			mustSet(t, wc, "alice", "part", p1.ID, store.Values{"status": "retired"})
			mustSet(t, wc, "alice", "part", p2.ID, store.Values{"label": "nut M8"})

			mustApply(t, src, partsChanged(t,
				"      - {name: notes, label: notes, type: text, owner: editor, rule: text, group: editor, search: true}\n", "",
				"values: [draft, active, retired]", "values: [draft, active]"), true)

			rep := mustSync(t, src, wc)
			if rep.InSync() || len(rep.Unfit) != 2 {
				t.Fatalf("sync: in sync %v, unfit %+v; want the 2 edits that no longer fit", rep.InSync(), rep.Unfit)
			}
			var why []string
			for _, u := range rep.Unfit {
				why = append(why, strings.Join(u.Why, "; "))
			}
			all := strings.Join(why, "\n")
			for _, want := range []string{"supplier.notes is not in the schema any more", `"keep me"`, `"retired" is not one of`} {
				if !strings.Contains(all, want) {
					t.Errorf("unfit reasons %q lack %q", all, want)
				}
			}
			if rep.Pending != 2 || rep.Pushed != 1 {
				t.Errorf("pending %d, pushed %d; want 2 kept, 1 pushed", rep.Pending, rep.Pushed)
			}
			if got := mustGet(t, src, "part", p2.ID).Fields["label"]; got != "nut M8" {
				t.Errorf("the fitting edit did not go out: label %v", got)
			}
			// Kept, with their values, through another sync.
			es, err := wc.Outbox(context.Background(), 0)
			if err != nil {
				t.Fatal(err)
			}
			var kept []string
			for _, e := range es {
				for k, v := range e.After {
					kept = append(kept, k+"="+fmt.Sprint(v))
				}
			}
			slices.Sort(kept)
			if !slices.Contains(kept, "notes=keep me") || !slices.Contains(kept, "status=retired") {
				t.Errorf("outbox after the sync holds %v, want notes=keep me and status=retired", kept)
			}
			if rep := mustSync(t, src, wc); len(rep.Unfit) != 2 {
				t.Errorf("a second sync reports %d unfit, want 2", len(rep.Unfit))
			}
			dropped, err := tsync.DropUnfit(context.Background(), src, wc)
			if err != nil || len(dropped) != 2 {
				t.Fatalf("drop unfit: %d dropped, %v; want 2", len(dropped), err)
			}
			rep = mustSync(t, src, wc)
			if !rep.InSync() {
				t.Fatalf("after dropping: not in sync: %+v", rep)
			}
			if got := mustGet(t, wc, "part", p1.ID).Fields["status"]; got != "draft" {
				t.Errorf("the copy's part status = %v, want the source's draft", got)
			}
		})
	}
}

// TestClone_KindWithItsRefs: a copy of one kind of a store of its own kinds holds what that
// kind refers to, or is refused; a tree kind alone comes with its tree.
func TestClone_KindWithItsRefs(t *testing.T) {
	src := partsSources["sqlite"](t)
	ctx := as("root")
	sup, err := src.CreateRecord(ctx, "supplier", store.Values{"code": "ACME", "name": "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.CreateRecord(ctx, "part", store.Values{"label": "bolt", "supplier": sup.ID}); err != nil {
		t.Fatal(err)
	}
	root, err := src.CreateRecord(ctx, "area", store.Values{"name": "hall"})
	if err != nil {
		t.Fatal(err)
	}
	// A parent made after its child (ids do not follow the tree).
	child, err := src.CreateRecord(ctx, "area", store.Values{"name": "shelf"})
	if err != nil {
		t.Fatal(err)
	}
	later, err := src.CreateRecord(ctx, "area", store.Values{"name": "annex", store.ParentField: root.ID})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.MoveRecord(ctx, "area", child.ID, store.Move{Parent: &later.ID}); err != nil {
		t.Fatal(err)
	}
	db := copyMakers["sqlite"](t, src.Registry())
	_, err = tsync.Clone(context.Background(), src, db, tsync.CloneOptions{Kinds: []store.Kind{"part"}})
	if store.ErrorCode(err) != store.EINVALID || !strings.Contains(err.Error(), "parts refer to suppliers") {
		t.Errorf("clone of parts alone: %v, want EINVALID naming suppliers", err)
	}
	db = copyMakers["sqlite"](t, src.Registry())
	if _, err := tsync.Clone(context.Background(), src, db, tsync.CloneOptions{Kinds: []store.Kind{"supplier", "part"}}); err != nil {
		t.Fatalf("clone of suppliers and parts: %v", err)
	}
	db = copyMakers["sqlite"](t, src.Registry())
	if _, err := tsync.Clone(context.Background(), src, db, tsync.CloneOptions{Kinds: []store.Kind{"area"}}); err != nil {
		t.Fatalf("clone of areas: %v", err)
	}
	if got := mustGet(t, db, "area", child.ID).Fields[store.ParentField]; got != later.ID {
		t.Errorf("the copy's area %d is under %v, want %d", child.ID, got, later.ID)
	}
}
