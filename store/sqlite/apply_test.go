package sqlite_test

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/sqlite"
)

// partsWith returns parts.yaml with each edits[i] replaced by edits[i+1].
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
	applyNotesLine  = "      - {name: notes,  type: text,   owner: editor, rule: text, search: true}\n"
	applyStatusLine = "      - {name: status,   type: enum, values: [draft, active, retired], owner: shared, rule: scalar, default: draft}\n"
)

// openParts opens path with reg (nil: the schema the store keeps).
func openParts(t *testing.T, path string, reg *store.Registry) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(t.Context(), path, store.Options{Registry: reg})
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func partVersion(t *testing.T, db *sqlite.DB, kind store.Kind, id int64) int64 {
	t.Helper()
	r, err := db.FindRecord(t.Context(), kind, id)
	if err != nil {
		t.Fatal(err)
	}
	return r.Version
}

// TestApplySchema_AdditiveWhileSaving: a new field with a default, a field that becomes
// searched, one that becomes sortable, a new kind and a ref to it are applied while four
// goroutines save parts on the same file; no save is lost, the records there are get the
// defaults and are found by the new search, the new ref has its foreign key, the registry
// is version 2, the feed carries the schema event, and a reopen has version 2.
func TestApplySchema_AdditiveWhileSaving(t *testing.T) {
	path := filepath.Join(t.TempDir(), "parts.db")
	db := openParts(t, path, partsRegistry(t))
	ctx := editor(t, "alice")
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
	feed, err := db.Subscribe(t.Context(), before)
	if err != nil {
		t.Fatal(err)
	}

	var stop atomic.Bool
	var wg sync.WaitGroup
	last := make([]string, len(parts))
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
	next := partsWith(t, applyNotesLine, "      - {name: country, type: string, owner: editor, rule: scalar, default: DE}\n"+applyNotesLine,
		"{name: code,   type: string, owner: editor,", "{name: code, search: true, type: string, owner: editor,",
		"{name: rating, type: int,", "{name: rating, sort: true, type: int,",
		applyStatusLine, applyStatusLine+"      - {name: weight, type: int, owner: editor, rule: scalar, default: 5, sort: true}\n"+
			"      - {name: bin, type: ref, to: bin, owner: editor, rule: scalar}\n"+
			"      - {name: grade, type: enum, values: [a, b], owner: editor, rule: scalar}\n",
		"  area:\n", "  bin:\n    fields:\n      - {name: code, type: string, owner: editor, rule: scalar, search: true}\n  area:\n")
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
	if !res.Applied || res.FromVersion != 1 || res.ToVersion != 2 || len(res.Diff.Of(store.ChangeDestructive)) != 0 {
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
			t.Errorf("part %d = %v after %d saves, want label %q, weight 5, grade a", i, r.Fields, saves[i], last[i])
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
	if _, err := db.UpdateRecord(ctx, "part", parts[0], store.Update{Set: store.Values{"bin": bin.ID}, BaseVersion: partVersion(t, db, "part", parts[0])}); err != nil {
		t.Fatalf("save of the new ref: %v", err)
	}
	if got, err := db.FindRecords(ctx, store.Filter{Kind: "bin", Search: "b-1"}); err != nil || len(got) != 1 {
		t.Errorf("search in the new kind = %v, %v", got, err)
	}
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=foreign_keys(1)&_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for _, idx := range []string{"parts_weight_id", "suppliers_rating_id", "parts_bin_ref", "bins_search", "suppliers_fts"} {
		var n int
		if err := raw.QueryRow("SELECT count(*) FROM sqlite_master WHERE name = ?", idx).Scan(&n); err != nil || n != 1 {
			t.Errorf("%s: %d, %v; want it made", idx, n, err)
		}
	}
	if _, err := raw.Exec("DELETE FROM bins"); err == nil || !strings.Contains(err.Error(), "FOREIGN KEY") && !strings.Contains(err.Error(), "refer to this bin") {
		t.Errorf("a plain DELETE of a bin a part names = %v; want the foreign key or the trigger to refuse it", err)
	}
	timeout := time.After(10 * time.Second)
	for got := false; !got; {
		select {
		case c := <-feed:
			if c.Event == store.EventSchemaChanged {
				got = true
				if c.Version != 2 || c.Actor != "alice" || c.Kind != "" || c.RecordID != 0 ||
					!slices.Equal(c.Fields, []string{"bin", "part", "supplier"}) {
					t.Errorf("schema event = %+v, want version 2 by alice for bin, part, supplier", c)
				}
			}
		case <-timeout:
			t.Fatal("the feed delivered no schema event")
		}
	}
	if res, err := db.ApplySchema(ctx, next, store.ApplyOptions{}); err != nil || res.Applied || res.ToVersion != 2 {
		t.Errorf("second apply = %+v, %v; want nothing applied", res, err)
	}
	db.Close()
	again := openParts(t, path, nil)
	if reg := again.Registry(); reg.Version() != 2 || !reg.Same(next) {
		t.Fatalf("reopened registry = version %d; want the new schema at 2", reg.Version())
	}
	if got, err := again.FindRecords(ctx, store.Filter{Kind: "supplier", Search: "acme-7"}); err != nil || len(got) != 1 {
		t.Errorf("search after reopen = %v, %v", got, err)
	}
}

// TestApplySchema_OldClient: a handle opened before the change keeps its registry; it
// saves a field that still exists and creates a record, which gets the new field's
// default; a handle opened after has version 2; another program's writes are still seen
// (the outside-write triggers were made again) and the apply's own writes were not.
func TestApplySchema_OldClient(t *testing.T) {
	path := filepath.Join(t.TempDir(), "parts.db")
	db := openParts(t, path, partsRegistry(t))
	old := openParts(t, path, nil)
	ctx := editor(t, "alice")
	p, err := old.CreateRecord(ctx, "part", store.Values{"label": "Bolt"})
	if err != nil {
		t.Fatal(err)
	}
	next := partsWith(t, applyStatusLine, applyStatusLine+"      - {name: weight, type: int, owner: editor, rule: scalar, default: 5}\n",
		"{name: label,    type: string, owner: editor, rule: scalar, required: true, search: true}",
		"{name: label,    type: string, owner: editor, rule: scalar, required: true}")
	before, err := db.LastChangeID(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ApplySchema(ctx, next, store.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := old.UpdateRecord(ctx, "part", p.ID, store.Update{BaseVersion: 1, Set: store.Values{"label": "Bolt M6"}}); err != nil {
		t.Fatalf("old handle's save: %v", err)
	}
	q, err := old.CreateRecord(ctx, "part", store.Values{"label": "Nut"})
	if err != nil {
		t.Fatalf("old handle's create: %v", err)
	}
	if old.Registry().Version() != 1 {
		t.Fatalf("old handle's registry is version %d before it reopens", old.Registry().Version())
	}
	again := openParts(t, path, nil)
	if v := again.Registry().Version(); v != 2 || !again.Registry().Same(next) {
		t.Fatalf("reopened registry = version %d; want the new schema at 2", v)
	}
	for _, id := range []int64{p.ID, q.ID} {
		r, err := again.FindRecord(ctx, "part", id)
		if err != nil || r.Fields["weight"] != int64(5) {
			t.Errorf("part %d = %v, %v; want weight 5", id, r, err)
		}
	}
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec("UPDATE parts SET weight = 9 WHERE id = ?", p.ID); err != nil {
		t.Fatal(err)
	}
	if r, err := again.FindRecord(ctx, "part", p.ID); err != nil || r.Fields["weight"] != int64(9) || r.Version != 3 {
		t.Errorf("after an outside write of the new field: %+v, %v; want weight 9 at version 3", r, err)
	}
	cs, err := db.Changes(t.Context(), before, 100)
	if err != nil {
		t.Fatal(err)
	}
	var events []string
	for _, c := range cs {
		events = append(events, fmt.Sprintf("%s %s/%d %s", c.Event, c.Kind, c.RecordID, c.Actor))
	}
	want := []string{"schema_changed /0 alice", "saved part/1 alice", "created part/2 alice", "saved part/1 " + store.OutsideActor}
	if !slices.Equal(events, want) {
		t.Errorf("changes since the apply = %q, want %q", events, want)
	}
}

// TestApplySchema_Rename: a searched field renamed keeps its values, is found by search
// under its new name, and its history reads under the new name.
func TestApplySchema_Rename(t *testing.T) {
	path := filepath.Join(t.TempDir(), "parts.db")
	db := openParts(t, path, partsRegistry(t))
	ctx := editor(t, "alice")
	s, err := db.CreateRecord(ctx, "supplier", store.Values{"code": "C1", "name": "Acme", "notes": "ships on fridays\n"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.UpdateRecord(ctx, "supplier", s.ID, store.Update{BaseVersion: 1, Set: store.Values{"notes": "ships on mondays\n"}}); err != nil {
		t.Fatal(err)
	}
	next := partsWith(t, applyNotesLine, "      - {name: remarks, rename_from: notes, type: text, owner: editor, rule: text, search: true}\n")
	res, err := db.ApplySchema(ctx, next, store.ApplyOptions{BaseVersion: 1})
	if err != nil || !res.Applied {
		t.Fatalf("apply = %+v, %v", res, err)
	}
	r, err := db.FindRecord(ctx, "supplier", s.ID)
	if err != nil || r.Fields["remarks"] != "ships on mondays\n" {
		t.Fatalf("supplier = %v, %v; want remarks kept", r, err)
	}
	if got, err := db.FindRecords(ctx, store.Filter{Kind: "supplier", Search: "mondays"}); err != nil || len(got) != 1 {
		t.Errorf("search by the renamed field = %v, %v", got, err)
	}
	hist, err := db.FindHistory(ctx, "supplier", s.ID)
	if err != nil || len(hist) != 2 {
		t.Fatalf("history = %v, %v", hist, err)
	}
	for _, h := range hist {
		if _, ok := h.Snapshot["remarks"]; !ok || h.Snapshot["notes"] != nil {
			t.Errorf("history version %d = %v; want remarks, no notes", h.Version, h.Snapshot)
		}
	}
	if hist[1].Snapshot["remarks"] != "ships on fridays\n" || !slices.Equal(hist[0].Fields, []string{"remarks"}) {
		t.Errorf("history = %+v", hist)
	}
	if _, err := db.UpdateRecord(ctx, "supplier", s.ID, store.Update{BaseVersion: 2, Set: store.Values{"remarks": "ships daily\n"}}); err != nil {
		t.Errorf("save of the renamed field: %v", err)
	}
}

// TestApplySchema_Destructive: dropping a field, removing an enum value and narrowing a
// limit are refused with the values each affects; a dry run returns the counts and
// changes nothing; dropping a ref field is refused even allowed (not supported yet);
// allowed, the values about to be lost are exported first, the records holding a removed
// value get the default as a new version, the column and its search tables are gone, and
// history reads without the field.
func TestApplySchema_Destructive(t *testing.T) {
	path := filepath.Join(t.TempDir(), "parts.db")
	db := openParts(t, path, partsRegistry(t))
	ctx := editor(t, "alice")
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
	next := partsWith(t, applyNotesLine, "", "[draft, active, retired]", "[draft, active]", "max_chars: 32", "max_chars: 8")
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
	noRef := partsWith(t, "      - {name: supplier, type: ref, to: supplier, owner: editor, rule: scalar}\n", "")
	if res, err := db.ApplySchema(ctx, noRef, store.ApplyOptions{AllowDestructive: true}); store.ErrorCode(err) != store.EINVALID ||
		!strings.Contains(err.Error(), "does not apply these destructive changes yet") || !strings.Contains(err.Error(), "drop field part.supplier") || res.Applied {
		t.Errorf("drop of a ref field = %+v, %v; want EINVALID saying it is not supported yet", res, err)
	}
	if db.Registry().Version() != 1 {
		t.Fatal("a refused apply changed the schema")
	}
	old := openParts(t, path, nil)
	var out bytes.Buffer
	res, err = db.ApplySchema(ctx, next, store.ApplyOptions{AllowDestructive: true, ExportTo: &out})
	if err != nil || !res.Applied || res.Exported != 6 || res.ToVersion != 2 {
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
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var n int
	if err := raw.QueryRow(`SELECT (SELECT count(*) FROM pragma_table_info('suppliers') WHERE name = 'notes') +
		(SELECT count(*) FROM sqlite_master WHERE name LIKE 'suppliers_notes%')`).Scan(&n); err != nil || n != 0 {
		t.Errorf("notes column and search tables left: %d, %v", n, err)
	}
	if err := raw.QueryRow(`SELECT count(*) FROM history WHERE kind = 'supplier' AND json_type(snapshot, '$."notes~v1"') = 'text'`).Scan(&n); err != nil || n != 3 {
		t.Errorf("history versions keeping notes as notes~v1: %d, %v; want 3", n, err)
	}
	hist, err := db.FindHistory(ctx, "supplier", 1)
	if err != nil || len(hist) != 1 || hist[0].Snapshot["notes"] != nil {
		t.Errorf("history of a supplier after its field was dropped = %+v, %v", hist, err)
	}
	_, err = old.UpdateRecord(ctx, "supplier", 1, store.Update{BaseVersion: 1, Set: store.Values{"notes": "x\n"}})
	if store.ErrorCode(err) != store.EINVALID || !strings.Contains(err.Error(), "schema changed since this client opened it") {
		t.Errorf("old handle's save of a dropped field = %v, want EINVALID saying the schema changed", err)
	}
	again := openParts(t, path, nil)
	if v := again.Registry().Version(); v != 2 {
		t.Fatalf("reopened: version %d", v)
	}
}

// TestApplySchema_Concurrent: two applies made against version 1 at once by two handles
// of one file: one wins, the other is refused with ECONFLICT and changes nothing.
func TestApplySchema_Concurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "parts.db")
	a := openParts(t, path, partsRegistry(t))
	b := openParts(t, path, nil)
	ctx := editor(t, "alice")
	nexts := []*store.Registry{
		partsWith(t, applyNotesLine, "      - {name: country, type: string, owner: editor, rule: scalar}\n"+applyNotesLine),
		partsWith(t, applyNotesLine, "      - {name: city, type: string, owner: editor, rule: scalar}\n"+applyNotesLine),
	}
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, db := range []*sqlite.DB{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = db.ApplySchema(ctx, nexts[i], store.ApplyOptions{BaseVersion: 1})
		}()
	}
	wg.Wait()
	won := -1
	for i, err := range errs {
		switch {
		case err == nil:
			won = i
		case store.ErrorCode(err) != store.ECONFLICT || !strings.Contains(err.Error(), "version 2 now, not version 1"):
			t.Errorf("apply %d = %v, want ECONFLICT", i, err)
		}
	}
	if won < 0 || (errs[0] == nil) == (errs[1] == nil) {
		t.Fatalf("applies = %v; want one to win", errs)
	}
	again := openParts(t, path, nil)
	if reg := again.Registry(); reg.Version() != 2 || !reg.Same(nexts[won]) {
		t.Fatalf("reopened = version %d; want the winner's schema at 2", reg.Version())
	}
}

// TestApplySchema_RetypeAndDropUnique: allowed, a retyped field gets a new column with its
// default (its old values kept in history only) and a dropped unique field goes with its
// key column and index; the kind is saved, created and searched after.
func TestApplySchema_RetypeAndDropUnique(t *testing.T) {
	path := filepath.Join(t.TempDir(), "parts.db")
	db := openParts(t, path, partsRegistry(t))
	ctx := editor(t, "alice")
	s, err := db.CreateRecord(ctx, "supplier", store.Values{"code": "C1", "name": "Acme", "rating": int64(3)})
	if err != nil {
		t.Fatal(err)
	}
	next := partsWith(t,
		"      - {name: code,   type: string, owner: editor, rule: scalar, required: true, unique: true, max_chars: 32}\n", "",
		"{name: rating, type: int,    owner: shared, rule: counter, default: 0}", "{name: rating, type: string, owner: editor, rule: scalar, default: none, sort: true}")
	res, err := db.ApplySchema(ctx, next, store.ApplyOptions{AllowDestructive: true})
	if err != nil || !res.Applied || len(res.Diff.Of(store.ChangeDestructive)) != 2 {
		t.Fatalf("apply = %+v, %v", res, err)
	}
	r, err := db.FindRecord(ctx, "supplier", s.ID)
	if err != nil || r.Fields["rating"] != "none" || r.Fields["code"] != nil {
		t.Fatalf("supplier = %v, %v; want rating none and no code", r, err)
	}
	if _, err := db.UpdateRecord(ctx, "supplier", s.ID, store.Update{BaseVersion: r.Version, Set: store.Values{"rating": "good"}}); err != nil {
		t.Fatalf("save of the retyped field: %v", err)
	}
	if _, err := db.CreateRecord(ctx, "supplier", store.Values{"name": "Bolt Co"}); err != nil {
		t.Fatalf("create after the unique field was dropped: %v", err)
	}
	if got, err := db.FindRecords(ctx, store.Filter{Kind: "supplier", Search: "bolt"}); err != nil || len(got) != 1 {
		t.Errorf("search = %v, %v", got, err)
	}
	if got, err := db.FindRecords(ctx, store.Filter{Kind: "supplier", Sort: "rating"}); err != nil || len(got) != 2 {
		t.Errorf("sort by the retyped field = %v, %v", got, err)
	}
}

// TestReloadSchema: a handle opened before another handle's schema change runs the new
// schema once it reloads: its registry has the new field at version 2, and it creates and
// saves with it; a reload with nothing new keeps the registry.
func TestReloadSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "parts.db")
	db := openParts(t, path, partsRegistry(t))
	old := openParts(t, path, nil)
	ctx := editor(t, "alice")
	if reg, err := old.ReloadSchema(ctx); err != nil || reg.Version() != 1 {
		t.Fatalf("reload before the change = %v, %v; want version 1", reg, err)
	}
	next := partsWith(t, applyStatusLine, applyStatusLine+"      - {name: weight, type: int, owner: editor, rule: scalar, default: 5}\n")
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
