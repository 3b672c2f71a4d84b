package cli

import (
	"encoding/json"
	"fmt"
	"testing"
)

// TestCLI_SKUsComparedNormalised: SKUs that differ only by case, surrounding spaces, width,
// non-breaking or zero-width characters are one sku, on create and on set.
func TestCLI_SKUsComparedNormalised(t *testing.T) {
	besideOthers(t)
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			p := mustCreate(t, dsn, "product", "sku=LAMP-7", "name=Lamp")
			for _, sku := range []string{"lamp-7", " LAMP-7 ", "LAMP-7\u00a0", "LAMP\u200b-7", "\ufeffLamp-7", "ＬＡＭＰ-7"} {
				r := tandem(t, dsn, "create", "product", "sku="+sku, "name=Copy")
				wantExit(t, fmt.Sprintf("create sku %+q", sku), r, exitUsage, fmt.Sprintf("already exists (product %d has LAMP-7", p.ID))
			}
			q := mustCreate(t, dsn, "product", "sku=LAMP-8", "name=Other lamp")
			r := tandem(t, dsn, "set", "product", fmt.Sprint(q.ID), "sku=lamp-7\u200d", "--expect-version", "1")
			wantExit(t, "set a lookalike sku", r, exitUsage, "already exists")
			var list []record
			if err := json.Unmarshal([]byte(mustTandem(t, dsn, "list", "products", "--json")), &list); err != nil {
				t.Fatal(err)
			}
			if len(list) != 2 {
				t.Errorf("%d products, want 2", len(list))
			}
		})
	}
}
