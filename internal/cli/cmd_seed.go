package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/internal/sample"
	"github.com/tandem-editor/tandem/store"
)

// Default and largest sizes of the sample data. Seed builds its records in memory (about
// 400 bytes a product) and writes each in its own transaction: 100,000 products is the size
// the TUI's list is benchmarked at; more is not sample data, and a count like 99999999999
// must be refused before anything is allocated.
const (
	defaultSeedProducts  = 60
	defaultSeedDocuments = 15
	maxSeedProducts      = 100_000
	maxSeedDocuments     = 10_000
)

func newSeedCmd(a *app) *cobra.Command {
	var (
		products, documents int
		force, asJSON       bool
	)
	cmd := &cobra.Command{
		Use:   "seed",
		Short: "Fill the store with sample products and documents",
		Long: `Seed fills the store with sample data: a product catalogue (60 products by default,
with names, SKUs, categories, prices, stock and availability; product 42 is the brass
desk lamp of the two-terminal demo, docs/demo.md) and a small team handbook of documents
three levels deep. The data is the same on every run.

Seed creates the store when --db names a SQLite file that does not exist (mode 0600),
filled in the same step: it appears complete or not at all, and of several seeds of one
new file exactly one fills it. Seed refuses a store that already holds records (exit 2),
so it never mixes sample data into real data by accident; --force adds the sample data
anyway (nothing is deleted, SKUs are chosen so they do not collide).`,
		Example: `  tandem seed
  tandem --db team.db seed --products 200 --documents 40
  tandem seed --force`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if products < 0 || documents < 0 {
				return usagef("--products and --documents cannot be negative")
			}
			if products > maxSeedProducts {
				return usagef("--products %d is over the maximum of %d", products, maxSeedProducts)
			}
			if documents > maxSeedDocuments {
				return usagef("--documents %d is over the maximum of %d", documents, maxSeedDocuments)
			}
			ctx, err := a.actor(cmd.Context())
			if err != nil {
				return err
			}
			// A SQLite file that does not exist is created already filled, in one step.
			filled, fill := sampleFill(products, documents)
			st, created, err := a.createStore(ctx, fill)
			if err != nil {
				return err
			}
			if created {
				fmt.Fprintf(a.stderr, "tandem: created %s\n", safe.Line(a.dsn))
				return a.saySeeded(asJSON, *filled)
			}
			if reg := st.Registry(); !reg.Has(store.KindProduct) || !reg.Has(store.KindDocument) {
				return usagef("seed fills products and documents, the sample schema's kinds; this store has %s", kindList(reg))
			}
			np, err := st.CountRecords(ctx, store.KindProduct)
			if err != nil {
				return err
			}
			nd, err := st.CountRecords(ctx, store.KindDocument)
			if err != nil {
				return err
			}
			if (np > 0 || nd > 0) && !force {
				return usagef("the store already holds %d products and %d documents; seed fills only an empty store (use --force to add sample data anyway)", np, nd)
			}
			what, err := seedStore(ctx, st, products, documents)
			if err != nil {
				return err
			}
			return a.saySeeded(asJSON, what)
		},
	}
	cmd.Flags().IntVar(&products, "products", defaultSeedProducts, fmt.Sprintf("how many products to add (at most %d)", maxSeedProducts))
	cmd.Flags().IntVar(&documents, "documents", defaultSeedDocuments, fmt.Sprintf("how many documents to add (at most %d)", maxSeedDocuments))
	cmd.Flags().BoolVar(&force, "force", false, "add sample data to a store that is not empty")
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"seeded": "what was added"}`)
	return cmd
}

// sampleFill returns a fill for createStore that adds the sample data with seedStore, and
// where it will say what it added.
func sampleFill(products, documents int) (*string, func(context.Context, store.Store) error) {
	what := new(string)
	return what, func(ctx context.Context, st store.Store) error {
		w, err := seedStore(ctx, st, products, documents)
		*what = w
		return err
	}
}

// seedStore adds sample products and documents to st and says what it added. On a store
// that already has products, new SKUs continue after the existing count and skip any SKU in
// use, so nothing collides.
func seedStore(ctx context.Context, st store.Store, products, documents int) (string, error) {
	existing, err := st.FindRecords(ctx, store.Filter{Kind: store.KindProduct})
	if err != nil {
		return "", fmt.Errorf("read products: %w", err)
	}
	used := make(map[string]bool, len(existing))
	for _, r := range existing {
		if s, ok := r.Fields["sku"].(string); ok {
			used[s] = true
		}
	}
	for _, p := range sample.Products(products, len(existing)) {
		sku := p.SKU
		for n := 2; used[sku]; n++ {
			sku = fmt.Sprintf("%s-%d", p.SKU, n)
		}
		used[sku] = true
		_, err := st.CreateRecord(ctx, store.KindProduct, store.Values{
			"sku":          sku,
			"name":         p.Name,
			"description":  p.Description,
			"categories":   store.NormalizeSet(p.Categories),
			"price":        p.PriceCents,
			"stock":        p.Stock,
			"availability": p.Availability,
		})
		if err != nil {
			return "", fmt.Errorf("create sample product %s: %w", sku, err)
		}
	}
	nd, err := st.CountRecords(ctx, store.KindDocument)
	if err != nil {
		return "", fmt.Errorf("count documents: %w", err)
	}
	docs := sample.Documents(documents, nd)
	ids := make([]int64, len(docs))
	for i, d := range docs {
		vals := store.Values{"title": d.Title, "body": d.Body, "tags": store.NormalizeSet(d.Tags)}
		if d.Parent >= 0 {
			vals["parent_id"] = ids[d.Parent]
		}
		r, err := st.CreateRecord(ctx, store.KindDocument, vals)
		if err != nil {
			return "", fmt.Errorf("create sample document %q: %w", d.Title, err)
		}
		ids[i] = r.ID
	}
	return fmt.Sprintf("%d products and %d documents", products, len(docs)), nil
}

// saySeeded prints what seed added.
func (a *app) saySeeded(asJSON bool, what string) error {
	if asJSON {
		return writeJSON(a.stdout, struct {
			Seeded string `json:"seeded"`
		}{what})
	}
	_, err := fmt.Fprintf(a.stdout, "seeded %s\n", what)
	return err
}
