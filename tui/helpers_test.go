package tui

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/memory"
)

// Helpers the screens' tests share: stores, records, leases, and driving the editor.

// actorCtx is a context that writes as the editor name.
func actorCtx(name string) context.Context {
	return store.WithActor(context.Background(), store.Actor{Name: name, Role: store.RoleEditor})
}

// mustRecord reads product id.
func mustRecord(t *testing.T, s store.Store, id int64) *store.Record {
	t.Helper()
	r, err := s.FindRecord(context.Background(), store.KindProduct, id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// openProduct opens product id (the cursor starts on product 1) in d's editor.
func openProduct(t *testing.T, d *driver, id int64, k string) {
	t.Helper()
	for i := int64(1); i < id; i++ {
		d.key("j")
	}
	d.key(k)
	d.waitFor("product " + itoa(id) + " · v")
}

// focusField tabs to the field with label.
func focusField(t *testing.T, d *driver, label string) {
	t.Helper()
	for range 20 {
		if strings.Contains(d.screen(), "▸ "+label) {
			return
		}
		d.key("tab")
	}
	t.Fatalf("field %s never got the focus:\n%s", label, d.screen())
}

// replaceField clears the focused one-line field and types v.
func replaceField(d *driver, v string) {
	d.key("ctrl+u")
	d.key("ctrl+k")
	d.typeText(v)
}

// conflictSetup opens product 1 as alice, then bob saves price (and whatever bobSet says)
// from his own terminal on the same store.
func conflictSetup(t *testing.T, mod ...func(*Options)) (*memory.DB, *driver, *driver) {
	t.Helper()
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	alice := newDriver(t, s, "alice", mod...)
	bob := newDriver(t, s, "bob")
	openProduct(t, alice, 1, "enter")
	openProduct(t, bob, 1, "enter")
	return s, alice, bob
}

func bobSaves(t *testing.T, bob *driver, field, value string) {
	t.Helper()
	focusField(t, bob, field)
	replaceField(bob, value)
	bob.key("ctrl+s")
	bob.waitFor("saved v")
}

// liveLeases returns the live editor leases on product id.
func liveLeases(t *testing.T, s *memory.DB, id int64) []store.Lease {
	t.Helper()
	ls, now, err := s.FindLeases(context.Background(), store.LeaseFilter{Kind: store.KindProduct, RecordID: id})
	if err != nil {
		t.Fatal(err)
	}
	var out []store.Lease
	for _, l := range ls {
		if l.Live(now) && l.Group == store.GroupEditor {
			out = append(out, l)
		}
	}
	return out
}

// safeBuffer is a bytes.Buffer safe for one writer and one reader.
type safeBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *safeBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *safeBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// quietFeed is a store whose change feed never delivers: what a TUI sees before the feed
// has told it anything.
type quietFeed struct{ store.Store }

func (q quietFeed) Subscribe(ctx context.Context, after int64) (<-chan store.Change, error) {
	ch := make(chan store.Change)
	go func() {
		<-ctx.Done()
		close(ch)
	}()
	return ch, nil
}

// mustLease gives who a lease on product id's editor group for ttl.
func mustLease(t *testing.T, s store.Store, who string, id int64, ttl time.Duration) *store.Lease {
	t.Helper()
	l, err := s.AcquireLease(actorCtx(who), store.LeaseRequest{Kind: store.KindProduct, RecordID: id,
		Group: store.GroupEditor, TTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	return l
}
