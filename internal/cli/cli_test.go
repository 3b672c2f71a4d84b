package cli

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLI_ExitCodes checks the exit code of every error class, that the message on stderr
// starts with "tandem: ", and that a refused command changed nothing.
func TestCLI_ExitCodes(t *testing.T) {
	dsn := newSQLiteStore(t)
	dir := filepath.Dir(dsn)
	p := mustCreate(t, dsn, "product", "sku=EXIT-1", "name=Exit codes", "price=5.00", "stock=10")
	leased := mustCreate(t, dsn, "product", "sku=EXIT-2", "name=Leased", "stock=10")
	d := mustCreate(t, dsn, "document", "title=Exit codes", "body=one line")
	pid, lid, did := fmt.Sprint(p.ID), fmt.Sprint(leased.ID), fmt.Sprint(d.ID)
	// A second save makes version 1 stale for the conflict case.
	mustTandem(t, dsn, "set", "product", pid, "name=Exit codes, v2", "--expect-version", "1")

	big := filepath.Join(dir, "big.txt")
	if err := os.WriteFile(big, []byte(strings.Repeat("a", 16<<20+1)), 0o600); err != nil {
		t.Fatal(err)
	}
	badFields := filepath.Join(dir, "fields.yaml")
	if err := os.WriteFile(badFields, []byte("product:\n  - {name: sku, type: int}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	leaseToken := mustLease(t, dsn, leased.ID, "alice")

	tests := []struct {
		name string
		args []string
		want int
	}{
		{"unknown command", []string{"frobnicate"}, exitUsage},
		{"unknown flag", []string{"list", "products", "--colour"}, exitUsage},
		{"too few arguments", []string{"adjust", "product", pid, "stock"}, exitUsage},
		{"unknown kind", []string{"get", "widget", "1"}, exitUsage},
		{"bad id", []string{"get", "product", "forty-two"}, exitUsage},
		{"unknown field", []string{"set", "product", pid, "colour=red", "--expect-version", "2"}, exitUsage},
		{"wrong type", []string{"set", "product", pid, "stock=abc", "--expect-version", "2"}, exitUsage},
		{"bad money", []string{"set", "product", pid, "price=12.345", "--expect-version", "2"}, exitUsage},
		{"bad enum", []string{"set", "product", pid, "availability=maybe", "--expect-version", "2"}, exitUsage},
		{"name over 1000 characters", []string{"set", "product", pid, "name=" + strings.Repeat("n", 1001), "--expect-version", "2"}, exitUsage},
		{"body over 16 MiB", []string{"set", "document", did, "body=@" + big, "--expect-version", "1"}, exitUsage},
		{"invalid UTF-8", []string{"set", "product", pid, "name=bad \xff byte", "--expect-version", "2"}, exitUsage},
		{"control character", []string{"set", "product", pid, "name=bell\a", "--expect-version", "2"}, exitUsage},
		{"no equals sign", []string{"set", "product", pid, "name", "--expect-version", "2"}, exitUsage},
		{"missing expect-version", []string{"set", "product", pid, "name=x"}, exitUsage},
		{"adjust a non-counter", []string{"adjust", "product", pid, "price", "1"}, exitUsage},
		{"create without required name", []string{"create", "product", "sku=NEW-1"}, exitUsage},
		{"duplicate sku", []string{"create", "product", "sku=EXIT-1", "name=Twin"}, exitUsage},
		{"control character in user", []string{"--user", "eve\x1b[2J", "adjust", "product", pid, "stock", "1"}, exitUsage},
		{"bad role", []string{"--as", "robot", "adjust", "product", pid, "stock", "1"}, exitUsage},
		{"broken field registry", []string{"--fields", badFields, "get", "product", pid}, exitUsage},
		{"missing directory", []string{"--db", filepath.Join(dir, "no", "such", "dir.db"), "list", "products"}, exitUsage},
		{"conflict", []string{"set", "product", pid, "name=stale", "--expect-version", "1"}, exitConflict},
		{"lease held by alice", []string{"set", "product", lid, "name=mine", "--expect-version", "1"}, exitLease},
		{"lease held by alice, adjust", []string{"adjust", "product", lid, "stock", "1"}, exitLease},
		{"wrong lease token", []string{"adjust", "product", lid, "stock", "1", "--lease", "not-a-token"}, exitLease},
		{"not found", []string{"get", "product", "99999"}, exitNotFound},
		{"set not found", []string{"set", "product", "99999", "name=x", "--expect-version", "1"}, exitNotFound},
		{"history not found", []string{"history", "document", "99999"}, exitNotFound},
		{"editor writes a system field", []string{"set", "product", pid, "checksum=abc", "--expect-version", "2"}, exitForbidden},
		{"system writes an editor field", []string{"--as", "system", "set", "product", pid, "name=x", "--expect-version", "2"}, exitForbidden},
	}
	beforeP, beforeD := mustGet(t, dsn, "product", p.ID), mustGet(t, dsn, "document", d.ID)
	beforeL := mustGet(t, dsn, "product", leased.ID)
	beforeN := countRecords(t, dsn, "product")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tandem(t, dsn, tt.args...)
			if r.code != tt.want {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", r.code, tt.want, r.stdout, r.stderr)
			}
			if !strings.HasPrefix(r.stderr, "tandem: ") {
				t.Errorf("stderr %q does not start with \"tandem: \"", r.stderr)
			}
			if r.stdout != "" {
				t.Errorf("a refused command printed to stdout: %q", r.stdout)
			}
		})
	}
	if got := mustGet(t, dsn, "product", p.ID); !sameJSON(t, got, beforeP) {
		t.Errorf("refused commands changed product %d:\nbefore %+v\nafter  %+v", p.ID, beforeP, got)
	}
	if got := mustGet(t, dsn, "product", leased.ID); !sameJSON(t, got, beforeL) {
		t.Errorf("refused commands changed product %d:\nbefore %+v\nafter  %+v", leased.ID, beforeL, got)
	}
	if got := mustGet(t, dsn, "document", d.ID); !sameJSON(t, got, beforeD) {
		t.Errorf("refused commands changed document %d:\nbefore %+v\nafter  %+v", d.ID, beforeD, got)
	}
	if got := countRecords(t, dsn, "product"); got != beforeN {
		t.Errorf("refused creates added products: %d, want %d", got, beforeN)
	}

	t.Run("lease token lets the holder write", func(t *testing.T) {
		r := tandem(t, dsn, "--user", "alice", "set", "product", lid, "name=by the holder", "--expect-version", "1", "--lease", leaseToken)
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
	})
}

// TestCLI_UnreachableServer checks that a PostgreSQL server that cannot be reached is exit 1,
// quickly, and that the password in the DSN never appears in the message.
func TestCLI_UnreachableServer(t *testing.T) {
	r := tandem(t, "postgres://alice:s3cret-pw@127.0.0.1:1/tandem?sslmode=disable&connect_timeout=2", "list", "products")
	if r.code != exitFailure {
		t.Errorf("exit %d, want %d: %s", r.code, exitFailure, r.stderr)
	}
	if strings.Contains(r.stdout+r.stderr, "s3cret-pw") {
		t.Errorf("the password leaked: %s", r.stderr)
	}
	if !strings.HasPrefix(r.stderr, "tandem: ") {
		t.Errorf("stderr %q does not start with \"tandem: \"", r.stderr)
	}
}

// TestCLI_Seed checks the sample data and that seed refuses a store that is not empty.
func TestCLI_Seed(t *testing.T) {
	dsn := filepath.Join(t.TempDir(), "tandem.db")
	mustTandem(t, dsn, "seed")
	var products []record
	if err := json.Unmarshal([]byte(mustTandem(t, dsn, "list", "products", "--json")), &products); err != nil {
		t.Fatal(err)
	}
	if len(products) != defaultSeedProducts {
		t.Fatalf("seeded %d products, want %d", len(products), defaultSeedProducts)
	}
	demo := mustGet(t, dsn, "product", 42)
	if price, _ := demo.Fields["price"].(string); price == "" || price == "0.00" {
		t.Errorf("product 42 price = %v, want a price", demo.Fields["price"])
	}
	if desc, _ := demo.Fields["description"].(string); strings.Count(desc, "\n") < 2 {
		t.Errorf("product 42 description has fewer than three lines: %q", desc)
	}
	var docs []record
	if err := json.Unmarshal([]byte(mustTandem(t, dsn, "list", "documents", "--json")), &docs); err != nil {
		t.Fatal(err)
	}
	if len(docs) != defaultSeedDocuments {
		t.Fatalf("seeded %d documents, want %d", len(docs), defaultSeedDocuments)
	}
	depth := map[int64]int{}
	deepest := 0
	for _, d := range docs { // parents come before children
		depth[d.ID] = 1
		if parent, ok := d.Fields["parent_id"].(float64); ok {
			depth[d.ID] = depth[int64(parent)] + 1
		}
		deepest = max(deepest, depth[d.ID])
	}
	if deepest != 3 {
		t.Errorf("document tree is %d levels deep, want 3", deepest)
	}

	r := tandem(t, dsn, "seed")
	if r.code != exitUsage || !strings.Contains(r.stderr, "--force") {
		t.Errorf("seed on a filled store: exit %d %q, want %d and a hint at --force", r.code, r.stderr, exitUsage)
	}
	if got := countRecords(t, dsn, "product"); got != defaultSeedProducts {
		t.Errorf("refused seed added products: %d", got)
	}
	mustTandem(t, dsn, "seed", "--force", "--products", "5", "--documents", "2")
	if got := countRecords(t, dsn, "product"); got != defaultSeedProducts+5 {
		t.Errorf("seed --force: %d products, want %d", got, defaultSeedProducts+5)
	}
	if got := countRecords(t, dsn, "document"); got != defaultSeedDocuments+2 {
		t.Errorf("seed --force: %d documents, want %d", got, defaultSeedDocuments+2)
	}
}

// TestCLI_Output checks the JSON record form, money in and out, history, and that text from
// the database is printed without its control characters.
func TestCLI_Output(t *testing.T) {
	dsn := newSQLiteStore(t)
	p := mustCreate(t, dsn, "product", "sku=OUT-1", "name=Lamp", "price=29.99", "stock=3", "categories=lighting,office")
	if p.Kind != "product" || p.Version != 1 || p.UpdatedBy != "tester" || p.UpdatedAt == "" {
		t.Errorf("record header = %+v", p)
	}
	if p.Fields["price"] != "29.99" || p.Fields["stock"] != float64(3) {
		t.Errorf("price %#v stock %#v, want \"29.99\" and 3", p.Fields["price"], p.Fields["stock"])
	}
	if cats, ok := p.Fields["categories"].([]any); !ok || len(cats) != 2 {
		t.Errorf("categories %#v, want an array of two", p.Fields["categories"])
	}
	out := mustTandem(t, dsn, "get", "product", fmt.Sprint(p.ID))
	if !strings.Contains(out, "29.99") {
		t.Errorf("get prints no price 29.99:\n%s", out)
	}

	// The store refuses control characters, but another program may write the tables
	// directly: what it wrote must reach the terminal defused.
	d := mustCreate(t, dsn, "document", "title=Escapes", "body=line one")
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.Exec("UPDATE documents SET title = ?, body = ? WHERE id = ?",
		"\x1b]0;pwned\x07Escapes", "line one\n\x1b[31mred\x1b[0m\n", d.ID)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"get", "document", fmt.Sprint(d.ID)}, {"list", "documents"}} {
		out = mustTandem(t, dsn, args...)
		if strings.ContainsAny(out, "\x1b\x07") {
			t.Errorf("%s printed a raw control character:\n%q", strings.Join(args, " "), out)
		}
		if !strings.Contains(out, `\x1b]0;pwned`) {
			t.Errorf("%s does not show the escape visibly:\n%q", strings.Join(args, " "), out)
		}
	}

	mustTandem(t, dsn, "set", "product", fmt.Sprint(p.ID), "price=31.50", "--expect-version", "1")
	mustTandem(t, dsn, "adjust", "product", fmt.Sprint(p.ID), "stock", "-1")
	var h struct {
		Versions []struct {
			Version int64    `json:"version"`
			Fields  []string `json:"fields"`
		} `json:"versions"`
		Operations []json.RawMessage `json:"operations"`
	}
	if err := json.Unmarshal([]byte(mustTandem(t, dsn, "history", "product", fmt.Sprint(p.ID), "--json")), &h); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, v := range h.Versions {
		if v.Version == 2 && strings.Join(v.Fields, ",") == "price" {
			found = true
		}
	}
	if !found {
		t.Errorf("history has no version 2 changing price: %+v", h.Versions)
	}
	if got := mustTandem(t, dsn, "--version"); !strings.Contains(got, "schema version") {
		t.Errorf("--version = %q, want the schema version", got)
	}
}

// TestCLI_MergeFile checks that merge-file keeps git merge-file's conventions: the merged
// text on stdout with -p, exit 0 for a clean merge and the number of conflicts otherwise,
// global flags before the command ignored.
func TestCLI_MergeFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	base := write("base", "one\ntwo\nthree\nfour\nfive\n")
	mine := write("mine", "ONE\ntwo\nthree\nfour\nfive\n")
	clean := write("clean", "one\ntwo\nthree\nfour\nFIVE\n")
	clash := write("clash", "uno\ntwo\nthree\nfour\nfive\n")

	r := tandem(t, "", "--user", "x", "merge-file", "-p", mine, base, clean)
	if r.code != 0 || r.stdout != "ONE\ntwo\nthree\nfour\nFIVE\n" {
		t.Errorf("clean merge: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = tandem(t, "", "merge-file", "-p", "-L", "mine", "-L", "base", "-L", "theirs", mine, base, clash)
	if r.code != 1 || !strings.Contains(r.stdout, "<<<<<<< mine\nONE\n=======\nuno\n>>>>>>> theirs\n") {
		t.Errorf("one conflict: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stderr, "tandem: ") {
		t.Errorf("a conflict count is not an error message: %q", r.stderr)
	}
}
