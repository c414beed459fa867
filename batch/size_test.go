package batch

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Sizes that read in one sitting: no non-test Go file of the module over
// maxFileLines lines, no function (or function literal) over maxFuncLines,
// the commands and the corpus and bench tools included.
const (
	maxFileLines = 400
	maxFuncLines = 100
)

// oversized are the files and functions over the limits, to split after
// the concurrent work on them lands; empty it then. A key is a file's path
// from the module root, or that path, ":" and a function's name.
var oversized = map[string]bool{}

// TestSizes walks the module's non-test Go files (testdata aside) and
// names every file and function over the limits that oversized does not
// list, and every entry of oversized that is no longer over.
func TestSizes(t *testing.T) {
	t.Parallel()
	root := ".."
	over := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		for k, v := range sizes(t, path) {
			if k == "" {
				over[rel] = v
			} else {
				over[rel+":"+k] = v
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range over {
		if !oversized[k] {
			t.Errorf("%s: %s", k, v)
		}
	}
	for k := range oversized {
		if _, ok := over[k]; !ok {
			t.Errorf("%s is within the limits now: take it out of oversized", k)
		}
	}
}

// sizes is what in the file at path is over the limits: "" for the file
// itself, else the function's name (a literal's is its enclosing
// function's, then "/literal"), with how long it is.
func sizes(t *testing.T, path string) map[string]string {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	if n := bytes.Count(src, []byte("\n")); n > maxFileLines {
		out[""] = fmt.Sprintf("%d lines, more than %d", n, maxFileLines)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	lines := func(n ast.Node) int { return fset.Position(n.End()).Line - fset.Position(n.Pos()).Line + 1 }
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		if n := lines(fn); n > maxFuncLines {
			out[fn.Name.Name] = fmt.Sprintf("function of %d lines, more than %d", n, maxFuncLines)
			continue
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if lit, ok := n.(*ast.FuncLit); ok && lines(lit) > maxFuncLines {
			out[fmt.Sprintf("literal at line %d", fset.Position(lit.Pos()).Line)] = fmt.Sprintf("function literal of %d lines, more than %d", lines(lit), maxFuncLines)
		}
		return true
	})
	return out
}
