package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
)

func mustAnnounce(t *testing.T, s store.Store, a store.Actor, kind store.Kind, id int64, session string, ttl time.Duration) {
	t.Helper()
	if err := s.Announce(actx(t, a), store.PresenceRequest{Kind: kind, RecordID: id, Session: session, TTL: ttl}); err != nil {
		t.Fatalf("%s announces %s %d: %v", a.Name, kind, id, err)
	}
}

func mustPresence(t *testing.T, s store.Store, f store.PresenceFilter) []store.Presence {
	t.Helper()
	ps, err := s.FindPresence(t.Context(), f)
	if err != nil {
		t.Fatalf("find presence %+v: %v", f, err)
	}
	return ps
}

func presentUsers(ps []store.Presence) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.User+"@"+p.Session)
	}
	return out
}

func testPresence(t *testing.T, open Opener) {
	waitsBeside(t)
	t.Run("OK", func(t *testing.T) {
		s := fresh(t, open)
		p1 := mustCreateProduct(t, s, "PRE-1")
		p2 := mustCreateProduct(t, s, "PRE-2")
		from := mustLastChangeID(t, s)
		mustAnnounce(t, s, actBob, store.KindProduct, p1.ID, "s-bob", time.Minute)
		ps := mustPresence(t, s, store.PresenceFilter{Kind: store.KindProduct})
		if len(ps) != 1 || ps[0].User != "bob" || ps[0].RecordID != p1.ID || ps[0].Session != "s-bob" || !ps[0].ExpiresAt.After(ps[0].Since) {
			t.Fatalf("presence = %+v, want bob on product %d", ps, p1.ID)
		}
		since := ps[0].Since
		if got := mustPresence(t, s, store.PresenceFilter{Kind: store.KindProduct, RecordID: p2.ID}); len(got) != 0 {
			t.Errorf("product %d's presence = %+v, want none", p2.ID, got)
		}
		if got := mustPresence(t, s, store.PresenceFilter{Kind: store.KindDocument}); len(got) != 0 {
			t.Errorf("documents' presence = %+v, want none", got)
		}
		// A second person, from two terminals: one row per session.
		time.Sleep(5 * time.Millisecond)
		mustAnnounce(t, s, actAlice, store.KindProduct, p1.ID, "s-alice-1", time.Minute)
		mustAnnounce(t, s, actAlice, store.KindProduct, p1.ID, "s-alice-2", time.Minute)
		// A refresh keeps since.
		mustAnnounce(t, s, actBob, store.KindProduct, p1.ID, "s-bob", time.Minute)
		ps = mustPresence(t, s, store.PresenceFilter{Kind: store.KindProduct, RecordID: p1.ID})
		if got := presentUsers(ps); len(got) != 3 || got[0] != "bob@s-bob" {
			t.Fatalf("presence = %v, want bob first (oldest), then alice's two sessions", got)
		}
		if !ps[0].Since.Equal(since) {
			t.Errorf("refresh moved since from %v to %v", since, ps[0].Since)
		}
		// A session moves to another record: it leaves the first.
		mustAnnounce(t, s, actBob, store.KindProduct, p2.ID, "s-bob", time.Minute)
		if got := presentUsers(mustPresence(t, s, store.PresenceFilter{Kind: store.KindProduct, RecordID: p2.ID})); len(got) != 1 || got[0] != "bob@s-bob" {
			t.Errorf("product %d's presence = %v, want bob", p2.ID, got)
		}
		if got := mustPresence(t, s, store.PresenceFilter{Kind: store.KindProduct, RecordID: p1.ID}); len(got) != 2 {
			t.Errorf("product %d's presence = %v, want alice's two sessions", p1.ID, presentUsers(got))
		}
		if err := s.Leave(actx(t, actAlice), "s-alice-1"); err != nil {
			t.Fatal(err)
		}
		if err := s.Leave(actx(t, actAlice), "s-never"); err != nil {
			t.Errorf("leaving an unknown session: %v, want nil", err)
		}
		if got := presentUsers(mustPresence(t, s, store.PresenceFilter{Kind: store.KindProduct, RecordID: p1.ID})); len(got) != 1 || got[0] != "alice@s-alice-2" {
			t.Errorf("after leave = %v, want alice@s-alice-2", got)
		}
		// Presence is not a write of a record: the change log did not move.
		if cs := mustChanges(t, s, from); len(cs) != 0 {
			t.Errorf("presence wrote changes %+v", cs)
		}
	})
	t.Run("OthersSession", func(t *testing.T) {
		// Session ids are listed to everyone (FindPresence), so a session belongs to the
		// user who announced it: another user's Leave or Announce of it changes nothing.
		s := fresh(t, open)
		p1 := mustCreateProduct(t, s, "PRE-O1")
		p2 := mustCreateProduct(t, s, "PRE-O2")
		mustAnnounce(t, s, actBob, store.KindProduct, p1.ID, "s-bob", time.Minute)
		if err := s.Leave(actx(t, actAlice), "s-bob"); err != nil {
			t.Fatalf("alice leaves bob's session: %v, want nil (nothing to leave)", err)
		}
		mustAnnounce(t, s, actAlice, store.KindProduct, p2.ID, "s-bob", time.Minute)
		if got := presentUsers(mustPresence(t, s, store.PresenceFilter{Kind: store.KindProduct})); len(got) != 1 || got[0] != "bob@s-bob" {
			t.Fatalf("presence = %v after alice's Leave and Announce of bob's session, want bob's alone", got)
		}
		if ps := mustPresence(t, s, store.PresenceFilter{Kind: store.KindProduct, RecordID: p1.ID}); len(ps) != 1 {
			t.Fatalf("bob's session moved off product %d: %v", p1.ID, presentUsers(ps))
		}
		if err := s.Leave(actx(t, actBob), "s-bob"); err != nil {
			t.Fatal(err)
		}
		if got := mustPresence(t, s, store.PresenceFilter{Kind: store.KindProduct}); len(got) != 0 {
			t.Fatalf("presence = %v after bob left, want none", presentUsers(got))
		}
	})
	t.Run("Expires", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "PRE-1")
		mustAnnounce(t, s, actBob, store.KindProduct, p.ID, "s-bob", time.Second)
		mustAnnounce(t, s, actAlice, store.KindProduct, p.ID, "s-alice", time.Minute)
		waitPast(time.Second)
		if got := presentUsers(mustPresence(t, s, store.PresenceFilter{Kind: store.KindProduct})); len(got) != 1 || got[0] != "alice@s-alice" {
			t.Errorf("after bob's TTL = %v, want only alice", got)
		}
		// A refresh after expiry brings it back.
		mustAnnounce(t, s, actBob, store.KindProduct, p.ID, "s-bob", time.Minute)
		if got := mustPresence(t, s, store.PresenceFilter{Kind: store.KindProduct}); len(got) != 2 {
			t.Errorf("after bob's refresh = %v, want two", presentUsers(got))
		}
	})
	t.Run("NeverBlocks", func(t *testing.T) {
		s := fresh(t, open)
		p := mustCreateProduct(t, s, "PRE-1")
		mustAnnounce(t, s, actBob, store.KindProduct, p.ID, "s-bob", time.Minute)
		mustSave(t, s, actx(t, actAlice), store.KindProduct, p.ID, store.Update{BaseVersion: 1, Set: store.Values{"name": "Alice's"}})
		l := mustAcquire(t, s, actAlice, store.KindProduct, p.ID, store.GroupEditor, time.Minute)
		mustDelete(t, s, actAlice, store.KindProduct, p.ID, store.Delete{ExpectVersion: 2, LeaseToken: l.Token})
		// Presence on a record that is gone is harmless, and goes with its TTL.
		mustAnnounce(t, s, actBob, store.KindProduct, p.ID, "s-bob", time.Minute)
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		s := fresh(t, open)
		for _, r := range []store.PresenceRequest{
			{Kind: "widget", RecordID: 1, Session: "s", TTL: time.Minute},
			{Kind: store.KindProduct, RecordID: 0, Session: "s", TTL: time.Minute},
			{Kind: store.KindProduct, RecordID: 1, Session: "", TTL: time.Minute},
			{Kind: store.KindProduct, RecordID: 1, Session: "s", TTL: 0},
			{Kind: store.KindProduct, RecordID: 1, Session: "s", TTL: time.Hour},
		} {
			requireCode(t, s.Announce(actx(t, actBob), r), store.EINVALID)
		}
		requireCode(t, s.Announce(context.Background(), store.PresenceRequest{Kind: store.KindProduct, RecordID: 1, Session: "s", TTL: time.Minute}), store.EINVALID)
		_, err := s.FindPresence(t.Context(), store.PresenceFilter{Kind: "widget"})
		requireCode(t, err, store.EINVALID)
	})
}
