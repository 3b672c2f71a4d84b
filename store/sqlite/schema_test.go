package sqlite_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/sqlite"
	"github.com/tandem-editor/tandem/store/storetest"
)

// TestDB_Schema runs the contract on a schema with no product or document in it.
func TestDB_Schema(t *testing.T) { storetest.RunSchema(t, openTemp) }

func partsRegistry(t *testing.T) *store.Registry {
	t.Helper()
	reg, err := store.LoadRegistry("../testdata/parts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// TestSchema_Parts: a store made with a schema of its own (suppliers, parts, areas; no
// product or document) holds its kinds in tables made from the schema and keeps their
// rules: a unique code, also between two writers at once; a ref checked on save and on
// delete; a tree move; search; a sorted listing; and it keeps the schema across a reopen.
func TestSchema_Parts(t *testing.T) {
	reg := partsRegistry(t)
	path := filepath.Join(t.TempDir(), "parts.db")
	ctx := store.WithActor(context.Background(), store.Actor{Name: "alice", Role: store.RoleEditor})
	db, err := sqlite.Open(ctx, path, store.Options{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	if got := db.Registry(); !got.Same(reg) || got.Version() != 1 {
		t.Fatalf("registry version %d, same %v; want the parts schema at version 1", got.Version(), got.Same(reg))
	}
	acme, err := db.CreateRecord(ctx, "supplier", store.Values{"code": "ACME", "name": "Acme Tools"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateRecord(ctx, "supplier", store.Values{"code": " acme", "name": "Other"}); err == nil ||
		!strings.Contains(err.Error(), "code") || !strings.Contains(err.Error(), "supplier 1") {
		t.Errorf("duplicate code = %v, want a refusal naming code and supplier 1", err)
	}
	if _, err := db.CreateRecord(ctx, "part", store.Values{"label": "Bolt", "supplier": int64(99)}); store.ErrorCode(err) != store.EINVALID ||
		!strings.Contains(err.Error(), "supplier 99 does not exist") {
		t.Errorf("part with a missing supplier = %v, want EINVALID naming supplier 99", err)
	}
	bolt, err := db.CreateRecord(ctx, "part", store.Values{"label": "Bolt", "supplier": acme.ID})
	if err != nil {
		t.Fatal(err)
	}
	if bolt.Fields["status"] != "draft" {
		t.Errorf("status = %v, want the default draft", bolt.Fields["status"])
	}
	if _, err := db.UpdateRecord(ctx, "part", bolt.ID, store.Update{BaseVersion: 1, Set: store.Values{"supplier": int64(7)}}); store.ErrorCode(err) != store.EINVALID {
		t.Errorf("save of a missing supplier = %v, want EINVALID", err)
	}
	if _, err := db.DeleteRecord(ctx, "supplier", acme.ID, store.Delete{ExpectVersion: 1}); store.ErrorCode(err) != store.EINVALID ||
		!strings.Contains(err.Error(), "part 1 (supplier)") {
		t.Errorf("delete of a referenced supplier = %v, want EINVALID naming part 1", err)
	}
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=foreign_keys(1)&_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec("DELETE FROM suppliers WHERE id = ?", acme.ID); err == nil || !strings.Contains(err.Error(), "FOREIGN KEY") && !strings.Contains(err.Error(), "refer to this supplier") {
		t.Errorf("a plain DELETE of a referenced supplier = %v; want the foreign key or the trigger to refuse it", err)
	}
	raw.Close()
	// A part whose supplier was deleted after it does not come back referring to nothing.
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
	other, err := db.CreateRecord(ctx, "area", store.Values{"name": "Other"})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := db.MoveRecord(ctx, "area", sub.ID, store.Move{Parent: &other.ID}); err != nil || res.Record.Fields["parent_id"] != other.ID {
		t.Errorf("move of an area = %v, %v; want it under area %d", res, err, other.ID)
	}
	if _, err := db.CreateRecord(ctx, "supplier", store.Values{"code": "ZED", "name": "Bolts and Nuts"}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"ACME TOOL", "cm"} { // the trigram index, and a scan
		found, err := db.FindRecords(ctx, store.Filter{Kind: "supplier", Search: q})
		if err != nil || len(found) != 1 || found[0].ID != acme.ID {
			t.Errorf("search %q = %v, %v; want supplier %d alone", q, found, err, acme.ID)
		}
	}
	sorted, err := db.FindRecords(ctx, store.Filter{Kind: "supplier", Sort: "name", Desc: true})
	if err != nil || len(sorted) != 2 || sorted[0].Fields["name"] != "Bolts and Nuts" {
		t.Errorf("suppliers by name, descending = %v, %v; want Bolts and Nuts first", sorted, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	again, err := sqlite.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if got := again.Registry(); !got.Same(reg) || got.Version() != 1 {
		t.Errorf("reopened without a schema: version %d, same %v; want the parts schema at version 1", got.Version(), got.Same(reg))
	}
	if n, err := again.CountRecords(ctx, "supplier"); err != nil || n != 2 {
		t.Errorf("suppliers after reopening = %d, %v; want 2", n, err)
	}
	if _, err := sqlite.Open(ctx, path, store.Options{Registry: store.DefaultRegistry()}); store.ErrorCode(err) != store.EINVALID ||
		!strings.Contains(err.Error(), "schema version 1") {
		t.Errorf("open with another schema = %v, want EINVALID naming the store's schema version", err)
	}
	legacy, err := store.LoadRegistry("../testdata/legacy_fields.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sqlite.Open(ctx, path, store.Options{Registry: legacy}); store.ErrorCode(err) != store.EINVALID {
		t.Errorf("open with a field registry of products and documents = %v, want EINVALID", err)
	}
	same, err := sqlite.Open(ctx, path, store.Options{Registry: partsRegistry(t)})
	if err != nil {
		t.Fatalf("open with the store's own schema: %v", err)
	}
	same.Close()
}

// TestSchema_UniqueRace: two writers on one file create suppliers with the same code at
// once, each through a store handle of its own: one gets it, the other is refused.
func TestSchema_UniqueRace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "parts.db")
	ctx := store.WithActor(context.Background(), store.Actor{Name: "alice", Role: store.RoleEditor})
	var dbs []*sqlite.DB
	for range 2 {
		db, err := sqlite.Open(ctx, path, store.Options{Registry: partsRegistry(t)})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		dbs = append(dbs, db)
	}
	for round := range 20 {
		code := "C" + strings.Repeat("x", round)
		var (
			wg   sync.WaitGroup
			errs [2]error
		)
		for i, db := range dbs {
			wg.Go(func() {
				_, errs[i] = db.CreateRecord(ctx, "supplier", store.Values{"code": code, "name": "n"})
			})
		}
		wg.Wait()
		ok := 0
		for _, err := range errs {
			var dup *store.Error
			switch {
			case err == nil:
				ok++
			case errors.As(err, &dup) && store.ErrorCode(err) == store.EINVALID && strings.Contains(err.Error(), "code"):
			default:
				t.Fatalf("round %d: %v", round, err)
			}
		}
		if ok != 1 {
			t.Fatalf("round %d: %d creates of code %s succeeded, want 1 (%v)", round, ok, code, errs)
		}
	}
}

// TestSchema_OldStoreGetsSample: a store made before stores kept their schema (schema
// version 13, no tandem_schema) gets the sample schema recorded as version 1 when it is
// opened, also with another schema (which is then refused), with its records as they were.
func TestSchema_OldStoreGetsSample(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	ctx := store.WithActor(context.Background(), store.Actor{Name: "alice", Role: store.RoleEditor})
	db, err := sqlite.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := db.CreateRecord(ctx, store.KindProduct, store.Values{"sku": "A-1", "name": "Hammer"})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"DROP TABLE tandem_schema", "DROP TABLE outside_refold", "DROP TABLE IF EXISTS products_outside_written",
		"DROP TABLE IF EXISTS documents_outside_written", "PRAGMA user_version = 13"} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()

	// Its tables are the sample's: a schema of other kinds does not take it over.
	if _, err := sqlite.Open(ctx, path, store.Options{Registry: partsRegistry(t)}); store.ErrorCode(err) != store.EINVALID ||
		!strings.Contains(err.Error(), "this store has schema version 1") {
		t.Errorf("old store opened with the parts schema = %v, want EINVALID naming the sample's version 1", err)
	}
	db, err = sqlite.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := db.Registry(); !got.Same(store.DefaultRegistry()) || got.Version() != 1 {
		t.Errorf("old store: version %d, same as the sample %v; want the sample at version 1", got.Version(), got.Same(store.DefaultRegistry()))
	}
	got, err := db.FindRecord(ctx, store.KindProduct, p.ID)
	if err != nil || got.Fields["name"] != "Hammer" {
		t.Errorf("product after the upgrade = %v, %v; want Hammer", got, err)
	}
	raw, err = sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var v int
	var text string
	if err := raw.QueryRow("SELECT version, yaml FROM tandem_schema").Scan(&v, &text); err != nil || v != 1 ||
		text != string(store.DefaultRegistry().YAML()) {
		t.Errorf("recorded schema = %d, %v; want the sample's YAML at version 1:\n%s", v, err, text)
	}
}

// TestSchema_ExistingTableMustFit: a schema whose kind names a table the store has with
// other columns is refused, not written over.
func TestSchema_ExistingTableMustFit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fit.db")
	reg, err := store.ParseRegistry("fit.yaml", []byte(`kinds:
  item:
    table: products
    fields:
      - {name: colour, type: string, owner: editor, rule: scalar}
`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = sqlite.Open(t.Context(), path, store.Options{Registry: reg})
	if store.ErrorCode(err) != store.EINVALID || !strings.Contains(err.Error(), "no column colour") {
		t.Errorf("open = %v, want EINVALID naming the missing column", err)
	}
}

// TestSchema_SearchTablesAsMigrated: the search tables, indexes and triggers made from a
// schema are those the migrations made for products and documents: the sample schema with
// its tables renamed gets, name for name and statement for statement, what the sample's
// tables have, but that its FTS5 tables keep no row sizes (columnsize = 0, so no _docsize
// table), which a search never reads.
func TestSchema_SearchTablesAsMigrated(t *testing.T) {
	text := strings.NewReplacer("table: products", "table: items", "table: documents", "table: pages").
		Replace(string(store.DefaultRegistry().YAML()))
	reg, err := store.ParseRegistry("renamed.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "renamed.db")
	db, err := sqlite.Open(t.Context(), path, store.Options{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	objects := func(like string) map[string]string {
		rows, err := raw.Query(`SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL AND name GLOB ?
			AND (name GLOB '*_search' OR name GLOB '*_fts' OR name GLOB '*_fts_*' OR name GLOB '*_search_*')
			AND name NOT GLOB '*_outside_*'`, like)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[string]string{}
		for rows.Next() {
			var name, q string
			if err := rows.Scan(&name, &q); err != nil {
				t.Fatal(err)
			}
			out[name] = strings.Join(strings.Fields(strings.ReplaceAll(q, `"`, "")), " ")
		}
		return out
	}
	for _, tc := range []struct{ mine, sample string }{{"items", "products"}, {"pages", "documents"}} {
		got, want := objects(tc.mine+"_*"), objects(tc.sample+"_*")
		for name, q := range want {
			if strings.HasSuffix(name, "_fts_docsize") {
				delete(want, name)
				continue
			}
			want[name] = strings.Replace(q, " columnsize = 0,", "", 1)
		}
		for name, q := range got {
			if strings.HasSuffix(name, "_fts") && !strings.Contains(q, "columnsize = 0") {
				t.Errorf("%s keeps row sizes: %s", name, q)
			}
			got[name] = strings.Replace(q, " columnsize = 0,", "", 1)
		}
		if len(want) == 0 || len(got) != len(want) {
			t.Errorf("%s has %d search objects, %s %d", tc.mine, len(got), tc.sample, len(want))
		}
		for name, q := range got {
			sampleName := tc.sample + strings.TrimPrefix(name, tc.mine)
			if w := want[sampleName]; strings.ReplaceAll(q, tc.mine+"_", tc.sample+"_") != w &&
				strings.ReplaceAll(strings.ReplaceAll(q, tc.mine+"_", tc.sample+"_"), " "+tc.mine+" ", " "+tc.sample+" ") != w {
				t.Errorf("%s:\n%s\nwant as %s:\n%s", name, q, sampleName, w)
			}
		}
	}
}

// TestSchema_Overlay: a store of the sample schema opened with the sample changed where its
// tables are not (an owner, a lease group), in either form, runs that overlay and keeps its
// own schema; one that adds a field is refused, naming the store's schema version.
func TestSchema_Overlay(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sample.db")
	db, err := sqlite.Open(t.Context(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	sample := string(store.DefaultRegistry().YAML())
	for _, tc := range []struct {
		name, old, new string
		ok             bool
	}{
		{"owner", "{name: price, label: price, type: money, owner: editor", "{name: price, label: price, type: money, owner: shared", true},
		{"added field", "- {name: checksum, label: checksum, type: string, owner: system",
			"- {name: colour, type: string, owner: editor, rule: scalar}\n      - {name: checksum, label: checksum, type: string, owner: system", false},
	} {
		text := strings.Replace(sample, tc.old, tc.new, 1)
		if text == sample {
			t.Fatalf("%s: %q is not in the sample's YAML:\n%s", tc.name, tc.old, sample)
		}
		reg, err := store.ParseRegistry(tc.name+".yaml", []byte(text))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		db, err := sqlite.Open(t.Context(), path, store.Options{Registry: reg})
		switch {
		case tc.ok && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.ok:
			if f, _ := db.Registry().Field(store.KindProduct, "price"); f.Owner != store.OwnerShared || db.Registry().Version() != 1 {
				t.Errorf("%s: price owner %s, version %d; want the overlay's shared at the store's version 1", tc.name, f.Owner, db.Registry().Version())
			}
			db.Close()
		case store.ErrorCode(err) != store.EINVALID || !strings.Contains(err.Error(), "this store has schema version 1"):
			t.Errorf("%s: open = %v, want EINVALID naming the store's schema version", tc.name, err)
		}
	}
	db, err = sqlite.Open(t.Context(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if !db.Registry().Same(store.DefaultRegistry()) {
		t.Errorf("after an overlay the store keeps the sample schema:\n%s", db.Registry().YAML())
	}
}

// Environment of a child process started by TestSchema_TwoProcesses.
const schemaChild = "TANDEM_SQLITE_TEST_SCHEMA_CHILD_DB"

const schemaRounds = 30

// TestSchema_TwoProcesses: two OS processes open a file that does not exist yet with the
// parts schema at once (one makes the store, the other opens it) and create suppliers with
// the same codes: each code is created once, the other process told it exists.
func TestSchema_TwoProcesses(t *testing.T) {
	if path := os.Getenv(schemaChild); path != "" {
		schemaChildRun(t, path)
		return
	}
	if testing.Short() {
		t.Skip("starts OS processes")
	}
	path := filepath.Join(t.TempDir(), "parts.db")
	var (
		cmds [2]*exec.Cmd
		outs [2]bytes.Buffer
	)
	for i := range cmds {
		cmd := exec.Command(os.Args[0], "-test.run=^TestSchema_TwoProcesses$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), schemaChild+"="+path)
		cmd.Stdout, cmd.Stderr = &outs[i], &outs[i]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i] = cmd
	}
	created := 0
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("child %d: %v\n%s", i, err, outs[i].String())
		}
		var n int
		if _, err := fmt.Sscanf(outs[i].String()[strings.Index(outs[i].String(), "created:"):], "created: %d", &n); err != nil {
			t.Fatalf("child %d: %v\n%s", i, err, outs[i].String())
		}
		created += n
	}
	db, err := sqlite.Open(t.Context(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	n, err := db.CountRecords(t.Context(), "supplier")
	if err != nil || n != schemaRounds || created != schemaRounds {
		t.Errorf("%d suppliers (%v), %d creates succeeded; want %d of each", n, err, created, schemaRounds)
	}
}

func schemaChildRun(t *testing.T, path string) {
	ctx := store.WithActor(context.Background(), store.Actor{Name: "child", Role: store.RoleEditor})
	db, err := sqlite.Open(ctx, path, store.Options{Registry: partsRegistry(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	created := 0
	for i := range schemaRounds {
		_, err := db.CreateRecord(ctx, "supplier", store.Values{"code": fmt.Sprintf("R-%d", i), "name": "n"})
		switch {
		case err == nil:
			created++
		case store.ErrorCode(err) != store.EINVALID || !strings.Contains(err.Error(), "already exists"):
			t.Fatalf("create R-%d: %v", i, err)
		}
	}
	fmt.Printf("created: %d\n", created)
}

// TestSchema_KeywordNames: kinds, tables and fields named like SQL keywords work, as every
// name from a schema is quoted in SQL.
func TestSchema_KeywordNames(t *testing.T) {
	reg, err := store.ParseRegistry("keywords.yaml", []byte(`kinds:
  group:
    table: order
    tree: true
    title: select
    fields:
      - {name: select, type: string, owner: editor, rule: scalar, required: true, unique: true, search: true}
      - {name: from,   type: int,    owner: shared, rule: counter, sort: true}
      - {name: where,  type: set,    owner: editor, rule: set, search: true}
      - {name: limit,  type: ref,    to: group, owner: editor, rule: scalar}
`))
	if err != nil {
		t.Fatal(err)
	}
	ctx := store.WithActor(context.Background(), store.Actor{Name: "alice", Role: store.RoleEditor})
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "kw.db"), store.Options{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	a, err := db.CreateRecord(ctx, "group", store.Values{"select": "Alpha", "where": []string{"x"}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := db.CreateRecord(ctx, "group", store.Values{"select": "Beta", "parent_id": a.ID, "limit": a.ID, "from": int64(5)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateRecord(ctx, "group", store.Values{"select": " alpha"}); store.ErrorCode(err) != store.EINVALID {
		t.Errorf("a second alpha = %v, want EINVALID", err)
	}
	if _, err := db.UpdateRecord(ctx, "group", a.ID, store.Update{Add: map[string]int64{"from": 2}}); err != nil {
		t.Errorf("relative save: %v", err)
	}
	if _, err := db.UpdateRecord(ctx, "group", a.ID, store.Update{BaseVersion: 2, Set: store.Values{"select": "Alpha 2"}}); err != nil {
		t.Errorf("save: %v", err)
	}
	if found, err := db.FindRecords(ctx, store.Filter{Kind: "group", Search: "pha 2"}); err != nil || len(found) != 1 {
		t.Errorf("search = %v, %v", found, err)
	}
	if sorted, err := db.FindRecords(ctx, store.Filter{Kind: "group", Sort: "from", Desc: true}); err != nil || len(sorted) != 2 || sorted[0].ID != b.ID {
		t.Errorf("sorted by from = %v, %v", sorted, err)
	}
	if _, err := db.MoveRecord(ctx, "group", a.ID, store.Move{Parent: &b.ID}); store.ErrorCode(err) != store.EINVALID {
		t.Errorf("cycle = %v, want EINVALID", err)
	}
	c, err := db.CreateRecord(ctx, "group", store.Values{"select": "Gamma", "limit": a.ID})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.DeleteRecord(ctx, "group", b.ID, store.Delete{ExpectVersion: 1}); err != nil {
		t.Errorf("delete: %v", err)
	}
	if _, err := db.RestoreRecord(ctx, "group", b.ID, store.Restore{}); err != nil {
		t.Errorf("restore: %v", err)
	}
	// b (under a, referring to a) goes with a's subtree; c refers to a from outside it.
	if _, err := db.DeleteRecord(ctx, "group", a.ID, store.Delete{ExpectVersion: 3, Subtree: true}); store.ErrorCode(err) != store.EINVALID ||
		!strings.Contains(err.Error(), fmt.Sprintf("group %d (limit)", c.ID)) {
		t.Errorf("delete of a record another refers to (limit) = %v, want EINVALID naming group %d", err, c.ID)
	}
	n := 0
	if err := db.StreamRecords(ctx, store.Filter{Kind: "group"}, nil, func(*store.Record) error { n++; return nil }); err != nil || n != 3 {
		t.Errorf("stream: %d records, %v", n, err)
	}
	// Without c, a goes with its subtree: b, which refers to a, first.
	if _, err := db.DeleteRecord(ctx, "group", c.ID, store.Delete{ExpectVersion: 1}); err != nil {
		t.Fatal(err)
	}
	if res, err := db.DeleteRecord(ctx, "group", a.ID, store.Delete{ExpectVersion: 3, Subtree: true}); err != nil || len(res.Deleted) != 2 {
		t.Errorf("subtree delete = %+v, %v; want a and b deleted", res, err)
	}
}

// TestSchema_NameTaken: a kind whose table or index would take a name the store uses is
// refused with a message, and nothing of the schema is made.
func TestSchema_NameTaken(t *testing.T) {
	reg, err := store.ParseRegistry("taken.yaml", []byte(`kinds:
  thing:
    table: products_name_id
    fields:
      - {name: label, type: string, owner: editor, rule: scalar}
`))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "taken.db")
	_, err = sqlite.Open(t.Context(), path, store.Options{Registry: reg})
	if store.ErrorCode(err) != store.EINVALID || !strings.Contains(err.Error(), "kind thing") || !strings.Contains(err.Error(), "is taken") {
		t.Errorf("open = %v, want EINVALID naming the kind", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused schema left a store at %s (%v)", path, err)
	}
}

// TestSchema_SearchTablesPerKind: a store of 50 kinds of 40 fields, ten of them searched,
// has two search tables (the side table and its FTS5 index) and five search triggers per
// kind, whatever the number of its searched fields, and none named after a field (a store
// made before had 5,313 schema objects, now about 1,700); and a search finds what a save
// wrote in any searched field of the kind, and only in that kind.
func TestSchema_SearchTablesPerKind(t *testing.T) {
	reg, err := store.ParseRegistry("wide.yaml", []byte(wideSchema(50, 40)))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "wide.db")
	db, err := sqlite.Open(t.Context(), path, store.Options{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	count := func(q string, args ...any) int {
		t.Helper()
		var n int
		if err := raw.QueryRow(q, args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// 50 kinds and the sample's two, whose tables every store has.
	const kinds = 52
	if got := count(`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND (name GLOB '*_search' OR name GLOB '*_fts')`); got != 2*kinds {
		t.Errorf("%d search tables, want %d: two per kind", got, 2*kinds)
	}
	if got := count(`SELECT count(*) FROM sqlite_master WHERE name GLOB '*_field[0-9][0-9]_search*' OR name GLOB '*_field[0-9][0-9]_fts*'`); got != 0 {
		t.Errorf("%d search objects named after a field, want none", got)
	}
	if got := count(`SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND (name GLOB '*_fts_*' OR name GLOB '*_search_*')`); got != 5*kinds {
		t.Errorf("%d search triggers, want %d: five per kind", got, 5*kinds)
	}
	if got := count(`SELECT count(*) FROM sqlite_master`); got > 2000 {
		t.Errorf("%d schema objects for 50 kinds of 40 fields, want at most 2,000", got)
	}

	ctx := store.WithActor(t.Context(), store.Actor{Name: "alice", Role: store.RoleEditor})
	vals := store.Values{"field00": "K-1", "field08": "Gärtnerei", "field16": "x", "field17": "Große Straße", "field24": "y", "field32": "z"}
	rec, err := db.CreateRecord(ctx, "kind00", vals)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"k-1", "GÄRTNER", "grosse", "ße"} {
		got, err := db.FindRecords(t.Context(), store.Filter{Kind: "kind00", Search: q, Limit: 10})
		if err != nil || len(got) != 1 || got[0].ID != rec.ID {
			t.Errorf("search %q = %v, %v; want record %d", q, got, err, rec.ID)
		}
	}
	if got, err := db.FindRecords(t.Context(), store.Filter{Kind: "kind01", Search: "gärtner"}); err != nil || len(got) != 0 {
		t.Errorf("search of another kind = %v, %v; want nothing", got, err)
	}
}
