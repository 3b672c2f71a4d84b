package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
)

// TestCLI_SKUErrorNamesInvisibleCharacters: a sku that collides with one holding a zero-width
// space shows that character once, named (<U+200B>), never as an escape whose backslash the
// terminal-safe output doubles ("X\\u200b1"); a sku of invisible characters only names them.
func TestCLI_SKUErrorNamesInvisibleCharacters(t *testing.T) {
	dsn := newSQLiteStore(t)
	p := mustCreate(t, dsn, "product", "sku=X\u200b1", "name=Lamp")
	r := tandem(t, dsn, "create", "product", "sku=x1", "name=Other")
	wantExit(t, "create a lookalike sku", r, exitUsage, fmt.Sprintf(`(product %d has "X<U+200B>1";`, p.ID))
	if strings.Contains(r.stderr, `\`) {
		t.Errorf("the message shows an escape: %q", r.stderr)
	}
	r = tandem(t, dsn, "create", "product", "sku=\u200b\u00a0", "name=Other")
	wantExit(t, "create an invisible sku", r, exitUsage, `sku: "<U+200B><U+00A0>" has no visible characters`)
}

// TestCLI_ExportSearchHelpNamesTheSearchedFields: export --help names every field its
// --search looks in, as the registry marks them searched, and export --search finds a
// product by its description.
func TestCLI_ExportSearchHelpNamesTheSearchedFields(t *testing.T) {
	dsn := newSQLiteStore(t)
	help := mustTandem(t, dsn, "export", "--help")
	reg := store.DefaultRegistry()
	for _, kind := range store.DefaultRegistry().Kinds() {
		for _, f := range reg.Fields(kind) {
			if f.Search && !strings.Contains(help, f.Name) {
				t.Errorf("export --help does not name the searched %s field %s", kind, f.Name)
			}
		}
	}
	mustCreate(t, dsn, "product", "sku=D-1", "name=Lamp", "description=brass hinge")
	if out := mustTandem(t, dsn, "export", "products", "--search", "hinge"); !strings.Contains(out, "D-1") {
		t.Errorf("export --search by description found:\n%s", out)
	}
}

// TestCLI_StatusHeldBackAfterLocalDeleteAndRestore: a product deleted and restored in a
// working copy is to be read again from the source; status says the next sync reads it,
// and the next sync does: in sync, with nothing held back after it.
func TestCLI_StatusHeldBackAfterLocalDeleteAndRestore(t *testing.T) {
	src := seededStore(t)
	file := filepath.Join(t.TempDir(), "copy.db")
	mustTandem(t, src, "clone", src, file)
	mustTandem(t, file, "delete", "product", "5", "--expect-version", "1")
	mustTandem(t, file, "restore", "product", "5")
	out := mustTandem(t, file, "status")
	if !strings.Contains(out, "held back: the source's product 5 is read again at the next sync, which takes it or says what still holds it") {
		t.Errorf("status after a local delete and restore:\n%s", out)
	}
	if out := mustTandem(t, file, "sync"); !strings.Contains(out, "in sync") || strings.Contains(out, "held back") {
		t.Errorf("sync:\n%s", out)
	}
	if out := mustTandem(t, file, "status"); strings.Contains(out, "held back") {
		t.Errorf("status after the sync still holds a record back:\n%s", out)
	}
}
