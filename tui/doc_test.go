package tui

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// module is tandem's module path, the prefix of its own packages.
const module = "github.com/tandem-editor/tandem/"

// TestDoc_ImportGraph: the package doc's import graph (doc.go, "Imports") names exactly the
// packages of tandem that tui's files import.
func TestDoc_ImportGraph(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	section := text[strings.Index(text, "# Imports"):strings.Index(text, "# Components")]
	var documented []string
	for _, l := range strings.Split(section, "\n") {
		_, right, ok := strings.Cut(l, "──▶ ")
		if !ok {
			continue
		}
		names, _, _ := strings.Cut(right, "  ")
		for _, n := range strings.Split(names, ", ") {
			documented = append(documented, module+strings.TrimSpace(n))
		}
	}
	slices.Sort(documented)

	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var imported []string
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(p, module) && !slices.Contains(imported, p) {
				imported = append(imported, p)
			}
		}
	}
	slices.Sort(imported)
	if !slices.Equal(documented, imported) {
		t.Fatalf("doc.go's import graph names\n  %s\nbut tui imports\n  %s", strings.Join(documented, "\n  "), strings.Join(imported, "\n  "))
	}
}
