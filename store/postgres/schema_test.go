package postgres

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/postgres/pgtest"
)

func mustParts(t *testing.T) *store.Registry {
	t.Helper()
	reg, err := store.LoadRegistry("../testdata/parts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func mustOpenWith(t *testing.T, dsn string, reg *store.Registry) *DB {
	t.Helper()
	db, err := Open(t.Context(), dsn, store.Options{Registry: reg})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestCustomSchema_Parts: a store made with a schema of its own (suppliers, parts, areas; no
// product or document) records it, makes its tables with their indexes, search tables and
// triggers, and keeps its rules: a unique code, refs checked on create, save and delete,
// folded search, sorting by a sort field, tree moves.
func TestCustomSchema_Parts(t *testing.T) {
	dsn := pgtest.DSN(t)
	reg := mustParts(t)
	db := mustOpenWith(t, dsn, reg)
	ctx := store.WithActor(t.Context(), store.Actor{Name: "alice", Role: store.RoleEditor})
	if got := db.Registry(); !got.Same(reg) || got.Version() != 1 || got.Has(store.KindProduct) {
		t.Fatalf("registry = version %d, same %v; want the parts schema at version 1", got.Version(), got.Same(reg))
	}
	var indexes []string
	rows, _ := db.pool.Query(t.Context(), "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() ORDER BY 1")
	for rows.Next() {
		var n string
		_ = rows.Scan(&n)
		indexes = append(indexes, n)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"suppliers_code_key_unique", "suppliers_code_id", "suppliers_name_id", "parts_supplier",
		"parts_label_id", "areas_parent_id", "areas_name_id", "suppliers_name_search_trgm", "suppliers_notes_search_trgm",
		"parts_label_search_trgm"} {
		if !slices.Contains(indexes, want) {
			t.Errorf("index %s missing; have %v", want, indexes)
		}
	}

	acme, err := db.CreateRecord(ctx, "supplier", store.Values{"code": "ACME", "name": "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateRecord(ctx, "supplier", store.Values{"code": " acme", "name": "Other"}); err == nil ||
		!strings.Contains(err.Error(), "already exists (supplier 1 has") {
		t.Errorf("duplicate code = %v, want a refusal naming supplier 1", err)
	}
	if _, err := db.CreateRecord(ctx, "part", store.Values{"label": "Bolt", "supplier": int64(99)}); store.ErrorCode(err) != store.EINVALID ||
		!strings.Contains(err.Error(), "supplier 99 does not exist") {
		t.Errorf("part with a missing supplier = %v, want EINVALID naming supplier 99", err)
	}
	bolt, err := db.CreateRecord(ctx, "part", store.Values{"label": "Bolt", "supplier": acme.ID})
	if err != nil {
		t.Fatal(err)
	}
	if bolt.Fields["status"] != "draft" || bolt.Fields["supplier"] != acme.ID {
		t.Errorf("part = %v, want status draft and supplier %d", bolt.Fields, acme.ID)
	}
	if _, err := db.UpdateRecord(ctx, "part", bolt.ID, store.Update{BaseVersion: 1, Set: store.Values{"supplier": int64(7)}}); store.ErrorCode(err) != store.EINVALID {
		t.Errorf("save of a missing supplier = %v, want EINVALID", err)
	}
	_, err = db.DeleteRecord(ctx, "supplier", acme.ID, store.Delete{ExpectVersion: 1})
	if store.ErrorCode(err) != store.EINVALID || !strings.Contains(err.Error(), "part 1 (supplier)") {
		t.Errorf("delete of a referenced supplier = %v, want EINVALID naming part 1", err)
	}
	if n, err := db.CountRecords(t.Context(), "supplier"); n != 1 || err != nil {
		t.Errorf("suppliers after the refused delete = %d, %v; want 1", n, err)
	}
	// An outside write that bypasses the store still meets the foreign key.
	if _, err := db.pool.Exec(t.Context(), "DELETE FROM suppliers WHERE id = $1", acme.ID); err == nil {
		t.Error("a plain DELETE of a referenced supplier went through; want the foreign key to refuse it")
	}

	// Search: folded (case, ß), through the search tables (3+ runes) and by scan (fewer).
	strasse, err := db.CreateRecord(ctx, "supplier", store.Values{"code": "S2", "name": "ÄCME Straße"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.UpdateRecord(ctx, "supplier", acme.ID, store.Update{BaseVersion: 1, Set: store.Values{"notes": "ships on FRIDAYS\n"}}); err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string][]int64{"äcme": {strasse.ID}, "STRASSE": {strasse.ID}, "acme": {acme.ID},
		"fridays": {acme.ID}, "äc": {strasse.ID}, "nothing": nil} {
		got, err := db.FindRecords(t.Context(), store.Filter{Kind: "supplier", Search: q})
		if err != nil {
			t.Fatalf("search %q: %v", q, err)
		}
		var ids []int64
		for _, r := range got {
			ids = append(ids, r.ID)
		}
		if !slices.Equal(ids, want) {
			t.Errorf("search %q = %v, want %v", q, ids, want)
		}
	}

	// Sorted by the unique code, descending, paged by keyset.
	if _, err := db.CreateRecord(ctx, "supplier", store.Values{"code": "M", "name": "Middle"}); err != nil {
		t.Fatal(err)
	}
	page, err := db.FindRecords(t.Context(), store.Filter{Kind: "supplier", Sort: "code", Desc: true, Limit: 2})
	if err != nil || len(page) != 2 || page[0].Fields["code"] != "S2" || page[1].Fields["code"] != "M" {
		t.Fatalf("first page by code desc = %v, %v; want S2, M", page, err)
	}
	rest, err := db.FindRecords(t.Context(), store.Filter{Kind: "supplier", Sort: "code", Desc: true, AfterValue: "M", AfterID: page[1].ID})
	if err != nil || len(rest) != 1 || rest[0].Fields["code"] != "ACME" {
		t.Errorf("next page = %v, %v; want ACME", rest, err)
	}

	// The tree kind: a move into its own subtree is refused.
	top, err := db.CreateRecord(ctx, "area", store.Values{"name": "Top"})
	if err != nil {
		t.Fatal(err)
	}
	sub, err := db.CreateRecord(ctx, "area", store.Values{"name": "Sub", "parent_id": top.ID})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.MoveRecord(ctx, "area", top.ID, store.Move{Parent: &sub.ID}); store.ErrorCode(err) != store.EINVALID ||
		!strings.Contains(err.Error(), "cycle") {
		t.Errorf("move into its own subtree = %v, want a cycle refusal", err)
	}
	if _, err := db.CreateRecord(ctx, "area", store.Values{"name": "Orphan", "parent_id": int64(999)}); store.ErrorCode(err) != store.ENOTFOUND {
		t.Errorf("area under a missing parent = %v, want ENOTFOUND", err)
	}
	if _, err := db.DeleteRecord(ctx, "area", top.ID, store.Delete{ExpectVersion: 1, Subtree: true}); err != nil {
		t.Errorf("delete of a subtree: %v", err)
	}
	if n, _ := db.CountRecords(t.Context(), "area"); n != 0 {
		t.Errorf("areas after deleting the subtree = %d, want 0", n)
	}
	if _, err := db.RestoreRecord(ctx, "area", top.ID, store.Restore{}); err != nil {
		t.Errorf("restore of an area: %v", err)
	}
	if _, err := db.RestoreRecord(ctx, "area", sub.ID, store.Restore{}); err != nil {
		t.Errorf("restore of an area under a restored parent: %v", err)
	}
}

// TestCustomSchema_UniqueRace: creates of one code in six spellings at the same moment: one
// wins, every other is refused with the message that names the winner, as a create after it.
func TestCustomSchema_UniqueRace(t *testing.T) {
	db := mustOpenWith(t, pgtest.DSN(t), mustParts(t))
	ctx := store.WithActor(t.Context(), store.Actor{Name: "alice", Role: store.RoleEditor})
	spellings := []string{"RACE-%d", "race-%d", " RACE-%d ", "Race-%d\u00a0", "\u200bRACE-%d", "ＲＡＣＥ-%d"}
	for round := range 5 {
		var (
			wg    sync.WaitGroup
			start = make(chan struct{})
			errs  = make([]error, len(spellings))
		)
		for g := range spellings {
			wg.Go(func() {
				<-start
				_, errs[g] = db.CreateRecord(ctx, "supplier", store.Values{"code": fmt.Sprintf(spellings[g], round), "name": "racer"})
			})
		}
		close(start)
		wg.Wait()
		won := 0
		for g, err := range errs {
			switch {
			case err == nil:
				won++
			case store.ErrorCode(err) != store.EINVALID || !strings.Contains(err.Error(), "already exists (supplier "):
				t.Errorf("round %d, spelling %d: %v; want the duplicate key message naming the supplier", round, g, err)
			}
		}
		if won != 1 {
			t.Fatalf("round %d: %d creates of one code won, want 1", round, won)
		}
	}
}

// TestCustomSchema_MoveRace: two moves that would together make a cycle (A under B's child,
// B under A's child), at once, many times: the tree lock serializes them, so one is refused
// and the tree never holds a cycle.
func TestCustomSchema_MoveRace(t *testing.T) {
	db := mustOpenWith(t, pgtest.DSN(t), mustParts(t))
	ctx := store.WithActor(t.Context(), store.Actor{Name: "alice", Role: store.RoleEditor})
	mk := func(name string, parent *int64) int64 {
		t.Helper()
		vals := store.Values{"name": name}
		if parent != nil {
			vals["parent_id"] = *parent
		}
		r, err := db.CreateRecord(ctx, "area", vals)
		if err != nil {
			t.Fatal(err)
		}
		return r.ID
	}
	for round := range 8 {
		a, b := mk("A", nil), mk("B", nil)
		a1, b1 := mk("A1", &a), mk("B1", &b)
		var (
			wg    sync.WaitGroup
			start = make(chan struct{})
			errs  [2]error
		)
		moves := [2][2]int64{{a, b1}, {b, a1}}
		for i, m := range moves {
			wg.Go(func() {
				<-start
				_, errs[i] = db.MoveRecord(ctx, "area", m[0], store.Move{Parent: &m[1]})
			})
		}
		close(start)
		wg.Wait()
		ok := 0
		for _, err := range errs {
			switch {
			case err == nil:
				ok++
			case store.ErrorCode(err) != store.EINVALID || !strings.Contains(err.Error(), "cycle"):
				t.Fatalf("round %d: move = %v, want success or a cycle refusal", round, err)
			}
		}
		if ok != 1 {
			t.Fatalf("round %d: %d of the two moves went through, want 1", round, ok)
		}
		for _, id := range []int64{a, b} {
			path, err := ancestors(t.Context(), db.pool, "areas", id)
			if err != nil || len(path) > 4 {
				t.Fatalf("round %d: ancestors of %d = %v, %v: a cycle", round, id, path, err)
			}
		}
	}
}

// TestCustomSchema_Reopen: the store keeps its schema. Opened without one it is the
// recorded schema at its version; the same schema is accepted; another one (the sample) is
// refused naming the store's version; first openings at once record it once.
func TestCustomSchema_Reopen(t *testing.T) {
	dsn := pgtest.DSN(t)
	reg := mustParts(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			db, err := Open(t.Context(), dsn, store.Options{Registry: reg})
			if err == nil {
				db.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("concurrent first open: %v", err)
		}
	}
	db := mustOpenWith(t, dsn, nil)
	var n int
	if err := db.pool.QueryRow(t.Context(), "SELECT count(*) FROM tandem_schema").Scan(&n); err != nil || n != 1 {
		t.Fatalf("recorded schemas = %d, %v; want 1", n, err)
	}
	ctx := store.WithActor(t.Context(), store.Actor{Name: "alice", Role: store.RoleEditor})
	if _, err := db.CreateRecord(ctx, "supplier", store.Values{"code": "K", "name": "Kept"}); err != nil {
		t.Fatal(err)
	}
	if got := db.Registry(); !got.Same(reg) || got.Version() != 1 {
		t.Errorf("reopened without a schema: version %d, same %v; want the parts schema at 1", got.Version(), got.Same(reg))
	}
	db.Close()
	again := mustOpenWith(t, dsn, reg)
	if r, err := again.FindRecord(t.Context(), "supplier", 1); err != nil || r.Fields["name"] != "Kept" || again.Registry().Version() != 1 {
		t.Errorf("reopened with its schema: %v, %v, version %d", r, err, again.Registry().Version())
	}
	_, err := Open(t.Context(), dsn, store.Options{Registry: store.DefaultRegistry()})
	if store.ErrorCode(err) != store.EINVALID || !strings.Contains(err.Error(), "this store has schema version 1") {
		t.Errorf("open with another schema = %v, want EINVALID naming version 1", err)
	}
	legacy, err := store.LoadRegistry("../testdata/legacy_fields.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(t.Context(), dsn, store.Options{Registry: legacy}); store.ErrorCode(err) != store.EINVALID {
		t.Errorf("open with a field registry of the sample = %v, want EINVALID", err)
	}
}

// TestOpen_RecordsSampleSchema: a store made before schemas were data (no tandem_schema)
// keeps its records and gets the sample schema recorded as version 1 when it is opened; a
// field registry of the old form still opens it.
func TestOpen_RecordsSampleSchema(t *testing.T) {
	dsn := pgtest.DSN(t)
	mustVersion1(t, dsn,
		`INSERT INTO products (id, sku, name, updated_at, updated_by) VALUES (1, 'OLD-1', 'old product', now(), 'old')`,
		`INSERT INTO documents (id, title, updated_at, updated_by) VALUES (1, 'old doc', now(), 'old')`)
	db := mustOpenWith(t, dsn, nil)
	if got := db.Registry(); !got.Same(store.DefaultRegistry()) || got.Version() != 1 {
		t.Errorf("registry: version %d, same as the sample %v; want the sample at 1", got.Version(), got.Same(store.DefaultRegistry()))
	}
	var text string
	if err := db.pool.QueryRow(t.Context(), "SELECT yaml FROM tandem_schema WHERE version = 1").Scan(&text); err != nil ||
		text != string(store.DefaultRegistry().YAML()) {
		t.Errorf("recorded schema = %.80q, %v; want the sample's YAML", text, err)
	}
	p, err := db.FindRecord(t.Context(), store.KindProduct, 1)
	if err != nil || p.Fields["sku"] != "OLD-1" {
		t.Errorf("product 1 = %v, %v; want it kept", p, err)
	}
	if d, err := db.FindRecord(t.Context(), store.KindDocument, 1); err != nil || d.Fields["title"] != "old doc" {
		t.Errorf("document 1 = %v, %v; want it kept", d, err)
	}
	got, err := db.FindRecords(t.Context(), store.Filter{Kind: store.KindProduct, Search: "old prod"})
	if err != nil || len(got) != 1 {
		t.Errorf("search of the kept product = %v, %v", got, err)
	}
	db.Close()
	legacy, err := store.LoadRegistry("../testdata/legacy_fields.yaml")
	if err != nil {
		t.Fatal(err)
	}
	old := mustOpenWith(t, dsn, legacy)
	if !old.Registry().Legacy() || old.Registry().Version() != 1 {
		t.Errorf("opened with a field registry: legacy %v, version %d", old.Registry().Legacy(), old.Registry().Version())
	}
}

// TestCustomSchema_Columns: the generated table of a kind with every type has each field's
// default as a column default (a plain INSERT by another program gets them), keeps long names
// apart within PostgreSQL's 63 bytes, sorts by a time and searches a long-named field.
func TestCustomSchema_Columns(t *testing.T) {
	long := "a_field_name_long_enough_to_overflow_the_limits" // 47 characters
	reg, err := store.ParseRegistry("columns", []byte(`kinds:
  widget:
    fields:
      - {name: `+long+`, type: string, owner: editor, rule: scalar, required: true, search: true, unique: true}
      - {name: motto, type: string, owner: editor, rule: scalar, default: "it's a \\ back"}
      - {name: tags,  type: set,    owner: editor, rule: set, default: "b, a"}
      - {name: price, type: money,  owner: editor, rule: scalar, default: "1.50"}
      - {name: count, type: int,    owner: shared, rule: counter, default: "-3"}
      - {name: due,   type: time,   owner: editor, rule: scalar, sort: true}
      - {name: size,  type: enum,   owner: editor, rule: scalar, values: [s, m], default: m}
`))
	if err != nil {
		t.Fatal(err)
	}
	db := mustOpenWith(t, pgtest.DSN(t), reg)
	kind := reg.Kinds()[0]
	table, _ := reg.Table(kind)
	ctx := store.WithActor(t.Context(), store.Actor{Name: "alice", Role: store.RoleEditor})
	later := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	first, err := db.CreateRecord(ctx, kind, store.Values{long: "First Ünit", "due": later})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.pool.Exec(t.Context(), "INSERT INTO "+ident(table)+" ("+ident(long)+", due, updated_at, updated_by) VALUES ('outside', $1, now(), 'psql')",
		later.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	var outside int64
	if err := db.pool.QueryRow(t.Context(), "SELECT max(id) FROM "+ident(table)).Scan(&outside); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int64{first.ID, outside} {
		r, err := db.FindRecord(t.Context(), kind, id)
		if err != nil {
			t.Fatal(err)
		}
		want := store.Values{"motto": `it's a \ back`, "tags": []string{"a", "b"}, "price": int64(150), "count": int64(-3), "size": "m"}
		for f, w := range want {
			if !store.Equal(r.Fields[f], w) {
				t.Errorf("record %d: %s = %#v, want the default %#v", id, f, r.Fields[f], w)
			}
		}
	}
	sorted, err := db.FindRecords(t.Context(), store.Filter{Kind: kind, Sort: "due"})
	if err != nil || len(sorted) != 2 || sorted[0].ID != outside {
		t.Errorf("sorted by due = %v, %v; want the outside record first", sorted, err)
	}
	found, err := db.FindRecords(t.Context(), store.Filter{Kind: kind, Search: "first ünit"})
	if err != nil || len(found) != 1 || found[0].ID != first.ID {
		t.Errorf("search of the long-named field = %v, %v; want record %d", found, err, first.ID)
	}
	if _, err := db.CreateRecord(ctx, kind, store.Values{long: " FIRST ÜNIT"}); store.ErrorCode(err) != store.EINVALID ||
		!strings.Contains(err.Error(), "already exists") {
		t.Errorf("duplicate of a long-named unique field = %v, want EINVALID", err)
	}
	var names []string
	rows, _ := db.pool.Query(t.Context(), `SELECT relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = current_schema() AND relname LIKE 'widget%'`)
	for rows.Next() {
		var n string
		_ = rows.Scan(&n)
		names = append(names, n)
	}
	for _, n := range names {
		if len(n) > 63 {
			t.Errorf("relation name %s is over 63 bytes", n)
		}
	}
	if len(names) < 6 {
		t.Errorf("relations of the kind = %v, want the table, its search table and their indexes", names)
	}
}

// TestCustomSchema_TakenTable: a kind whose table exists with another shape (the sample's
// documents, which every store's migrations make) is refused at the first open, and nothing
// is recorded: the store opens afterwards with the sample schema.
func TestCustomSchema_TakenTable(t *testing.T) {
	dsn := pgtest.DSN(t)
	reg, err := store.ParseRegistry("taken", []byte(`kinds:
  item:
    table: documents
    fields:
      - {name: color, type: string, owner: editor, rule: scalar}
`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(t.Context(), dsn, store.Options{Registry: reg})
	if store.ErrorCode(err) != store.EINVALID || !strings.Contains(err.Error(), "table documents exists without the column color") {
		t.Fatalf("open with a kind on the documents table = %v, want EINVALID naming the column", err)
	}
	if db := mustOpenWith(t, dsn, nil); !db.Registry().Same(store.DefaultRegistry()) {
		t.Errorf("after the refused open the store's schema is not the sample's")
	}
}

// TestCustomSchema_Paths: the other write paths on a kind of a schema of one's own: relative
// adds from several writers at once (the one-statement save among them) lose nothing, a
// lease on the kind's editor group holds off a save without its token, and history keeps
// the editor's versions.
func TestCustomSchema_Paths(t *testing.T) {
	db := mustOpenWith(t, pgtest.DSN(t), mustParts(t))
	alice := store.WithActor(t.Context(), store.Actor{Name: "alice", Role: store.RoleEditor})
	sys := store.WithActor(t.Context(), store.Actor{Name: "counter", Role: store.RoleSystem})
	s, err := db.CreateRecord(alice, "supplier", store.Values{"code": "C", "name": "Counted"})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for g := range errs {
		wg.Go(func() {
			for range 10 {
				if _, err := db.UpdateRecord(sys, "supplier", s.ID, store.Update{Add: map[string]int64{"rating": 1}}); err != nil {
					errs[g] = err
					return
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	got, err := db.FindRecord(t.Context(), "supplier", s.ID)
	if err != nil || got.Fields["rating"] != int64(40) || got.Version != 41 {
		t.Fatalf("after 40 adds: %v, %v; want rating 40 at version 41", got, err)
	}
	if db.oneStatementSaves.Load() == 0 {
		t.Error("no add took the one-statement save")
	}
	lease, err := db.AcquireLease(alice, store.LeaseRequest{Kind: "supplier", RecordID: s.ID, Group: store.GroupEditor, TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	bob := store.WithActor(t.Context(), store.Actor{Name: "bob", Role: store.RoleEditor})
	if _, err := db.UpdateRecord(bob, "supplier", s.ID, store.Update{BaseVersion: 41, Set: store.Values{"name": "Taken"}}); store.ErrorCode(err) != store.ELEASE {
		t.Errorf("save under alice's lease without its token = %v, want ELEASE", err)
	}
	if _, err := db.UpdateRecord(alice, "supplier", s.ID, store.Update{BaseVersion: 41, Set: store.Values{"name": "Renamed"}, LeaseToken: lease.Token}); err != nil {
		t.Errorf("save with the lease token: %v", err)
	}
	hist, err := db.FindHistory(t.Context(), "supplier", s.ID)
	if err != nil || len(hist) < 2 {
		t.Fatalf("history = %v, %v; want the create and the rename", hist, err)
	}
	if newest := hist[0]; newest.Snapshot["name"] != "Renamed" {
		t.Errorf("newest history version = %+v, want the rename", newest)
	}
}

// TestOpen_SchemaOverlay: a store of the sample schema opened with the sample changed where
// its tables are not (an owner), written as a schema, runs that overlay and keeps its own
// schema; one that adds a field is refused naming the store's version. The SQLite store's
// rule (store/sqlite/schema.go).
func TestOpen_SchemaOverlay(t *testing.T) {
	dsn := pgtest.DSN(t)
	mustOpenWith(t, dsn, nil).Close()
	sample := string(store.DefaultRegistry().YAML())
	const price = "{name: price, label: price, type: money, owner: editor"
	if !strings.Contains(sample, price) {
		t.Fatalf("%q is not in the sample's YAML:\n%s", price, sample)
	}
	shared, err := store.ParseRegistry("shared.yaml", []byte(strings.Replace(sample, price, strings.Replace(price, "editor", "shared", 1), 1)))
	if err != nil {
		t.Fatal(err)
	}
	db := mustOpenWith(t, dsn, shared)
	if f, _ := db.Registry().Field(store.KindProduct, "price"); f.Owner != store.OwnerShared || db.Registry().Version() != 1 {
		t.Errorf("price owner %s, version %d; want the overlay's shared at the store's version 1", f.Owner, db.Registry().Version())
	}
	added, err := store.ParseRegistry("added.yaml", []byte(strings.Replace(sample, "      - "+price,
		"      - {name: colour, type: string, owner: editor, rule: scalar}\n      - "+price, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(t.Context(), dsn, store.Options{Registry: added}); store.ErrorCode(err) != store.EINVALID ||
		!strings.Contains(err.Error(), "this store has schema version 1") {
		t.Errorf("open with a field added = %v, want EINVALID naming version 1", err)
	}
	if again := mustOpenWith(t, dsn, nil); !again.Registry().Same(store.DefaultRegistry()) {
		t.Errorf("after an overlay the store keeps the sample schema:\n%s", again.Registry().YAML())
	}
}

// TestCustomSchema_RestoreRef: a part whose supplier was deleted after it does not come
// back referring to nothing: its restore is refused naming the supplier, as a save is.
func TestCustomSchema_RestoreRef(t *testing.T) {
	db := mustOpenWith(t, pgtest.DSN(t), mustParts(t))
	ctx := store.WithActor(t.Context(), store.Actor{Name: "alice", Role: store.RoleEditor})
	gone, err := db.CreateRecord(ctx, "supplier", store.Values{"code": "GONE", "name": "Gone"})
	if err != nil {
		t.Fatal(err)
	}
	nut, err := db.CreateRecord(ctx, "part", store.Values{"label": "Nut", "supplier": gone.ID})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []*store.Record{nut, gone} {
		if _, err := db.DeleteRecord(ctx, r.Kind, r.ID, store.Delete{ExpectVersion: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.RestoreRecord(ctx, "part", nut.ID, store.Restore{}); store.ErrorCode(err) != store.EINVALID ||
		!strings.Contains(err.Error(), fmt.Sprintf("supplier %d does not exist", gone.ID)) {
		t.Errorf("restore of a part whose supplier is deleted = %v, want EINVALID naming the supplier", err)
	}
}
