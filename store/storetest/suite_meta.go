package storetest

import (
	"regexp"
	"testing"
)

// storeIDPattern is the form of every store id: 128 random bits as lowercase hex.
var storeIDPattern = regexp.MustCompile(`^[0-9a-f]{32}$`)

// testStoreID checks the store's identity: every store has a random id of a fixed form,
// read at open and stable for the store's life, and two stores never share it (so drafts and
// working copies of one store are never offered on another).
func testStoreID(t *testing.T, open Opener) {
	t.Run("OK", func(t *testing.T) {
		s := fresh(t, open)
		id := s.StoreID()
		if !storeIDPattern.MatchString(id) {
			t.Fatalf("store id %q is not 32 lowercase hex digits", id)
		}
		mustCreateProduct(t, s, "META-1")
		if again := s.StoreID(); again != id {
			t.Errorf("store id changed from %q to %q after a write", id, again)
		}
	})
	t.Run("Distinct", func(t *testing.T) {
		a, b := fresh(t, open), fresh(t, open)
		if a.StoreID() == b.StoreID() {
			t.Errorf("two fresh stores share the store id %q", a.StoreID())
		}
	})
}
