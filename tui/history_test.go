package tui

import (
	"context"
	"testing"

	"github.com/tandem-editor/tandem/store"
)

func TestHistory(t *testing.T) {
	s := newFakeStore(t)
	mustSeed(t, s, 1)
	ctx := actorCtx("bob")
	if _, err := s.UpdateRecord(ctx, store.KindProduct, 1, store.Update{BaseVersion: 1, Set: store.Values{"price": int64(1500),
		"description": "A fine product.\nSecond line, edited.\nThird line.\n"}}); err != nil {
		t.Fatal(err)
	}
	sys := store.WithActor(context.Background(), store.Actor{Name: "thumbnailer", Role: store.RoleSystem})
	if _, err := s.UpdateRecord(sys, store.KindProduct, 1, store.Update{BaseVersion: 2, Set: store.Values{"thumbnail": "thumbs/1.png"}}); err != nil {
		t.Fatal(err)
	}
	d := newDriver(t, s, "alice")
	d.key("h")
	d.waitFor("history of product 1")
	d.waitFor("v2")
	d.golden("history_versions")
	d.key("tab")
	d.waitFor("thumbnailer")
	d.golden("history_ops")
	d.key("esc")
	d.waitFor("[ products ]")
}
