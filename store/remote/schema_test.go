package remote_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/remote"
	"github.com/tandem-editor/tandem/store/sqlite"
)

// A client that connects after another process applied a schema to the served store gets
// the new schema at the hello, not the one the server's store ran when it opened: else its
// writes of a new field are refused until something reloads the server's schema.
func TestServe_HelloSchemaIsTheStores(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "team.db")
	st, err := sqlite.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	other, err := sqlite.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	const stock = "      - {name: stock,"
	yaml := string(other.Registry().YAML())
	if !strings.Contains(yaml, stock) {
		t.Fatalf("no stock field in the stored schema:\n%s", yaml)
	}
	yaml = strings.Replace(yaml, stock, "      - {name: color, label: color, type: string, owner: editor, rule: scalar, group: editor, max_chars: 50}\n"+stock, 1)
	next, err := store.ParseRegistry("next", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.ApplySchema(ctx, next, store.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	c := served(t, st, remote.Options{Actor: &store.Actor{Name: "alice", Role: store.RoleEditor}})
	if _, err := c.Registry().Field(store.KindProduct, "color"); err != nil {
		t.Fatalf("the hello's schema (version %d) has no field color, applied by another process", c.Registry().Version())
	}
}
