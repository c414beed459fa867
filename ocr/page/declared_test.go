package page

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// notSettings are the struct fields elsewhere in the module that bear a
// Policy field's name without being the setting: what was measured of a
// page, a published format's copy of it, another program's own settings.
// Each names the struct, by package folder and type, and says why.
var notSettings = map[string]string{
	"ocr/result.PageResult.DPI":                  "the resolution a page was rendered at, which may be under the policy's",
	"ocr/result.PageResult.FirstDPI":             "the resolution a page was first read at, when the cascade read it twice or kept its first reading",
	"ocr.request.DPI":                            "the resolution one page is to be rendered at, which admission chose under the policy",
	"batch/batchtest/finished.workerRequest.DPI": "the stand-in engine's copy of ocr.request.DPI, in the worker protocol's frames",
	"batch/journal.PageMetric.DPI":               "the resolution a page was rendered at, as the journal records it",
	"batch/eval.PageRead.DPI":                    "an artifact page's resolution, as eval reads it back",
	"batch/eval.PageRead.FirstDPI":               "an artifact page's first reading's resolution, as eval reads it back",
	"batch/eval.Result.Cascade":                  "the cascade's figures on a corpus: pages read first, read again",
	"batch/eval.CascadeThresholds.Cascade":       "the text figures the suggested cascade thresholds give",
	"batch/layout.Provenance.DPI":                "the artifact format's provenance (dpi, lang), filled from the policy",
	"batch/layout.Provenance.Lang":               "the artifact format's provenance (dpi, lang), filled from the policy",
	"batch/export.Provenance.Lang":               "an exported document's provenance, copied from its artifact's",
	"ocr/view.Geometry.DPI":                      "the resolution a page was read at (result.PageResult.DPI), which the desk's view maps the page's canvas from",
}

// otherPrograms are folders of programs with settings of their own, not
// looked at: cmd/refcorpus generates scans (its DPI is the scanner's),
// cmd/refbench drives refbatch through its flags (its DPI is the one it
// passes to --dpi, its NoCoverage whether it also runs with --no-coverage).
var otherPrograms = []string{"cmd/refcorpus", "cmd/refbench"}

// TestDeclaredOnce fails when a struct outside this package declares a
// field named like one of Policy's: a page setting is declared here, once,
// and travels as a Policy (embedded, or in a field of type Policy), never
// as a copy of its fields.
func TestDeclaredOnce(t *testing.T) {
	var names []string
	for f := range reflect.TypeFor[Policy]().Fields() {
		names = append(names, f.Name)
	}
	root := moduleRoot(t)
	fset := token.NewFileSet()
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "ocr/page" || rel == "testdata" || slices.Contains(otherPrograms, rel) || strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(filepath.Dir(rel)) // batch, batch/journal, ...
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				return true
			}
			for _, field := range st.Fields.List {
				for _, id := range field.Names {
					if !slices.Contains(names, id.Name) {
						continue
					}
					key := pkg + "." + ts.Name.Name + "." + id.Name
					seen[key] = true
					if _, ok := notSettings[key]; !ok {
						t.Errorf("%s: %s declares %s, a page setting: use page.Policy (or list it in notSettings, saying why it is not the setting)",
							fset.Position(id.Pos()), key, id.Name)
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for key := range notSettings {
		if !seen[key] {
			t.Errorf("notSettings lists %s, which no longer exists", key)
		}
	}
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found")
		}
		dir = parent
	}
}
