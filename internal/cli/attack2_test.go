package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/memory"
)

// servedRun runs a command line as a session of tandem serve would, as alice, on st.
func servedRun(t *testing.T, st store.Store, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx := store.WithActor(context.Background(), store.Actor{Name: "alice", Role: store.RoleEditor})
	var out, errb bytes.Buffer
	code = runServed(ctx, "/srv/tandem/team.db", st, args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// Over SSH the flags that would change who writes or which store are refused, but a
// command's own flag of the same name is not one of them: export's --fields (the columns
// to write) works as on a laptop, while the global --fields (a registry file on the
// server) stays refused.
func TestServed_CommandFlagNamedLikeGlobal(t *testing.T) {
	st := memory.New(store.Options{})
	defer st.Close()
	code, out, errs := servedRun(t, st, "export", "product", "--fields", "sku,name")
	if code != exitOK || !strings.HasPrefix(out, "kind,id,version,sku,name,updated_by") {
		t.Errorf("export --fields over SSH: exit %d, stdout %q, stderr %q; want the two columns", code, out, errs)
	}
	code, _, errs = servedRun(t, st, "list", "product", "--fields", "/etc/passwd")
	if code != exitUsage || !strings.Contains(errs, "--fields cannot be given over SSH") {
		t.Errorf("the global --fields over SSH: exit %d, stderr %q; want it refused", code, errs)
	}
}

// A command's help over SSH names the kinds of the server's store, not the server's
// TANDEM_DB (its database host and user) or a default file it does not serve.
func TestServed_HelpNamesNoServerDSN(t *testing.T) {
	t.Setenv("TANDEM_DB", "postgres://tandem:secret@db.internal.example/prod")
	st := memory.New(store.Options{})
	defer st.Close()
	for _, args := range [][]string{{"list", "--help"}, {"help", "get"}} {
		code, out, errs := servedRun(t, st, args...)
		if code != exitOK || !strings.Contains(out, "product") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errs)
		}
		if strings.Contains(out+errs, "db.internal") {
			t.Errorf("%v over SSH shows the server's TANDEM_DB: %s", args, out[max(0, strings.Index(out, "Kinds")):])
		}
		if i := strings.Index(out, "\nKinds in"); i < 0 || strings.Contains(out[i:], defaultDB) {
			t.Errorf("%v over SSH: the kinds line is missing or names %s: %q", args, defaultDB, out[max(0, i):])
		}
	}
}

// brokenFeed is a store whose change feed ends at once and which, from then on, says why.
type brokenFeed struct {
	store.Store
	ended bool
}

func (b *brokenFeed) Subscribe(ctx context.Context, after int64) (<-chan store.Change, error) {
	ch := make(chan store.Change)
	close(ch)
	b.ended = true
	return ch, nil
}

func (b *brokenFeed) LastChangeID(ctx context.Context) (int64, error) {
	if b.ended {
		return 0, store.Errorf(store.EUNAVAILABLE, "the connection to the store's server ended: EOF (tandem: your access to this server was removed)")
	}
	return b.Store.LastChangeID(ctx)
}

// A watch whose feed ends says why when the store can tell (a team server that ended the
// session), not only that it ended.
func TestWatch_FeedEndSaysWhy(t *testing.T) {
	st := &brokenFeed{Store: memory.New(store.Options{})}
	defer st.Close()
	code, _, errs := servedRun(t, st, "watch")
	if code == exitOK || !strings.Contains(errs, "your access to this server was removed") {
		t.Errorf("watch on a feed that ended: exit %d, stderr %q; want why", code, errs)
	}
}
