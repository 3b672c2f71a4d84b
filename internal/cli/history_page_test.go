package cli

import (
	"fmt"
	"strings"
	"testing"
)

// TestHistory_PageCutSaysWhereNone: a product with one history version (its create) and
// more system writes than a page holds. The first page is cut at the oldest write it shows,
// so it holds no history version; it must not say "none" as if the record had none, but
// from which version on, with the next page's command.
func TestHistory_PageCutSaysWhereNone(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			p := mustCreate(t, dsn, "product", "sku=PAGE-1", "name=Paged", "stock=1")
			pid := fmt.Sprint(p.ID)
			for range 3 {
				mustTandem(t, dsn, "--as", "system", "adjust", "product", pid, "stock", "1")
			}
			out := mustTandem(t, dsn, "history", "product", pid, "--limit", "2")
			versions, _, _ := strings.Cut(out, "Operation log")
			if strings.Contains(versions, "  none\n") || !strings.Contains(versions, "none at v3 or later") {
				t.Errorf("the first page's versions say:\n%s\nwant them to say none at v3 or later, not none at all", out)
			}
			if !strings.Contains(out, "--before 3 --limit 2") {
				t.Errorf("the first page does not give the next page's command:\n%s", out)
			}
			if out := mustTandem(t, dsn, "history", "product", pid, "--before", "3", "--limit", "2"); !strings.Contains(out, "  v1 ") {
				t.Errorf("the next page lacks the create v1:\n%s", out)
			}
		})
	}
}

// TestHistory_SinceBelowZeroSaysZero: --since 0 is the default (every version), so --since -1
// must not be refused with "versions start at 1", which suggests --since 1 (it would hide v1).
func TestHistory_SinceBelowZeroSaysZero(t *testing.T) {
	dsn := newSQLiteStore(t)
	p := mustCreate(t, dsn, "product", "sku=SINCE-1", "name=Since")
	res := tandem(t, dsn, "history", "product", fmt.Sprint(p.ID), "--since", "-1")
	wantExit(t, "history --since -1", res, exitUsage)
	if strings.Contains(res.stderr, "start at 1") || !strings.Contains(res.stderr, "--since 0") {
		t.Errorf("history --since -1 says %q, want it to name --since 0 (every version)", res.stderr)
	}
}
