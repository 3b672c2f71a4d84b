package store_test

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tandem-editor/tandem/store"
)

func TestSKUKey(t *testing.T) {
	same := []string{"ABC-1", "abc-1", " ABC-1\t", "ABC-1\u00a0", "\u202fABC-1", "\u2007ABC-1", "ABC\u200b-1", "A\u200cBC-1",
		"A\u200dBC-1", "ABC-\u20601", "\ufeffABC-1", "ABC\u00ad-1", "\u200eABC-1", "ＡＢＣ-1", "ａｂｃ－１", "\u3000abc-1\u3000"}
	want := store.SKUKey("ABC-1")
	if want != "abc-1" {
		t.Fatalf("SKUKey(ABC-1) = %q, want abc-1", want)
	}
	for _, s := range same {
		if got := store.SKUKey(s); got != want {
			t.Errorf("SKUKey(%+q) = %+q, want %q", s, got, want)
		}
	}
	// Full case folding: ß is ss, the Kelvin sign is k; the final sigma is a sigma.
	for a, b := range map[string]string{"STRASSE-1": "straße-1", "\u212a-7": "k-7", "ΣΟΦΟΣ": "σοφος"} {
		if store.SKUKey(a) != store.SKUKey(b) {
			t.Errorf("SKUKey(%q) = %q, SKUKey(%q) = %q, want equal", a, store.SKUKey(a), b, store.SKUKey(b))
		}
	}
	// Inner spaces and real differences stay.
	for _, other := range []string{"ABC 1", "ABC-10", "ABC-I", "AB-C1"} {
		if store.SKUKey(other) == want {
			t.Errorf("SKUKey(%q) = %q, the key of ABC-1 too", other, want)
		}
	}
	if err := store.CheckUniqueValue("sku", "\u200b\u00a0"); store.ErrorCode(err) != store.EINVALID ||
		!strings.Contains(err.Error(), `"<U+200B><U+00A0>" has no visible characters`) {
		t.Errorf("CheckSKU of invisible characters only = %v, want EINVALID naming them", err)
	}
}

func TestDuplicateSKUError(t *testing.T) {
	if got, want := store.DuplicateKeyError(store.KindProduct, "sku", "DUP", 3, "DUP").Error(), "sku DUP already exists (product 3)"; got != want {
		t.Errorf("same sku: %q, want %q", got, want)
	}
	got := store.DuplicateKeyError(store.KindProduct, "sku", "abc\u200b", 3, "ABC").Error()
	if !strings.Contains(got, `sku "abc<U+200B>" already exists (product 3 has ABC;`) {
		t.Errorf("lookalike sku: %q does not show the invisible character and the other sku", got)
	}
}

func TestCheckAdd(t *testing.T) {
	reg := store.DefaultRegistry()
	stock, _ := reg.Field(store.KindProduct, "stock")
	price, _ := reg.Field(store.KindProduct, "price")
	for _, tc := range []struct {
		f          *store.Field
		cur, delta int64
		want       int64
		err        string
	}{
		{stock, 5, -10, -5, ""},
		{stock, math.MaxInt64 - 1, 1, math.MaxInt64, ""},
		{stock, math.MaxInt64, 1, 0, "product.stock: 9223372036854775807 + 1 is out of range"},
		{stock, math.MinInt64, -1, 0, "product.stock: -9223372036854775808 - 1 is out of range"},
		{stock, -1, math.MinInt64, 0, "- 9223372036854775808 is out of range"},
		{stock, 0, math.MinInt64, math.MinInt64, ""},
		{price, 2999, -2999, 0, ""},
		{price, 2999, -3000, 0, "product.price: 29.99 - 30.00 would be -0.01, and an amount of money cannot be negative"},
		{price, math.MaxInt64, 1, 0, "product.price: 92233720368547758.07 + 0.01 is out of range"},
	} {
		got, err := store.CheckAdd(store.KindProduct, tc.f, tc.cur, tc.delta)
		switch {
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("%s %d + %d = %d, %v; want %d", tc.f.Name, tc.cur, tc.delta, got, err, tc.want)
		case tc.err != "" && (store.ErrorCode(err) != store.EINVALID || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s %d + %d: error %v, want EINVALID containing %q", tc.f.Name, tc.cur, tc.delta, err, tc.err)
		}
	}
}

func TestPlanUpdate(t *testing.T) {
	reg := store.DefaultRegistry()
	cur := &store.Record{Kind: store.KindProduct, ID: 1, Version: 3, Fields: store.Values{
		"sku": "A-1", "name": "n", "price": int64(100), "stock": int64(7), "categories": []string{"a", "b"},
		"last_sync_at": nil,
	}}
	for _, tc := range []struct {
		name      string
		u         store.Update
		unchanged bool
		stale     bool
		fields    []string
		skuKey    string
	}{
		{"all equal", store.Update{BaseVersion: 3, Set: store.Values{"name": "n", "categories": []string{"a", "b"}}}, true, false, nil, ""},
		{"zero delta", store.Update{Add: map[string]int64{"stock": 0}}, true, false, nil, ""},
		{"stale but equal", store.Update{BaseVersion: 1, Set: store.Values{"price": int64(100)}}, false, true, nil, ""},
		{"stale with a change", store.Update{BaseVersion: 1, Set: store.Values{"price": int64(101)}}, false, true, nil, ""},
		{"relative ignores the base", store.Update{BaseVersion: 1, Add: map[string]int64{"stock": -1}}, false, false, []string{"stock"}, ""},
		{"equal fields dropped", store.Update{BaseVersion: 3, Set: store.Values{"name": "n", "price": int64(1)}, Add: map[string]int64{"stock": 0}}, false, false, []string{"price"}, ""},
		{"nil time equal", store.Update{BaseVersion: 3, Set: store.Values{"last_sync_at": nil}}, true, false, nil, ""},
		{"time set", store.Update{BaseVersion: 3, Set: store.Values{"last_sync_at": time.Unix(5, 0).UTC()}}, false, false, []string{"last_sync_at"}, ""},
		{"sku", store.Update{BaseVersion: 3, Set: store.Values{"sku": " a-2\u200b"}}, false, false, []string{"sku"}, "a-2"},
	} {
		p, err := reg.PlanUpdate(cur, tc.u)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if p.Unchanged != tc.unchanged || p.Stale != tc.stale || (!p.Unchanged && !p.Stale && !slices.Equal(p.FieldNames(), tc.fields)) || p.Keys["sku"] != tc.skuKey {
			t.Errorf("%s: plan = unchanged %v stale %v fields %v sku key %q; want %v %v %v %q",
				tc.name, p.Unchanged, p.Stale, p.FieldNames(), p.Keys["sku"], tc.unchanged, tc.stale, tc.fields, tc.skuKey)
		}
	}
	_, err := reg.PlanUpdate(cur, store.Update{Add: map[string]int64{"stock": math.MaxInt64}})
	if store.ErrorCode(err) != store.EINVALID {
		t.Errorf("overflowing add = %v, want EINVALID", err)
	}
}

func TestLeaseError_UnknownToken(t *testing.T) {
	err := store.UnknownTokenError(store.KindProduct, 42, time.Now())
	if got, want := err.Error(), "the lease token given for product 42 is not valid: this store never granted it"; got != want {
		t.Errorf("error = %q, want %q", got, want)
	}
	if store.ErrorCode(err) != store.ELEASE {
		t.Errorf("code = %q, want %q", store.ErrorCode(err), store.ELEASE)
	}
}
