package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCLI_OwnSchema: init --schema makes a store of one's own kinds, which every command
// then takes as KIND; schema show prints the schema the store keeps, at its version; a
// kind the store does not have is refused naming the store's kinds; and a store's schema
// is not replaced by another init --schema.
func TestCLI_OwnSchema(t *testing.T) {
	besideOthers(t)
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) { testOwnSchema(t, b) })
	}
}

func testOwnSchema(t *testing.T, b backend) {
	parts, err := filepath.Abs("../../store/testdata/parts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// A fresh store of b that init makes.
	fresh := func(name string) string {
		if b.name == "sqlite" {
			return filepath.Join(t.TempDir(), name)
		}
		return b.dsn(t)
	}
	dsn := fresh("parts.db")
	out := mustTandem(t, dsn, "init", "--schema", parts)
	if !strings.Contains(out, "schema version 1: supplier, part and area") {
		t.Errorf("init said %q, want the schema version and kinds", out)
	}
	// A command that takes a KIND lists the store's kinds in its help; help makes no store.
	if out := mustTandem(t, dsn, "get", "--help"); !strings.Contains(out, ": supplier, part and area") {
		t.Errorf("get --help on the store does not list its kinds:\n%s", out)
	}
	if b.name == "sqlite" {
		none := filepath.Join(t.TempDir(), "none.db")
		if out := mustTandem(t, none, "get", "--help"); strings.Contains(out, "Kinds in the store") {
			t.Errorf("get --help without a store lists kinds:\n%s", out)
		}
		if _, err := os.Stat(none); !os.IsNotExist(err) {
			t.Errorf("get --help made a store at %s (%v)", none, err)
		}
	}
	if out := mustTandem(t, dsn, "create", "supplier", "code=ACME", "name=Acme"); !strings.Contains(out, "created supplier 1") {
		t.Errorf("create said %q", out)
	}
	r := tandem(t, dsn, "create", "supplier", "code=acme ", "name=Other")
	wantExit(t, "create a second ACME", r, exitUsage, "code", "supplier 1")
	mustTandem(t, dsn, "import", writeFile(t, "in.csv", "kind,code,name\nsupplier,BOLT,Bolt Co\n"))
	list := mustTandem(t, dsn, "list", "suppliers")
	if !strings.Contains(list, "Bolt Co") {
		t.Errorf("list after importing a supplier:\n%s", list)
	}
	if !strings.Contains(list, "CODE") || !strings.Contains(list, "ACME") || !strings.Contains(list, "Acme") {
		t.Errorf("list suppliers:\n%s", list)
	}
	show := mustTandem(t, dsn, "schema", "show")
	if !strings.HasPrefix(show, "# schema version 1 of ") || !strings.Contains(show, "  supplier:\n    table: suppliers\n") {
		t.Errorf("schema show:\n%s", show)
	}
	var js struct {
		Version int64 `json:"version"`
		Kinds   []struct {
			Name   string `json:"name"`
			Tree   bool   `json:"tree"`
			Fields []struct {
				Name   string `json:"name"`
				Unique bool   `json:"unique"`
			} `json:"fields"`
		} `json:"kinds"`
	}
	if err := json.Unmarshal([]byte(mustTandem(t, dsn, "schema", "show", "--json")), &js); err != nil {
		t.Fatal(err)
	}
	if js.Version != 1 || len(js.Kinds) != 3 || js.Kinds[0].Name != "supplier" || !js.Kinds[0].Fields[0].Unique || !js.Kinds[2].Tree {
		t.Errorf("schema show --json = %+v", js)
	}
	mustTandem(t, dsn, "create", "area", "name=Top")
	mustTandem(t, dsn, "create", "area", "name=Sub", "parent_id=1")
	wantExit(t, "move an area under its child", tandem(t, dsn, "move", "1", "2"), exitUsage, "cycle")
	wantExit(t, "move naming the kind, under its child", tandem(t, dsn, "move", "area", "1", "2"), exitUsage, "cycle")
	wantExit(t, "move naming two kinds", tandem(t, dsn, "move", "area", "1", "2", "--kind", "part"), exitUsage, "two kinds")
	if out := mustTandem(t, dsn, "move", "area", "2", "root"); !strings.Contains(out, "moved area 2 under the root") {
		t.Errorf("move said %q", out)
	}
	wantExit(t, "move a supplier", tandem(t, dsn, "move", "--kind", "supplier", "1", "root"), exitUsage, "not in a tree")
	// A subtree of areas goes and comes back as documents' do.
	mustTandem(t, dsn, "move", "2", "1")
	if out := mustTandem(t, dsn, "delete", "area", "1", "--expect-version", "1", "--subtree"); !strings.Contains(out, "tandem restore area 1 --subtree") {
		t.Errorf("delete --subtree said %q", out)
	}
	if out := mustTandem(t, dsn, "restore", "area", "1", "--subtree"); !strings.Contains(out, "restored area 2: version 5 (deleted with area 1)") {
		t.Errorf("restore --subtree said %q", out)
	}
	if got := mustGet(t, dsn, "area", 2); got.Fields["parent_id"] != float64(1) {
		t.Errorf("area 2 back under %v, want 1", got.Fields["parent_id"])
	}
	// A working copy holds the store's own kinds, its tree of areas included.
	copyFile := filepath.Join(t.TempDir(), "copy.db")
	mustTandem(t, dsn, "clone", dsn, copyFile)
	if got := mustGet(t, copyFile, "area", 2); got.Fields["parent_id"] != float64(1) {
		t.Errorf("the copy's area 2 is under %v, want 1", got.Fields["parent_id"])
	}
	if got := mustGet(t, copyFile, "supplier", 1); got.Fields["code"] != "ACME" {
		t.Errorf("the copy's supplier 1: %v", got.Fields)
	}
	wantExit(t, "seed", tandem(t, dsn, "seed"), exitUsage, "seed fills products and documents", "this store has supplier, part and area")
	wantExit(t, "list products", tandem(t, dsn, "list", "products"), exitUsage,
		`unknown kind "products" (this store has supplier, part and area)`)
	wantExit(t, "get widget", tandem(t, dsn, "get", "widget", "1"), exitUsage, "supplier, part and area")
	wantExit(t, "init with the sample schema", tandem(t, dsn, "init", "--schema", "../../store/sample.yaml"), exitUsage,
		"this store has schema version 1")
	if out := mustTandem(t, dsn, "init", "--schema", parts); !strings.Contains(out, "already holds a tandem store") {
		t.Errorf("init again with the store's own schema said %q", out)
	}
	// What a show prints is a schema file: a store made from it has the same schema.
	shown := writeFile(t, "shown.yaml", show)
	other := fresh("other.db")
	mustTandem(t, other, "init", "--schema", shown)
	if again := mustTandem(t, other, "schema", "show"); strings.SplitN(again, "\n", 2)[1] != strings.SplitN(show, "\n", 2)[1] {
		t.Errorf("a store made from schema show's output shows\n%s\nwant\n%s", again, show)
	}
	// A store made without --schema has the sample schema, version 1.
	sample := fresh("sample.db")
	mustTandem(t, sample, "init")
	if show := mustTandem(t, sample, "schema", "show"); !strings.Contains(show, "# schema version 1 ") || !strings.Contains(show, "  product:\n") {
		t.Errorf("schema show of a sample store:\n%s", show)
	}
	wantExit(t, "init --schema --sample", tandem(t, filepath.Join(t.TempDir(), "x.db"), "init", "--schema", parts, "--sample"), exitUsage, "--sample")
}

// TestCLI_SchemaApply: schema diff says what a file changes and what it would lose; schema
// apply applies the additive part at once, refuses a destructive one with its count and
// writes nothing, and with --allow-destructive applies it after writing the lost values to
// the export file it names; the store then runs the new version.
func TestCLI_SchemaApply(t *testing.T) {
	besideOthers(t)
	parts, err := filepath.Abs("../../store/testdata/parts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			if b.name == "sqlite" {
				dsn = filepath.Join(t.TempDir(), "parts.db")
			}
			mustTandem(t, dsn, "init", "--schema", parts)
			mustTandem(t, dsn, "create", "supplier", "code=ACME", "name=Acme", "notes=keep me")
			shown := mustTandem(t, dsn, "schema", "show")
			next := strings.Replace(shown, "      - {name: notes,", "      - {name: country, type: string, owner: editor, rule: scalar, default: DE}\n      - {name: notes,", 1)
			dropped := regexp.MustCompile(`(?m)^      - \{name: notes,.*\n`).ReplaceAllString(next, "")
			dir := t.TempDir()
			add, drop := filepath.Join(dir, "add.yaml"), filepath.Join(dir, "drop.yaml")
			if err := os.WriteFile(add, []byte(next), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(drop, []byte(dropped), 0o600); err != nil {
				t.Fatal(err)
			}
			r := tandem(t, dsn, "schema", "apply", add)
			if r.code != 0 || !strings.Contains(r.stdout, `add field supplier.country (string, default "DE")`) ||
				!strings.Contains(r.stdout, "now version 2") {
				t.Fatalf("apply of an added field: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			if got := mustGet(t, dsn, "supplier", 1); got.Fields["country"] != "DE" || got.Fields["notes"] != "keep me" {
				t.Errorf("after the apply supplier 1 = %v", got.Fields)
			}
			if out := mustTandem(t, dsn, "schema", "diff", drop); !strings.Contains(out, "drop field supplier.notes: destructive: 1 record holds a value") {
				t.Errorf("diff of a dropped field said %q", out)
			}
			var js struct {
				FromVersion int64 `json:"from_version"`
				Changes     []struct {
					Class    string `json:"class"`
					Field    string `json:"field"`
					Affected int64  `json:"affected"`
				} `json:"changes"`
			}
			if err := json.Unmarshal([]byte(mustTandem(t, dsn, "schema", "diff", drop, "--json")), &js); err != nil ||
				js.FromVersion != 2 || len(js.Changes) != 1 || js.Changes[0].Class != "destructive" || js.Changes[0].Affected != 1 {
				t.Errorf("diff --json = %+v, %v", js, err)
			}
			wantExit(t, "apply of a dropped field", tandem(t, dsn, "schema", "apply", drop), exitUsage, "1 record holds a value",
				"allow destructive changes to apply them (--allow-destructive)")
			if got := mustGet(t, dsn, "supplier", 1); got.Fields["notes"] != "keep me" {
				t.Errorf("a refused apply dropped notes: %v", got.Fields)
			}
			lost := filepath.Join(dir, "lost.jsonl")
			out := mustTandem(t, dsn, "schema", "apply", drop, "--allow-destructive", "--export", lost)
			if !strings.Contains(out, "now version 3") || !strings.Contains(out, "1 dropped value written to") {
				t.Errorf("destructive apply said %q", out)
			}
			if b, err := os.ReadFile(lost); err != nil || !strings.Contains(string(b), `"field":"notes","value":"keep me"`) {
				t.Errorf("export file: %q, %v", b, err)
			}
			if got := mustGet(t, dsn, "supplier", 1); got.Fields["notes"] != nil {
				t.Errorf("notes still there after the drop: %v", got.Fields)
			}
			if out := mustTandem(t, dsn, "schema", "show"); !strings.Contains(out, "# schema version 3") {
				t.Errorf("schema show after two applies: %q", out)
			}
		})
	}
}

// TestCLI_SchemaShowReparses: schema show prints a schema whose enum values hold escapes
// (backslashes, a quote) and whose label holds a backslash and a quote as a file that init --schema
// makes the same schema from, and writes none of those characters raw.
func TestCLI_SchemaShowReparses(t *testing.T) {
	besideOthers(t)
	schema := writeFile(t, "esc.yaml", `kinds:
  order:
    table: orders
    fields:
      - {name: code, type: string, owner: editor, rule: scalar, required: true, label: "a\\x\"b"}
      - {name: state, type: enum, owner: editor, rule: scalar, values: ["x\\ty", "a\"b", "C:\\new"]}
`)
	dir := t.TempDir()
	first, second := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	mustTandem(t, first, "init", "--schema", schema)
	show := mustTandem(t, first, "schema", "show")
	if strings.ContainsAny(show, "\x1b\u202e\t") {
		t.Errorf("schema show wrote a raw escape:\n%q", show)
	}
	mustTandem(t, second, "init", "--schema", writeFile(t, "shown.yaml", show))
	if again := mustTandem(t, second, "schema", "show"); strings.SplitN(again, "\n", 2)[1] != strings.SplitN(show, "\n", 2)[1] {
		t.Errorf("the shown schema made another schema:\nshown:\n%s\nmade from it:\n%s", show, again)
	}
}

// TestCLI_SchemaRetypeKeepsHistory: after a destructive change of a field's type, history
// keeps the old values under the field's retired name, and the record's history still
// reads: history (both forms) and get --version of a version whose delta wrote the field.
// A delta naming the retired field made every one of them fail.
func TestCLI_SchemaRetypeKeepsHistory(t *testing.T) {
	besideOthers(t)
	parts, err := filepath.Abs("../../store/testdata/parts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			if b.name == "sqlite" {
				dsn = filepath.Join(t.TempDir(), "parts.db")
			}
			mustTandem(t, dsn, "init", "--schema", parts)
			mustTandem(t, dsn, "create", "supplier", "code=ACME", "name=Acme")
			mustTandem(t, dsn, "set", "supplier", "1", "rating=5", "notes=one\ntwo", "--expect-version", "1")
			mustTandem(t, dsn, "set", "supplier", "1", "notes=one\nthree", "--expect-version", "2")
			shown := mustTandem(t, dsn, "schema", "show")
			retyped := regexp.MustCompile(`(?m)^      - \{name: rating,.*$`).ReplaceAllString(shown, "      - {name: rating, type: text, owner: shared, rule: scalar}")
			retyped = regexp.MustCompile(`(?m)^      - \{name: notes,.*$`).ReplaceAllString(retyped, "      - {name: notes, type: string, owner: editor, rule: scalar}")
			file := filepath.Join(t.TempDir(), "retype.yaml")
			if err := os.WriteFile(file, []byte(retyped), 0o600); err != nil {
				t.Fatal(err)
			}
			mustTandem(t, dsn, "schema", "apply", file, "--allow-destructive", "--export", filepath.Join(t.TempDir(), "lost.jsonl"))
			mustTandem(t, dsn, "history", "supplier", "1")
			mustTandem(t, dsn, "history", "supplier", "1", "--json")
			for _, v := range []string{"1", "2", "3"} {
				if out := mustTandem(t, dsn, "get", "supplier", "1", "--version", v); !strings.Contains(out, "Acme") {
					t.Errorf("get --version %s: %q", v, out)
				}
			}
		})
	}
}
