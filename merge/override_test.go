package merge

import (
	"testing"

	"github.com/tandem-editor/tandem/store"
)

func TestRecords_Override(t *testing.T) {
	reg := store.DefaultRegistry()
	base := store.Values{"name": "Lamp", "price": int64(2999), "sku": "L-1"}
	mine := base.Clone()
	mine["sku"] = "L-2" // a conflict, which Override refuses
	theirs := base.Clone()
	theirs["price"] = int64(3499) // clean: theirs wins unless overridden
	theirs["sku"] = "L-3"
	r := Records(reg, store.KindProduct, base, mine, theirs)

	t.Run("OK", func(t *testing.T) {
		if err := r.Override("price", PickOurs); err != nil {
			t.Fatal(err)
		}
		if got, _ := r.Field("price").Value(); got != int64(2999) {
			t.Errorf("price after Override(mine) = %v, want 2999", got)
		}
		u, ok := r.Undo()
		if !ok || u.Field.Name != "price" {
			t.Fatalf("Undo = %v, %v, want the price step", u, ok)
		}
		if got, _ := r.Field("price").Value(); got != int64(3499) {
			t.Errorf("price after Undo = %v, want theirs 3499", got)
		}
	})
	t.Run("ErrNotClean", func(t *testing.T) {
		for _, name := range []string{"sku", "name"} {
			if err := r.Override(name, PickTheirs); store.ErrorCode(err) != store.EINVALID {
				t.Errorf("Override(%s) = %v, want EINVALID", name, err)
			}
		}
	})
}
