package cli

import (
	"fmt"
	"strings"
	"testing"
)

// TestAdjust_ZeroSaysWhy: an adjust by 0 writes nothing and says that adding 0 changes
// nothing, not that the record "already holds that", which is set's wording for equal values.
func TestAdjust_ZeroSaysWhy(t *testing.T) {
	dsn := newSQLiteStore(t)
	p := mustCreate(t, dsn, "product", "sku=ZERO-1", "name=Zero", "stock=4")
	out := mustTandem(t, dsn, "adjust", "product", fmt.Sprint(p.ID), "stock", "0")
	if !strings.HasPrefix(out, "no change: ") || strings.Contains(out, "already holds") || !strings.Contains(out, "adding 0 to stock") {
		t.Errorf("adjust by 0 says %q, want no change: adding 0 to stock …", out)
	}
	if out := mustTandem(t, dsn, "set", "product", fmt.Sprint(p.ID), "name=Zero", "--expect-version", "1"); !strings.Contains(out, "already holds that (name)") {
		t.Errorf("set of the current value says %q, want it to already hold that", out)
	}
}
