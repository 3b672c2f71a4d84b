package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/store"
)

func newSchemaCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "schema",
		Short: "Show, diff and apply the store's schema: its kinds of record and their fields",
		Long: `A store keeps its schema: the kinds of record it holds, each with its table, title
field and fields, as YAML with a version. tandem init --schema FILE makes a store with
the schema of FILE; a store made without one (or by a tandem before stores kept their
schema) has the sample schema, products and documents, as version 1. schema diff and
schema apply change it to a file's, as its next version.`,
		Example: `  tandem schema show
  tandem --db parts.db schema show --json
  tandem schema apply schema.yaml --dry-run`,
		Args: exactArgs(0, "a subcommand (show, diff, apply)"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usagef("schema needs a subcommand: show, diff or apply")
		},
	}
	cmd.AddCommand(newSchemaShowCmd(a), newSchemaDiffCmd(a), newSchemaApplyCmd(a))
	return cmd
}

func newSchemaShowCmd(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Print the store's schema (YAML, or --json)",
		Long: `Show prints the schema of the store --db names: a comment with its version, then the
schema as YAML with every default spelled out, a file that tandem init --schema takes
as it is. With --json it prints {"version", "kinds": [{"name", "table", "title",
"tree", "fields": [...]}]}.`,
		Example: `  tandem schema show
  tandem --db parts.db schema show --json`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			reg, err := a.storeRegistry(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(a.stdout, schemaJSON(reg))
			}
			fmt.Fprintf(a.stdout, "# schema version %d of %s\n%s", reg.Version(), safe.Line(dsnWhere(a.dsn)), showYAML(reg.YAML()))
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"version", "kinds": [{"name", "table", "title", "tree", "fields"}]}`)
	return cmd
}

// showYAML returns a schema's YAML for the terminal. Registry.YAML writes every string that
// holds a control character, a bidi override or a backslash as a quoted string with escapes
// (strconv.Quote's, which are YAML's), so its lines are safe as they are; safe.Text would
// double those escapes' backslashes, and the output would no longer be the schema. A line
// that still holds an unsafe character (none should) goes through safe.Line.
func showYAML(doc []byte) string {
	lines := strings.SplitAfter(string(doc), "\n")
	for i, l := range lines {
		if body := strings.TrimSuffix(l, "\n"); safe.Escapes(body) {
			lines[i] = safe.Line(body) + l[len(body):]
		}
	}
	return strings.Join(lines, "")
}

// jsonSchema is schema show's --json output.
type jsonSchema struct {
	Version int64      `json:"version"`
	Kinds   []jsonKind `json:"kinds"`
}

type jsonKind struct {
	Name   string      `json:"name"`
	Table  string      `json:"table"`
	Title  string      `json:"title"`
	Tree   bool        `json:"tree"`
	Fields []jsonField `json:"fields"`
}

type jsonField struct {
	Name     string   `json:"name"`
	Label    string   `json:"label"`
	Type     string   `json:"type"`
	To       string   `json:"to,omitempty"`
	Owner    string   `json:"owner"`
	Rule     string   `json:"rule"`
	Group    string   `json:"group"`
	Required bool     `json:"required"`
	ReadOnly bool     `json:"readonly"`
	Unique   bool     `json:"unique"`
	Search   bool     `json:"search"`
	Sort     bool     `json:"sort"`
	MaxChars int      `json:"max_chars,omitempty"`
	MaxBytes int      `json:"max_bytes,omitempty"`
	MaxItems int      `json:"max_items,omitempty"`
	Values   []string `json:"values,omitempty"`
	Default  string   `json:"default,omitempty"`
}

// schemaJSON returns reg as schema show's --json prints it.
func schemaJSON(reg *store.Registry) jsonSchema {
	out := jsonSchema{Version: reg.Version(), Kinds: []jsonKind{}}
	for _, k := range reg.Kinds() {
		d := reg.Def(k)
		jk := jsonKind{Name: string(k), Table: d.Table, Title: d.Title, Tree: d.Tree, Fields: []jsonField{}}
		for _, f := range d.Fields {
			jk.Fields = append(jk.Fields, jsonField{Name: f.Name, Label: f.Label, Type: string(f.Type), To: string(f.To),
				Owner: string(f.Owner), Rule: string(f.Rule), Group: f.Group, Required: f.Required, ReadOnly: f.ReadOnly,
				Unique: f.Unique, Search: f.Search, Sort: f.Sort, MaxChars: f.MaxChars, MaxBytes: f.MaxBytes,
				MaxItems: f.MaxItems, Values: f.Values, Default: f.Default})
		}
		out.Kinds = append(out.Kinds, jk)
	}
	return out
}
