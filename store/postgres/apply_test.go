package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/postgres/pgtest"
)

// partsWith returns parts.yaml with old replaced by new.
func partsWith(t *testing.T, edits ...string) *store.Registry {
	t.Helper()
	b, err := os.ReadFile("../testdata/parts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for i := 0; i+1 < len(edits); i += 2 {
		if !strings.Contains(s, edits[i]) {
			t.Fatalf("%q not in parts.yaml", edits[i])
		}
		s = strings.Replace(s, edits[i], edits[i+1], 1)
	}
	reg, err := store.ParseRegistry("parts edited", []byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

const (
	notesLine  = "      - {name: notes,"
	statusLine = "      - {name: status,   type: enum, values: [draft, active, retired], owner: shared, rule: scalar, default: draft}\n"
)

func editor(t *testing.T) store.Actor { return store.Actor{Name: "alice", Role: store.RoleEditor} }

// TestApplySchema_AdditiveWhileSaving: a new field with a default, a field that becomes
// searched and one that becomes sortable are applied while four goroutines save parts;
// every save either commits or fails with a tandem error, none is lost, the records that
// exist get the default and are found by the new search, the store's registry is version 2,
// and the feed carries the schema event.
func TestApplySchema_AdditiveWhileSaving(t *testing.T) {
	dsn := pgtest.DSN(t)
	db := mustOpenWith(t, dsn, mustParts(t))
	ctx := store.WithActor(t.Context(), editor(t))
	acme, err := db.CreateRecord(ctx, "supplier", store.Values{"code": "ACME-7", "name": "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	var parts []int64
	for i := range 4 {
		p, err := db.CreateRecord(ctx, "part", store.Values{"label": fmt.Sprintf("part %d", i), "supplier": acme.ID})
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, p.ID)
	}
	before, err := db.LastChangeID(t.Context())
	if err != nil {
		t.Fatal(err)
	}

	var stop atomic.Bool
	var wg sync.WaitGroup
	last := make([]string, len(parts)) // the label of each part's last committed save
	saves := make([]int, len(parts))
	errs := make(chan error, 100)
	for i, id := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; !stop.Load() || n < 5; n++ {
				r, err := db.FindRecord(ctx, "part", id)
				if err != nil {
					errs <- err
					return
				}
				label := fmt.Sprintf("part %d save %d", i, n)
				_, err = db.UpdateRecord(ctx, "part", id, store.Update{BaseVersion: r.Version, Set: store.Values{"label": label}})
				switch {
				case err == nil:
					last[i] = label
					saves[i]++
				case store.ErrorCode(err) == store.EBUSY:
				default:
					errs <- fmt.Errorf("part %d: %w", i, err)
					return
				}
			}
		}()
	}
	time.Sleep(50 * time.Millisecond)
	next := partsWith(t, notesLine, "      - {name: country, type: string, owner: editor, rule: scalar, default: DE}\n"+notesLine,
		"{name: code,   type: string, owner: editor,", "{name: code, search: true, type: string, owner: editor,",
		"{name: rating, type: int,", "{name: rating, sort: true, type: int,",
		statusLine, statusLine+"      - {name: weight, type: int, owner: editor, rule: scalar, default: 5, sort: true}\n"+
			"      - {name: bin, type: ref, to: bin, owner: editor, rule: scalar}\n"+
			"      - {name: grade, type: enum, values: [a, b], owner: editor, rule: scalar}\n",
		"  area:\n", "  bin:\n    fields:\n      - {name: code, type: string, owner: editor, rule: scalar, search: true}\n  area:\n")
	feed, err := db.Subscribe(t.Context(), before)
	if err != nil {
		t.Fatal(err)
	}
	res, err := db.ApplySchema(ctx, next, store.ApplyOptions{BaseVersion: 1})
	time.Sleep(50 * time.Millisecond)
	stop.Store(true)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("save during the apply: %v", e)
	}
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	if !res.Applied || res.ToVersion != 2 || len(res.Diff.Of(store.ChangeDestructive)) != 0 {
		t.Fatalf("result = %+v\n%s", res, res.Diff)
	}
	if reg := db.Registry(); reg.Version() != 2 || !reg.Same(next) {
		t.Fatalf("registry version %d, same %v; want the new schema at 2", reg.Version(), reg.Same(next))
	}
	for i, id := range parts {
		r, err := db.FindRecord(ctx, "part", id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Fields["label"] != last[i] || r.Fields["weight"] != int64(5) || r.Fields["grade"] != "a" || saves[i] < 5 {
			t.Errorf("part %d = %v after %d saves, want label %q and weight 5", i, r.Fields, saves[i], last[i])
		}
	}
	s, err := db.FindRecord(ctx, "supplier", acme.ID)
	if err != nil || s.Fields["country"] != "DE" {
		t.Fatalf("supplier = %v, %v; want country DE", s, err)
	}
	found, err := db.FindRecords(ctx, store.Filter{Kind: "supplier", Search: "acme-7"})
	if err != nil || len(found) != 1 {
		t.Errorf("search by the newly searched code = %v, %v; want the supplier", found, err)
	}
	if _, err := db.FindRecords(ctx, store.Filter{Kind: "part", Sort: "weight"}); err != nil {
		t.Errorf("sort by the new sort field: %v", err)
	}
	bin, err := db.CreateRecord(ctx, "bin", store.Values{"code": "B-1"})
	if err != nil {
		t.Fatalf("create in the new kind: %v", err)
	}
	if _, err := db.UpdateRecord(ctx, "part", parts[0], store.Update{Set: store.Values{"bin": bin.ID}, BaseVersion: mustVersion(t, db, parts[0])}); err != nil {
		t.Fatalf("save of the new ref: %v", err)
	}
	if _, err := db.pool.Exec(t.Context(), "DELETE FROM bins"); err == nil {
		t.Error("the new ref has no foreign key: a bin a part names was deleted")
	}
	timeout := time.After(10 * time.Second)
	for got := false; !got; {
		select {
		case c := <-feed:
			if c.Event == store.EventSchemaChanged {
				got = true
				if c.Version != 2 || c.Actor != "alice" || c.Kind != "" || c.RecordID != 0 {
					t.Errorf("schema event = %+v, want version 2 by alice", c)
				}
			}
		case <-timeout:
			t.Fatal("the feed delivered no schema event")
		}
	}
	// The same file again changes nothing.
	if res, err := db.ApplySchema(ctx, next, store.ApplyOptions{}); err != nil || res.Applied || res.ToVersion != 2 {
		t.Errorf("second apply = %+v, %v; want nothing applied", res, err)
	}
}

// TestApplySchema_OldClient: a client opened before the change saves a field that still
// exists (and creates a record, which gets the new field's default), then opens again and
// has the new schema.
func TestApplySchema_OldClient(t *testing.T) {
	dsn := pgtest.DSN(t)
	db := mustOpenWith(t, dsn, mustParts(t))
	old := mustOpenWith(t, dsn, nil)
	ctx := store.WithActor(t.Context(), editor(t))
	p, err := old.CreateRecord(ctx, "part", store.Values{"label": "Bolt"})
	if err != nil {
		t.Fatal(err)
	}
	next := partsWith(t, statusLine, statusLine+"      - {name: weight, type: int, owner: editor, rule: scalar, default: 5}\n")
	if _, err := db.ApplySchema(ctx, next, store.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := old.UpdateRecord(ctx, "part", p.ID, store.Update{BaseVersion: 1, Set: store.Values{"label": "Bolt M6"}}); err != nil {
		t.Fatalf("old client's save: %v", err)
	}
	q, err := old.CreateRecord(ctx, "part", store.Values{"label": "Nut"})
	if err != nil {
		t.Fatalf("old client's create: %v", err)
	}
	if old.Registry().Version() != 1 {
		t.Fatalf("old client's registry is version %d before it reopens", old.Registry().Version())
	}
	again := mustOpenWith(t, dsn, nil)
	if v := again.Registry().Version(); v != 2 || !again.Registry().Same(next) {
		t.Fatalf("reopened registry = version %d; want the new schema at 2", v)
	}
	for _, id := range []int64{p.ID, q.ID} {
		r, err := again.FindRecord(ctx, "part", id)
		if err != nil || r.Fields["weight"] != int64(5) {
			t.Errorf("part %d = %v, %v; want weight 5", id, r, err)
		}
	}
	if _, err := Open(t.Context(), dsn, store.Options{Registry: mustParts(t)}); store.ErrorCode(err) != store.EINVALID {
		t.Errorf("open with the old schema file = %v, want EINVALID", err)
	}
}

// TestApplySchema_Destructive: dropping a field, removing an enum value and narrowing a
// limit are refused with the values each affects; a dry run changes nothing; allowed, the
// values about to be lost are exported first, the records holding a removed value get the
// default as a new version, and the column is gone.
func TestApplySchema_Destructive(t *testing.T) {
	dsn := pgtest.DSN(t)
	db := mustOpenWith(t, dsn, mustParts(t))
	ctx := store.WithActor(t.Context(), editor(t))
	for i, code := range []string{"SHORT", "A-LONG-CODE-1", "A-LONG-CODE-2"} {
		if _, err := db.CreateRecord(ctx, "supplier", store.Values{"code": code, "name": "s", "notes": fmt.Sprintf("note %d\n", i)}); err != nil {
			t.Fatal(err)
		}
	}
	var retired []int64
	for i := range 5 {
		status := "active"
		if i < 3 {
			status = "retired"
		}
		p, err := db.CreateRecord(ctx, "part", store.Values{"label": fmt.Sprint("p", i), "status": status})
		if err != nil {
			t.Fatal(err)
		}
		if i < 3 {
			retired = append(retired, p.ID)
		}
	}
	next := partsWith(t, "      - {name: notes,  type: text,   owner: editor, rule: text, search: true}\n", "",
		"[draft, active, retired]", "[draft, active]", "max_chars: 32", "max_chars: 8")
	res, err := db.ApplySchema(ctx, next, store.ApplyOptions{})
	if store.ErrorCode(err) != store.EINVALID {
		t.Fatalf("apply = %v, want EINVALID", err)
	}
	for _, want := range []string{"narrow supplier.code max_chars 32→8: destructive: 2 values are over the new limit",
		"drop field supplier.notes: destructive: 3 records hold a value",
		`remove enum value retired from part.status (its records get "draft"): destructive: 3 records use it`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q lacks %q", err, want)
		}
	}
	if res == nil || res.Applied || len(res.Diff.Of(store.ChangeDestructive)) != 3 {
		t.Fatalf("result = %+v", res)
	}
	if res, err := db.ApplySchema(ctx, next, store.ApplyOptions{DryRun: true}); err != nil || res.Applied ||
		len(res.Diff.Of(store.ChangeDestructive)) != 3 || res.Diff.Changes[0].Affected != 2 {
		t.Fatalf("dry run = %+v, %v; want the diff with its counts", res, err)
	}
	if db.Registry().Version() != 1 {
		t.Fatal("the dry run changed the schema")
	}
	old := mustOpenWith(t, dsn, nil)
	var out bytes.Buffer
	res, err = db.ApplySchema(ctx, next, store.ApplyOptions{AllowDestructive: true, ExportTo: &out})
	if err != nil || !res.Applied || res.Exported != 6 {
		t.Fatalf("allowed apply = %+v, %v; want 6 values exported", res, err)
	}
	var lines []store.LostValue
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var v store.LostValue
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("export line %q: %v", l, err)
		}
		lines = append(lines, v)
	}
	if len(lines) != 6 || lines[0] != (store.LostValue{Kind: "supplier", ID: 1, Field: "notes", Value: "note 0\n"}) ||
		lines[3] != (store.LostValue{Kind: "part", ID: retired[0], Field: "status", Value: "retired"}) {
		t.Errorf("export = %+v", lines)
	}
	for _, id := range retired {
		r, err := db.FindRecord(ctx, "part", id)
		if err != nil || r.Fields["status"] != "draft" || r.Version != 2 {
			t.Errorf("part %d = %+v, %v; want status draft at version 2", id, r, err)
		}
	}
	var n int
	if err := db.pool.QueryRow(t.Context(), `SELECT count(*) FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = 'suppliers' AND column_name IN ('notes', 'notes_fold')`).Scan(&n); err != nil || n != 0 {
		t.Errorf("notes columns left: %d, %v", n, err)
	}
	if _, err := db.FindHistory(ctx, "supplier", 1); err != nil {
		t.Errorf("history of a supplier after its field was dropped: %v", err)
	}
	// A client opened before the change that saves the dropped field is told why.
	_, err = old.UpdateRecord(ctx, "supplier", 1, store.Update{BaseVersion: 1, Set: store.Values{"notes": "x\n"}})
	if store.ErrorCode(err) != store.EINVALID || !strings.Contains(err.Error(), "schema changed since this client opened it") {
		t.Errorf("old client's save of a dropped field = %v, want EINVALID saying the schema changed", err)
	}
}

// TestApplySchema_Concurrent: two applies made against version 1 at once: one wins, the
// other is refused with ECONFLICT and changes nothing.
func TestApplySchema_Concurrent(t *testing.T) {
	dsn := pgtest.DSN(t)
	a := mustOpenWith(t, dsn, mustParts(t))
	b := mustOpenWith(t, dsn, nil)
	ctx := store.WithActor(t.Context(), editor(t))
	nexts := []*store.Registry{
		partsWith(t, notesLine, "      - {name: country, type: string, owner: editor, rule: scalar}\n"+notesLine),
		partsWith(t, notesLine, "      - {name: city, type: string, owner: editor, rule: scalar}\n"+notesLine),
	}
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, db := range []*DB{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = db.ApplySchema(ctx, nexts[i], store.ApplyOptions{BaseVersion: 1})
		}()
	}
	wg.Wait()
	won := 0
	for i, err := range errs {
		switch {
		case err == nil:
			won = i
		case store.ErrorCode(err) != store.ECONFLICT || !strings.Contains(err.Error(), "version 2 now"):
			t.Errorf("apply %d = %v, want ECONFLICT", i, err)
		}
	}
	if (errs[0] == nil) == (errs[1] == nil) {
		t.Fatalf("errors = %v; want exactly one apply to win", errs)
	}
	again := mustOpenWith(t, dsn, nil)
	if reg := again.Registry(); reg.Version() != 2 || !reg.Same(nexts[won]) {
		t.Errorf("store's schema = version %d, want the winner's at 2", reg.Version())
	}
}

// TestApplySchema_RenameKeepsHistory: a field renamed with rename_from keeps its values and
// its history, which reads under the new name.
func TestApplySchema_RenameKeepsHistory(t *testing.T) {
	dsn := pgtest.DSN(t)
	db := mustOpenWith(t, dsn, mustParts(t))
	ctx := store.WithActor(t.Context(), editor(t))
	p, err := db.CreateRecord(ctx, "part", store.Values{"label": "Bolt"})
	if err != nil {
		t.Fatal(err)
	}
	for v, label := range []string{"Bolt M6", "Bolt M8"} {
		if _, err := db.UpdateRecord(ctx, "part", p.ID, store.Update{BaseVersion: int64(v + 1), Set: store.Values{"label": label}}); err != nil {
			t.Fatal(err)
		}
	}
	next := partsWith(t, "    title: label\n", "    title: name\n", "{name: label,    type: string,", "{name: name, rename_from: label, type: string,")
	res, err := db.ApplySchema(ctx, next, store.ApplyOptions{})
	if err != nil || !res.Applied {
		t.Fatalf("apply = %+v, %v", res, err)
	}
	r, err := db.FindRecord(ctx, "part", p.ID)
	if err != nil || r.Fields["name"] != "Bolt M8" {
		t.Fatalf("part = %v, %v; want name Bolt M8", r, err)
	}
	hist, err := db.FindHistory(ctx, "part", p.ID)
	if err != nil {
		t.Fatal(err)
	}
	var names []any
	for _, v := range hist {
		names = append(names, v.Snapshot["name"])
	}
	if fmt.Sprint(names) != "[Bolt M8 Bolt M6 Bolt]" && fmt.Sprint(names) != "[Bolt Bolt M6 Bolt M8]" {
		t.Errorf("history names = %v, want every version's label under name", names)
	}
	found, err := db.FindRecords(ctx, store.Filter{Kind: "part", Search: "m8"})
	if err != nil || len(found) != 1 {
		t.Errorf("search of the renamed field = %v, %v", found, err)
	}
	// Another program's write to the renamed column is seen, under the new name.
	other, err := pgx.Connect(t.Context(), pgtest.ServerDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(context.Background())
	if _, err := other.Exec(t.Context(), `SET search_path TO "`+db.Schema()+`"`); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Exec(t.Context(), "UPDATE parts SET name = 'Bolt M10' WHERE id = $1", p.ID); err != nil {
		t.Fatalf("outside write after the rename: %v", err)
	}
	if hist, err := db.FindHistory(ctx, "part", p.ID); err != nil || len(hist) != 4 || hist[0].Snapshot["name"] != "Bolt M10" {
		t.Errorf("history after the outside write = %+v, %v; want its version first", hist, err)
	}
	// The file with rename_from still in it applies as no change.
	if res, err := db.ApplySchema(ctx, next, store.ApplyOptions{}); err != nil || res.Applied {
		t.Errorf("second apply = %+v, %v; want nothing applied", res, err)
	}
}

func mustVersion(t *testing.T, db *DB, id int64) int64 {
	t.Helper()
	r, err := db.FindRecord(t.Context(), "part", id)
	if err != nil {
		t.Fatal(err)
	}
	return r.Version
}

// TestApplySchema_SampleStore: the tables the migrations made for the sample schema take a
// change too: a searched field with a default, a counter renamed (its sort index with it)
// and a field dropped; the counter keeps its value, adjusts and history under the new name.
func TestApplySchema_SampleStore(t *testing.T) {
	dsn := pgtest.DSN(t)
	db := mustOpenWith(t, dsn, nil)
	ctx := store.WithActor(t.Context(), editor(t))
	p, err := db.CreateRecord(ctx, store.KindProduct, store.Values{"sku": "LGT-1", "name": "Lamp", "price": int64(1999), "stock": int64(7)})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("../sample.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(b), "{name: stock,        type: int,", "{name: on_hand, rename_from: stock, type: int,", 1)
	s = strings.Replace(s, "      - {name: tags,", "      - {name: origin, type: string, owner: editor, rule: scalar, search: true, default: Europe}\n      - {name: tags,", 1)
	s = strings.Replace(s, "      - {name: last_sync_at, type: time,   owner: system, rule: scalar}\n", "", 1)
	next, err := store.ParseRegistry("sample edited", []byte(s))
	if err != nil {
		t.Fatal(err)
	}
	res, err := db.ApplySchema(ctx, next, store.ApplyOptions{AllowDestructive: true})
	if err != nil || !res.Applied {
		t.Fatalf("apply = %+v, %v", res, err)
	}
	if _, err := db.UpdateRecord(ctx, store.KindProduct, p.ID, store.Update{Add: map[string]int64{"on_hand": -2}}); err != nil {
		t.Fatalf("adjust the renamed counter: %v", err)
	}
	r, err := db.FindRecord(ctx, store.KindProduct, p.ID)
	if err != nil || r.Fields["on_hand"] != int64(5) {
		t.Fatalf("product = %v, %v; want on_hand 5", r, err)
	}
	d, err := db.CreateRecord(ctx, store.KindDocument, store.Values{"title": "Guide"})
	if err != nil || d.Fields["origin"] != "Europe" {
		t.Fatalf("document = %v, %v; want origin Europe", d, err)
	}
	if found, err := db.FindRecords(ctx, store.Filter{Kind: store.KindDocument, Search: "europe"}); err != nil || len(found) != 1 {
		t.Errorf("search of the new field = %v, %v", found, err)
	}
	if page, err := db.FindRecords(ctx, store.Filter{Kind: store.KindProduct, Sort: "on_hand"}); err != nil || len(page) != 1 {
		t.Errorf("sort by the renamed field = %v, %v", page, err)
	}
	var idx int
	if err := db.pool.QueryRow(t.Context(), `SELECT count(*) FROM pg_indexes WHERE schemaname = current_schema()
		AND tablename = 'products' AND indexdef LIKE '%on_hand%'`).Scan(&idx); err != nil || idx != 1 {
		t.Errorf("indexes on on_hand = %d, %v; want the sort index renamed", idx, err)
	}
	if hist, err := db.FindHistory(ctx, store.KindProduct, p.ID); err != nil || len(hist) == 0 || hist[len(hist)-1].Snapshot["on_hand"] != int64(7) {
		t.Errorf("history = %+v, %v; want the first version's stock under on_hand", hist, err)
	}
}

// TestApplySchema_Retype: a field whose type changes loses its values (exported) and starts
// from its new default; history keeps the old values out of the new field's way, so the
// record's history still reads; search turned off drops the field's search table.
func TestApplySchema_Retype(t *testing.T) {
	dsn := pgtest.DSN(t)
	db := mustOpenWith(t, dsn, mustParts(t))
	ctx := store.WithActor(t.Context(), editor(t))
	s, err := db.CreateRecord(ctx, "supplier", store.Values{"code": "A", "name": "Acme", "rating": int64(4)})
	if err != nil {
		t.Fatal(err)
	}
	next := partsWith(t, "{name: rating, type: int,    owner: shared, rule: counter, default: 0}",
		"{name: rating, type: enum, values: [low, high], owner: shared, rule: scalar, default: low}",
		"{name: notes,  type: text,   owner: editor, rule: text, search: true}", "{name: notes,  type: text,   owner: editor, rule: text}")
	var out bytes.Buffer
	res, err := db.ApplySchema(ctx, next, store.ApplyOptions{AllowDestructive: true, ExportTo: &out})
	if err != nil || !res.Applied || res.Exported != 1 {
		t.Fatalf("apply = %+v, %v", res, err)
	}
	if got := strings.TrimSpace(out.String()); got != `{"kind":"supplier","id":1,"field":"rating","value":4}` {
		t.Errorf("export = %s", got)
	}
	r, err := db.FindRecord(ctx, "supplier", s.ID)
	if err != nil || r.Fields["rating"] != "low" {
		t.Fatalf("supplier = %v, %v; want rating low", r, err)
	}
	hist, err := db.FindHistory(ctx, "supplier", s.ID)
	if err != nil || len(hist) != 1 || hist[0].Snapshot["rating"] != "low" && hist[0].Snapshot["rating"] != "" {
		t.Errorf("history = %+v, %v; want it readable", hist, err)
	}
	var n int
	if err := db.pool.QueryRow(t.Context(), "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = 'suppliers_notes_search'").Scan(&n); err != nil || n != 0 {
		t.Errorf("notes search table left: %d, %v", n, err)
	}
}

// TestReloadSchema: a client opened before another client's schema change runs the new
// schema once it reloads, and creates with the new field.
func TestReloadSchema(t *testing.T) {
	dsn := pgtest.DSN(t)
	db := mustOpenWith(t, dsn, mustParts(t))
	old := mustOpenWith(t, dsn, nil)
	ctx := store.WithActor(t.Context(), editor(t))
	next := partsWith(t, statusLine, statusLine+"      - {name: weight, type: int, owner: editor, rule: scalar, default: 5}\n")
	if _, err := db.ApplySchema(ctx, next, store.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	reg, err := old.ReloadSchema(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if reg.Version() != 2 || !reg.Same(next) || old.Registry() != reg {
		t.Fatalf("reloaded registry = version %d; want the new schema at 2", reg.Version())
	}
	p, err := old.CreateRecord(ctx, "part", store.Values{"label": "Bolt", "weight": int64(7)})
	if err != nil {
		t.Fatalf("create with the new field after the reload: %v", err)
	}
	if got, err := db.FindRecord(ctx, "part", p.ID); err != nil || got.Fields["weight"] != int64(7) {
		t.Errorf("part = %v, %v; want weight 7", got, err)
	}
}

// TestApplySchema_DropKindLeavesNothing: a dropped kind takes its table, search tables and
// the functions of its triggers (outside-write and search) with it.
func TestApplySchema_DropKindLeavesNothing(t *testing.T) {
	dsn := pgtest.DSN(t)
	db := mustOpenWith(t, dsn, mustParts(t))
	ctx := store.WithActor(t.Context(), editor(t))
	if _, err := db.CreateRecord(ctx, "area", store.Values{"name": "Hall"}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("../testdata/parts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	next, err := store.ParseRegistry("parts without areas", []byte(text[:strings.Index(text, "  area:")]))
	if err != nil {
		t.Fatal(err)
	}
	if res, err := db.ApplySchema(ctx, next, store.ApplyOptions{AllowDestructive: true, ExportTo: &bytes.Buffer{}}); err != nil || !res.Applied {
		t.Fatalf("drop of area = %+v, %v", res, err)
	}
	var n int
	if err := db.pool.QueryRow(t.Context(), `SELECT (SELECT count(*) FROM pg_proc WHERE pronamespace = current_schema()::regnamespace AND proname LIKE 'areas\_%')
		+ (SELECT count(*) FROM pg_class WHERE relnamespace = current_schema()::regnamespace AND relname LIKE 'areas%')`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("%d functions or tables of the dropped kind are left", n)
	}
}
