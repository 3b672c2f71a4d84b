// Package sample generates tandem's sample data: a product catalogue and a small document
// tree (a team handbook) with real prose. The data is deterministic: the same arguments give
// the same records, so the two-terminal demo (docs/demo.md, product 42) and tests can rely on it.
package sample

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// Product is one sample product, in the units tandem stores: price in integer cents.
type Product struct {
	SKU          string
	Name         string
	Description  string
	Categories   []string // sorted, no duplicates
	PriceCents   int64
	Stock        int64
	Availability string // in_stock, backorder or discontinued
}

// DemoIndex is the index in Products(n, 0) of the two-terminal demo's record (docs/demo.md): on a
// fresh store it becomes product 42.
const DemoIndex = 41

// demo is the two-terminal demo record: a price to change and a description of several lines.
var demo = Product{
	SKU:  "LGT-1042",
	Name: "Brass desk lamp with linen shade",
	Description: `A heavy brass base, a hinged arm and a natural linen shade that softens the light.
The arm locks in any position with a knurled brass knob; no springs to wear out.

- Bulb: E27, up to 40 W (LED recommended), not included
- Cable: 1.8 m fabric cable with an inline switch
- Height: 42 cm at rest, 61 cm fully raised
- Care: wipe the brass with a dry cloth; it darkens slowly, as brass should`,
	Categories:   []string{"lighting", "office"},
	PriceCents:   8900,
	Stock:        14,
	Availability: "in_stock",
}

type family struct {
	category  string   // first category; also the SKU prefix's source
	prefix    string   // SKU prefix
	items     []string // base names
	materials []string // what the family's items are made of
	extra     []string // further categories a product may carry
	minCents  int64
	maxCents  int64
	use       string // a sentence on how the item is used
}

var families = []family{
	{"lighting", "LGT", []string{"desk lamp", "floor lamp", "pendant light", "wall sconce", "reading light", "table lamp"},
		[]string{"brass", "oak", "ash", "steel", "ceramic"},
		[]string{"office", "living"}, 2900, 24900, "Gives a warm, even light for reading and work."},
	{"kitchen", "KIT", []string{"chef's knife", "cutting board", "saucepan", "serving bowl", "pepper mill", "bread bin", "teapot"},
		[]string{"olive wood", "stainless steel", "enamel", "stoneware", "beech"},
		[]string{"gifts", "dining"}, 1200, 14900, "Made for daily use and easy to clean."},
	{"office", "OFF", []string{"notebook", "desk organiser", "monitor stand", "letter tray", "pen tray", "desk mat"},
		[]string{"walnut", "oak", "leather", "recycled paper", "aluminium"},
		[]string{"gifts", "stationery"}, 600, 12900, "Keeps a desk tidy without getting in the way."},
	{"outdoor", "OUT", []string{"folding chair", "garden bench", "planter", "lantern", "plant stand", "side table"},
		[]string{"teak", "acacia", "galvanised steel", "zinc", "cotton canvas"},
		[]string{"garden", "living"}, 1500, 32900, "Weatherproof and happy to stay outside all summer."},
	{"textiles", "TEX", []string{"throw", "cushion cover", "tea towel set", "bath towel", "table runner", "duvet cover"},
		[]string{"linen", "wool", "organic cotton", "waffle cotton", "alpaca"},
		[]string{"living", "gifts"}, 900, 11900, "Washes at 40 °C and softens with every wash."},
	{"storage", "STO", []string{"storage box", "shelf", "coat rack", "shoe rack", "basket", "wall hook set"},
		[]string{"birch plywood", "seagrass", "oak", "powder-coated steel", "felt"},
		[]string{"living", "hallway"}, 1400, 18900, "Holds more than it looks and assembles in minutes."},
}

// series are the product lines names start with, as in a real catalogue.
var series = []string{"Halden", "Mora", "Linde", "Aster", "Corvo", "Tessa", "Brio", "Nordby", "Solvik", "Umbra"}

var finishes = []string{"natural", "matt black", "sage green", "warm white", "slate grey", "terracotta", "oiled", "brushed"}

var origins = []string{"Portugal", "Lithuania", "Denmark", "northern Italy", "Poland", "the Black Forest", "Yorkshire", "Catalonia"}

// care is the care advice per category.
var care = map[string][]string{
	"lighting": {"dust with a dry cloth; unplug before cleaning", "wipe the shade with a lint roller"},
	"kitchen":  {"hand wash and dry at once", "dishwasher safe", "oil the wood now and then with food-safe oil"},
	"office":   {"wipe clean with a damp cloth", "keep out of direct sunlight"},
	"outdoor":  {"oil once a year", "cover or bring in over winter"},
	"textiles": {"machine wash at 40 °C, do not tumble dry", "hand wash cold, dry flat"},
	"storage":  {"wipe clean with a damp cloth", "tighten the screws after the first month"},
}

// Products returns n sample products, deterministic for n and start. start offsets the SKU
// numbers and the random sequence, so a second batch (tandem seed --force) gets new SKUs.
// With start 0 and n > DemoIndex, the product at DemoIndex is the demo lamp (product 42).
func Products(n, start int) []Product {
	r := rand.New(rand.NewPCG(0x7a4d3e, uint64(start)))
	out := make([]Product, 0, n)
	for i := range n {
		seq := start + i
		if seq == DemoIndex {
			p := demo
			p.Categories = slices.Clone(demo.Categories)
			out = append(out, p)
			continue
		}
		fam := families[seq%len(families)]
		item := fam.items[r.IntN(len(fam.items))]
		mat := fam.materials[r.IntN(len(fam.materials))]
		fin := finishes[r.IntN(len(finishes))]
		cats := []string{fam.category}
		if r.IntN(3) > 0 {
			cats = append(cats, fam.extra[r.IntN(len(fam.extra))])
		}
		slices.Sort(cats)
		cats = slices.Compact(cats)
		// Prices end in .90 or .00, like real price lists.
		price := fam.minCents + r.Int64N(fam.maxCents-fam.minCents)
		price = price/100*100 + []int64{0, 90, 90, 50}[r.IntN(4)]
		stock := int64(r.IntN(120))
		avail := "in_stock"
		switch {
		case r.IntN(12) == 0:
			avail, stock = "discontinued", 0
		case stock < 8:
			avail = "backorder"
		}
		name := fmt.Sprintf("%s %s %s, %s", series[r.IntN(len(series))], mat, item, fin)
		desc := fmt.Sprintf("%s\nThis %s %s is made in %s.\n\n- Material: %s\n- Finish: %s\n- Care: %s",
			fam.use, mat, item, origins[r.IntN(len(origins))], mat, fin, care[fam.category][r.IntN(len(care[fam.category]))])
		out = append(out, Product{
			SKU:          fmt.Sprintf("%s-%04d", fam.prefix, 1001+seq),
			Name:         name,
			Description:  desc,
			Categories:   cats,
			PriceCents:   price,
			Stock:        stock,
			Availability: avail,
		})
	}
	return out
}
