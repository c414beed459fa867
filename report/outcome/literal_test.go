package outcome

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// literalExempt lists the string literals, by file (from the module root)
// and value, that spell a state or reason code without meaning it. Each
// is another vocabulary that happens to share the spelling.
var literalExempt = map[string]map[string]string{
	// The engine's own classification of a failure (result.Cause, which
	// ocr names too), which batch maps onto outcome in one function;
	// neither imports the vocabulary.
	"ocr/result/result.go": {"timeout": "result.CauseTimeout", "page_too_large": "result.CauseTooLarge"},
	// The child supervisor's classification (child.Cause) and its kill
	// label.
	"ocr/child/child.go": {"timeout": "child.CauseTimeout and the kill label"},
	"ocr/child/death.go": {"timeout": "child.CauseTimeout and the kill label"},
	// Names of the run's settings (--low-confidence, encryption) in the
	// journal's settings and the policy hash, not codes.
	"batch/layout/settings.go": {"low_confidence": "setting name", "encrypted": "setting name"},
	"batch/layout/defaults.go": {"low_confidence": "setting name"},
	"cmd/refbatch/remember.go": {"low_confidence": "setting name"},
	// Log attribute keys.
	"batch/run.go":    {"encrypted": "log key"},
	"batch/runner.go": {"queued": "log key"},
	// The command's name: `refbatch review`.
	"cmd/refbatch/cmd_review.go": {"review": "command name"},
	// A corpus variant's name (its file name), whose expected reason is
	// outcome.Encrypted.
	"cmd/refcorpus/corpus.go": {"encrypted": "variant name"},
	// The variant's name (varHand) and the flag --handwriting, whose
	// expected reason is outcome.Handwriting.
	"cmd/refcorpus/hand.go": {"handwriting": "variant name"},
	"cmd/refcorpus/main.go": {"handwriting": "flag name"},
}

// TestNoCodeLiterals: outside this package, no non-test Go file spells a
// state or reason code as a string literal, in a literal of its own or
// quoted inside SQL ('review'): producers and readers use the constants,
// so a code has one declaration to rename, grep or explain. Import paths
// are not codes; literalExempt lists the rest, with why.
func TestNoCodeLiterals(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found: %v", err)
	}
	codes := map[string]string{}
	for _, s := range States() {
		codes[string(s)] = "state"
	}
	for _, r := range Reasons() {
		codes[string(r)] = "reason"
	}
	self, _ := filepath.Abs(".")
	fset := token.NewFileSet()
	files := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) || path == self {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		imports := map[*ast.BasicLit]bool{}
		for _, is := range f.Imports {
			imports[is.Path] = true
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING || imports[lit] {
				return true
			}
			v, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			if kind, ok := codes[v]; ok {
				if _, ok := literalExempt[rel][v]; !ok {
					t.Errorf("%s: %s %q as a literal; use package outcome's constant", fset.Position(lit.Pos()), kind, v)
				}
			}
			for c, kind := range codes {
				if strings.Contains(v, "'"+c+"'") {
					t.Errorf("%s: %s '%s' quoted inside a literal (SQL?); build it from outcome's constant or pass it as a parameter", fset.Position(lit.Pos()), kind, c)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Fatalf("scanned %d files under %s; the walk missed the module", files, root)
	}
}
