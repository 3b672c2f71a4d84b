package sample

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestProducts(t *testing.T) {
	got := Products(60, 0)
	if len(got) != 60 {
		t.Fatalf("len = %d, want 60", len(got))
	}
	if !reflect.DeepEqual(got, Products(60, 0)) {
		t.Error("Products is not deterministic")
	}
	if d := got[DemoIndex]; d.SKU != demo.SKU || d.PriceCents <= 0 || strings.Count(d.Description, "\n") < 2 {
		t.Errorf("product at DemoIndex = %+v, want the demo lamp with a price and a multi-line description", d)
	}
	skus := map[string]bool{}
	for _, p := range append(got, Products(60, 60)...) {
		if skus[p.SKU] {
			t.Errorf("SKU %s twice (a second batch must not collide)", p.SKU)
		}
		skus[p.SKU] = true
		if p.Name == "" || p.PriceCents <= 0 || !strings.Contains(p.Description, "\n") {
			t.Errorf("product %s lacks a name, price or multi-line description: %+v", p.SKU, p)
		}
		if !slices.IsSorted(p.Categories) || len(p.Categories) == 0 {
			t.Errorf("product %s categories %v: want sorted, not empty", p.SKU, p.Categories)
		}
		switch p.Availability {
		case "in_stock", "backorder", "discontinued":
		default:
			t.Errorf("product %s availability %q", p.SKU, p.Availability)
		}
	}
}

func TestDocuments(t *testing.T) {
	for _, n := range []int{0, 5, 15, 30} {
		docs := Documents(n, 0)
		if len(docs) != n {
			t.Fatalf("Documents(%d) gave %d", n, len(docs))
		}
		depth := make([]int, n)
		for i, d := range docs {
			if d.Parent >= i {
				t.Fatalf("Documents(%d)[%d] has parent %d, not an earlier document", n, i, d.Parent)
			}
			depth[i] = 1
			if d.Parent >= 0 {
				depth[i] = depth[d.Parent] + 1
			}
			if d.Title == "" || d.Body == "" {
				t.Errorf("document %d has no title or body", i)
			}
		}
		if n >= 15 && slices.Max(depth) != 3 {
			t.Errorf("Documents(%d) is %d levels deep, want 3", n, slices.Max(depth))
		}
	}
}
