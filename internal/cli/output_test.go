package cli

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

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
