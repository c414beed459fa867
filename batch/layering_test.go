package batch

import (
	"bufio"
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The packages of the project that import nothing of it but the
// vocabulary (report/outcome): what they own needs no other part.
var leaves = []string{"manifest", "report", "batch/journal", "batch/store"}

// allowedImports says, for each package of the project (path from the
// module root), which packages of the project it may import. cmd → batch
// → (manifest, ocr, journal, store, report) → report/outcome: dependencies
// point one way. A package missing from the table fails the test, so a
// new one is placed in the layering on purpose.
func allowedImports(pkg string) (allowed func(string) bool, known bool) {
	switch {
	case pkg == "report/outcome", pkg == "ocr/child", pkg == "ocr/page", pkg == "ocr/result", pkg == "ocr/probe",
		pkg == "batch/notify", pkg == "batch/journal/journaltest", pkg == "batch/export/pdfobj":
		// The vocabulary, the worker supervisor, the page policy, the
		// page results, the probe page's PDF, the notifications' signing
		// (which a receiver may import), the tests' journals and the PDF
		// objects export and its checker read alike import nothing of the
		// project.
		return func(string) bool { return false }, true
	case slices.Contains(leaves, pkg):
		return func(imp string) bool { return imp == "report/outcome" }, true
	case pkg == "ocr":
		// The engine boundary: the worker supervisor, the page policy,
		// and the page results it makes.
		return func(imp string) bool {
			return imp == "ocr/child" || imp == "ocr/page" || imp == "ocr/result" || imp == "report/outcome"
		}, true
	case pkg == "batch/admit":
		// Admission (pure Go, so never ocr, which is cgo) shares the
		// worker supervisor and the page policy with the engine.
		return func(imp string) bool {
			return imp == "ocr/child" || imp == "ocr/page" || imp == "report/outcome"
		}, true
	case pkg == "ocr/view":
		return func(imp string) bool { return imp == "ocr/child" }, true
	case pkg == "batch/desk":
		return func(imp string) bool {
			return imp == "batch/review" || imp == "batch/layout" || imp == "batch/journal" || imp == "ocr/page" || imp == "ocr/view"
		}, true
	case pkg == "batch/review":
		// A person's decisions and transcriptions: over layout, with the
		// report's rows and rounding (standing), the sources' root as
		// verify finds it (audit), sources read as admission reads them
		// (admit), and the pages read (ocr/result). A retry's languages
		// are checked by the function its caller passes, not by ocr.
		return func(imp string) bool {
			return imp == "batch/layout" || imp == "batch/standing" || imp == "batch/audit" || imp == "batch/admit" ||
				imp == "ocr/result" || imp == "ocr/page" || imp == "manifest" || imp == "report/outcome" || slices.Contains(leaves, imp)
		}, true
	case pkg == "batch/audit":
		// Verify, custody and show read a batch as layout describes it;
		// they never import the write path (batch). Verify reads the
		// sources again as admission read them (admit.HashSource), inside
		// the root.
		return func(imp string) bool {
			return imp == "batch/layout" || imp == "batch/admit" || slices.Contains(leaves, imp) || imp == "report/outcome"
		}, true
	case pkg == "batch/standing":
		// Status, health, history and the report read a batch as layout
		// describes it, and count a manifest's rows (manifest); the write
		// path imports them to write its report, never the reverse.
		return func(imp string) bool {
			return imp == "batch/layout" || imp == "manifest" || slices.Contains(leaves, imp) || imp == "report/outcome"
		}, true
	case pkg == "batch/handover":
		// The export's orchestration: each document verified as audit
		// verifies it, rendered by the formats (batch/export), and the
		// batch's report (standing) handed over beside it.
		return func(imp string) bool {
			return imp == "batch/layout" || imp == "batch/audit" || imp == "batch/standing" || imp == "batch/export" ||
				imp == "report/outcome" || slices.Contains(leaves, imp)
		}, true
	case pkg == "batch/layout":
		// What a batch is on disk, which the write path and the readers
		// share: the artifact format (the page results), the settings
		// (the page policy, admission's caps), the root log (the report's
		// custody), over the journal and the store; a child process is
		// described as the supervisor's command (ocr/child).
		return func(imp string) bool {
			return imp == "batch/admit" || imp == "ocr/result" || imp == "ocr/page" || imp == "ocr/child" || imp == "report/outcome" || slices.Contains(leaves, imp)
		}, true
	case pkg == "batch/batchtest":
		// Referrals for tests, written as the probe page is.
		return func(imp string) bool { return imp == "ocr/probe" }, true
	case pkg == "batch/batchtest/finished":
		// Finished batches for tests: the write path (batch) run with a
		// stand-in engine that speaks the worker child's protocol.
		return func(imp string) bool {
			return imp == "batch" || imp == "batch/batchtest" || imp == "batch/layout" || imp == "batch/admit" ||
				imp == "ocr/result" || imp == "ocr/child" || imp == "ocr/page"
		}, true
	case pkg == "batch/eval":
		return func(imp string) bool { return imp == "report/outcome" || slices.Contains(leaves, imp) }, true
	case pkg == "batch/export":
		// The export formats read the page results; the batch hands
		// them over, so export never imports batch. It parses the
		// sources in children, under the worker supervisor.
		return func(imp string) bool {
			return imp == "ocr/result" || imp == "ocr/page" || imp == "ocr/child" || imp == "report/outcome" || imp == "batch/export/pdfobj" || slices.Contains(leaves, imp)
		}, true
	case pkg == "batch/export/pdfcheck":
		// The PDF checks score text as eval does; the batch and refbench
		// hand them the pages.
		return func(imp string) bool {
			return imp == "ocr/result" || imp == "batch/eval" || imp == "report/outcome" || imp == "batch/export/pdfobj" || slices.Contains(leaves, imp)
		}, true
	case pkg == "batch":
		return func(imp string) bool {
			return strings.HasPrefix(imp, "batch/") || imp == "ocr" || strings.HasPrefix(imp, "ocr/") ||
				imp == "report/outcome" || slices.Contains(leaves, imp)
		}, true
	case strings.HasPrefix(pkg, "cmd/"):
		// A command may use any library package, never another command.
		return func(imp string) bool { return !strings.HasPrefix(imp, "cmd/") }, true
	}
	return nil, false
}

// TestLayering: every import between the project's packages (production
// code; tests may reach further) is an intended edge of allowedImports.
func TestLayering(t *testing.T) {
	prefix := modulePrefix(t)
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, prefix+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	n := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		pkg := strings.TrimPrefix(fields[0], prefix)
		n++
		allowed, known := allowedImports(pkg)
		if !known {
			t.Errorf("package %s has no place in the layering; add it to allowedImports", pkg)
			continue
		}
		for _, imp := range fields[1:] {
			imp, ours := strings.CutPrefix(imp, prefix)
			if ours && !allowed(imp) {
				t.Errorf("%s imports %s, against the layering", pkg, imp)
			}
		}
	}
	if n < 10 {
		t.Fatalf("go list named %d packages; want the whole module", n)
	}
}

// withoutEngines are the packages whose test binaries, tests included,
// link neither ocr nor the engines below it (MuPDF's go-fitz, Tesseract's
// gosseract), which cgo links through the external linker: they read
// pages as ocr/result holds them, and a pure-Go test binary links in a
// fraction of the time. The desk is not among them: it renders page
// images (ocr/view, over go-fitz). batch/batchtest, which has no tests,
// is in report's.
var withoutEngines = []string{
	"batch/layout", "batch/audit", "batch/standing", "batch/review", "batch/handover",
	"batch/export/pdfcheck", "report", "cmd/refbench",
}

// modulePrefix is the module's path and a slash, which the project's
// import paths begin with.
func modulePrefix(t *testing.T) string {
	t.Helper()
	mod, err := exec.Command("go", "list", "-m").Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	return strings.TrimSpace(string(mod)) + "/"
}

// TestReadSideWithoutEngines: no test binary of withoutEngines links ocr,
// go-fitz or gosseract.
func TestReadSideWithoutEngines(t *testing.T) {
	prefix := modulePrefix(t)
	args := []string{"list", "-test", "-f", `{{.ImportPath}}{{range .Deps}} {{.}}{{end}}`}
	for _, p := range withoutEngines {
		args = append(args, prefix+p)
	}
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		t.Fatalf("go list -test: %v", err)
	}
	engines := []string{prefix + "ocr", "github.com/gen2brain/go-fitz", "github.com/otiai10/gosseract/v2"}
	n := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if !strings.HasSuffix(fields[0], ".test") {
			continue
		}
		n++
		for _, dep := range fields[1:] {
			if slices.Contains(engines, dep) {
				t.Errorf("%s links %s", strings.TrimPrefix(fields[0], prefix), dep)
			}
		}
	}
	if n != len(withoutEngines) {
		t.Fatalf("go list named %d test binaries; want %d", n, len(withoutEngines))
	}
}
