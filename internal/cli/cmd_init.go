package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/store"
)

func newInitCmd(a *app) *cobra.Command {
	var sample, asJSON bool
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Create a new store (empty, with the kinds of --schema FILE, or --sample data)",
		Long: `Init creates the store --db names: a new SQLite file (mode 0600, whatever the umask)
with tandem's schema, or tandem's tables in an empty PostgreSQL schema. Besides init,
only seed, the TUI's first run and the global --create flag create a store: every
other command refuses a SQLite file that does not exist (exit 5), so a mistyped path
never becomes an empty store.

A new SQLite store appears at its path complete or not at all: it is built under a
temporary name beside it and linked into place in one step. When several processes
create the same store at once, one creates it and the others open it. With --sample
the new store is filled with seed's sample data in that same step, as the TUI's first
run does.

Init on a store that exists changes nothing, says so and exits 0 (on PostgreSQL,
--sample fills a store that holds no records yet). An empty file (0 bytes, as touch
makes) is no store yet: init makes the store in it, and --sample fills it. It prints
the store id, the store's identity that drafts are kept under.

--schema FILE makes the store with the schema of FILE (kinds: NAME: {table, title,
tree, fields}; see tandem schema show and the README's "Your own records"): its kinds
are what every other command takes as KIND. The store keeps the schema, as version 1;
without --schema a store has the sample schema (products and documents). Init with
--schema on a store that exists checks FILE against the store's schema: one with other
kinds, tables, fields or types is refused (exit 2), as a store's schema changes only by
a schema change.`,
		Example: `  tandem --db team.db init
  tandem --db demo.db init --sample
  tandem --db parts.db init --schema parts.yaml
  tandem --db 'postgres://alice@db.example/tandem' init`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if isSSHDSN(a.dsn) {
				return usagef("a team server's store is made where the server runs (tandem --db DSN init there); init makes no store through ssh://")
			}
			ctx, err := a.actor(cmd.Context())
			if err != nil {
				return err
			}
			if a.schema != "" {
				if err := a.checkSchemaFlag(sample); err != nil {
					return err
				}
			}
			var (
				filled = new(string)
				fill   func(context.Context, store.Store) error
			)
			if sample {
				filled, fill = sampleFill(defaultSeedProducts, defaultSeedDocuments)
			}
			st, created, err := a.createStore(ctx, fill)
			if err != nil {
				return err
			}
			where := safe.Line(dsnWhere(a.dsn))
			switch {
			case created && sample:
				return a.sayInit(asJSON, initReport{where, st.StoreID(), true, *filled},
					"created %s with %s (store id %s)\n", where, *filled, st.StoreID())
			case created && a.schema != "":
				return a.sayInit(asJSON, initReport{where, st.StoreID(), true, ""},
					"created %s with schema version %d: %s (store id %s)\n", where, st.Registry().Version(),
					kindList(st.Registry()), st.StoreID())
			case created:
				return a.sayInit(asJSON, initReport{where, st.StoreID(), true, ""},
					"created %s (store id %s)\n", where, st.StoreID())
			case !isPostgresDSN(a.dsn):
				return a.sayInit(asJSON, initReport{where, st.StoreID(), false, ""},
					"%s already holds a tandem store (store id %s); nothing changed\n", where, st.StoreID())
			}
			return initPostgres(ctx, a, st, fill, filled, where, asJSON)
		},
	}
	cmd.Flags().BoolVar(&sample, "sample", false, "fill the new store with the sample data of seed")
	cmd.Flags().StringVar(&a.schema, "schema", "", "make the store with the schema (kinds of record) of this YAML file")
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"db", "store_id", "created", "filled"}`)
	return cmd
}

// initPostgres reports a PostgreSQL store that opening has made ready, in SQLite's words:
// "created" when this init installed tandem's tables, "already holds a tandem store" when
// they were there. With fill it fills a store that holds no records yet.
func initPostgres(ctx context.Context, a *app, st store.Store, fill func(context.Context, store.Store) error, filled *string, where string, asJSON bool) error {
	c, ok := st.(interface{ Created() bool })
	created := ok && c.Created()
	if fill != nil {
		n := 0
		for _, k := range st.Registry().Kinds() {
			c, err := st.CountRecords(ctx, k)
			if err != nil {
				return err
			}
			n += c
		}
		if n == 0 {
			if err := fill(ctx, st); err != nil {
				return fmt.Errorf("fill the store with sample data: %w", err)
			}
			if created {
				return a.sayInit(asJSON, initReport{where, st.StoreID(), true, *filled},
					"created %s with %s (store id %s)\n", where, *filled, st.StoreID())
			}
			return a.sayInit(asJSON, initReport{where, st.StoreID(), false, *filled},
				"%s held a tandem store with no records; filled it with %s (store id %s)\n", where, *filled, st.StoreID())
		}
	}
	if created && a.schema != "" {
		return a.sayInit(asJSON, initReport{where, st.StoreID(), true, ""},
			"created %s with schema version %d: %s (store id %s)\n", where, st.Registry().Version(),
			kindList(st.Registry()), st.StoreID())
	}
	if created {
		return a.sayInit(asJSON, initReport{where, st.StoreID(), true, ""},
			"created %s (store id %s)\n", where, st.StoreID())
	}
	return a.sayInit(asJSON, initReport{where, st.StoreID(), false, ""},
		"%s already holds a tandem store (store id %s); nothing changed\n", where, st.StoreID())
}

// initReport is init's --json output.
type initReport struct {
	DB      string `json:"db"`
	StoreID string `json:"store_id"`
	Created bool   `json:"created"`
	Filled  string `json:"filled,omitempty"` // the sample data it was filled with
}

// sayInit prints init's outcome: r as JSON, or the sentence.
func (a *app) sayInit(asJSON bool, r initReport, format string, args ...any) error {
	if asJSON {
		return writeJSON(a.stdout, r)
	}
	_, err := fmt.Fprintf(a.stdout, format, args...)
	return err
}

// checkSchemaFlag refuses what cannot go with init's --schema: --fields, --sample (whose
// data is products and documents), and a file of the form before schemas, which is an
// overlay of the sample schema rather than a schema.
func (a *app) checkSchemaFlag(sample bool) error {
	if a.fields != "" {
		return usagef("--schema and --fields cannot go together: --schema is the new store's schema")
	}
	if sample {
		return usagef("--sample fills products and documents, the sample schema's; it cannot go with --schema")
	}
	reg, err := a.registry()
	if err != nil {
		return usageErr(err)
	}
	if reg.Legacy() {
		return usagef("%s is a field registry of the form before schemas (kind: [fields]); a schema lists its kinds under kinds: (see tandem schema show)",
			safe.Line(a.schema))
	}
	return nil
}

// kindList names reg's kinds for a message: "supplier, part and area".
func kindList(reg *store.Registry) string {
	ks := reg.Kinds()
	names := make([]string, len(ks))
	for i, k := range ks {
		names[i] = string(k)
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
