package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
)

// ticks applies n one-second ticks (the presence refresh and poll run on them).
func (d *driver) ticks(n int) {
	for range n {
		d.apply(tickMsg(t0))
	}
	d.settle()
}

func presenceOn(t *testing.T, s store.Store, id int64) []string {
	t.Helper()
	ps, err := s.FindPresence(context.Background(), store.PresenceFilter{Kind: store.KindProduct, RecordID: id})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range ps {
		out = append(out, p.User)
	}
	return out
}

// TestPresence_ListAndEditor: an open editor is announced at once; the other terminal's list
// row and editor header say who is editing, before anyone saves; leaving the editor takes
// it away.
func TestPresence_ListAndEditor(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 2)
	alice := newDriver(t, s, "alice")
	bob := newDriver(t, s, "bob")
	openProduct(t, bob, 1, "enter")
	if got := presenceOn(t, s, 1); len(got) != 1 || got[0] != "bob" {
		t.Fatalf("presence on product 1 = %v, want bob as soon as his editor opened", got)
	}
	alice.ticks(presencePollTicks)
	row := lineWith(alice.screen(), "Product 1")
	if !strings.Contains(row, "free · bob editing") {
		t.Errorf("alice's row of product 1 = %q, want it to say bob is editing", row)
	}
	if strings.Contains(lineWith(alice.screen(), "Product 2"), "editing") {
		t.Errorf("product 2's row says someone is editing:\n%s", alice.screen())
	}
	// Alice opens it too: each editor names the other.
	openProduct(t, alice, 1, "enter")
	alice.waitFor("lock: free · saves check the version · bob is editing")
	bob.ticks(presencePollTicks)
	bob.waitFor("· alice is editing")
	// A presence is no lock: bob saves while alice is there.
	focusField(t, bob, "name")
	bob.typeText(" X")
	bob.key("ctrl+s")
	bob.waitFor("saved v2")

	// Bob leaves: gone from the store at once, and from alice's header at her next poll.
	bob.key("esc")
	bob.waitFor("[ products ]")
	if got := presenceOn(t, s, 1); len(got) != 1 || got[0] != "alice" {
		t.Fatalf("presence after bob left = %v, want only alice", got)
	}
	alice.ticks(presencePollTicks)
	alice.waitUntil("bob gone from alice's header", func() bool { return !strings.Contains(alice.screen(), "bob is editing") })
	bob.ticks(presencePollTicks)
	if row := lineWith(bob.screen(), "Product 1"); !strings.Contains(row, "alice editing") {
		t.Errorf("bob's row of product 1 = %q, want alice editing", row)
	}
}

// TestPresence_Expires: an editor that stops refreshing (its process was killed) drops out
// when its TTL passes on the database clock; one that keeps refreshing stays.
func TestPresence_Expires(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	alice := newDriver(t, s, "alice")
	// Bob's "killed" TUI: a presence nobody refreshes.
	if err := s.Announce(actorCtx("bob"), store.PresenceRequest{Kind: store.KindProduct, RecordID: 1, Session: "bob-dead",
		TTL: store.DefaultPresenceTTL}); err != nil {
		t.Fatal(err)
	}
	openProduct(t, alice, 1, "enter")
	alice.waitFor("bob is editing")
	s.Advance(store.DefaultPresenceTTL - time.Second)
	alice.ticks(presenceRefreshTicks) // alice refreshes hers on the way
	alice.waitFor("bob is editing")
	s.Advance(2 * time.Second)
	alice.ticks(presencePollTicks)
	alice.waitUntil("bob's presence expired", func() bool { return !strings.Contains(alice.screen(), "bob is editing") })
	if got := presenceOn(t, s, 1); len(got) != 1 || got[0] != "alice" {
		t.Errorf("presence = %v, want alice's refreshed one only", got)
	}
}

func lineWith(screen, s string) string {
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}
