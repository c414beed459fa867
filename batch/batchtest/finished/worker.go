package finished

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"

	"github.com/refbatch/refbatch/batch/batchtest"
	"github.com/refbatch/refbatch/ocr/child"
	"github.com/refbatch/refbatch/ocr/page"
	"github.com/refbatch/refbatch/ocr/result"
)

// The stand-in engine speaks the worker child's protocol (ocr's
// childConfig, hello, request and response, which travel as gob values:
// gob matches them by field name, so these copies read and write the
// same frames; a change to ocr/protocol.go must be made here too, and
// TestRunLeavesChosenStates fails until it is) and reads each page's text from the PDF itself: the lines
// its content stream draws (batchtest.DrawnText). So a batch of
// batchtest's documents runs through the whole write path, admission,
// leases, validation, artifacts, journal and report, as a real run does,
// and no page is rendered or recognised.
//
// A drawn line can also steer the engine instead of being read:
//
//	batchtest:conf=NN  the page's words are read with confidence NN (default 95)
//	batchtest:crash    the child kills itself with SIGSEGV on the page

type workerConfig struct {
	page.Policy
	MemoryLimit int64
}

type workerHello struct{ Versions result.Versions }

type workerRequest struct {
	Op    int // 1 open, 2 page
	PDF   []byte
	Index int
	DPI   int
}

type workerResponse struct {
	Cause  result.Cause
	Err    string
	Pages  int
	Result result.PageResult
	Memory result.MemoryUsage
}

// Versions are the engine versions the stand-in reports: a report or
// artifact of a finished batch shows them where a real run's show
// Tesseract's and MuPDF's.
var Versions = result.Versions{Tesseract: "batchtest", MuPDF: "batchtest"}

// defaultConf is the confidence of a word the stand-in reads: a clean
// page's, in the high band.
const defaultConf = 95

var pageRe = regexp.MustCompile(`/Type\s*/Page\b[^s]`)

// serveWorker is the stand-in worker child's main loop.
func serveWorker() int {
	var cfg workerConfig
	var doc [][]string
	pages := 0
	err := child.ServeMain(func(c workerConfig) (workerHello, error) {
		cfg = c
		return workerHello{Versions: Versions}, nil
	}, func(req workerRequest) workerResponse {
		switch req.Op {
		case 1:
			if !bytes.HasPrefix(req.PDF, []byte("%PDF-")) {
				return workerResponse{Cause: result.CauseOpen, Err: "not a PDF"}
			}
			doc, pages = batchtest.DrawnText(req.PDF), len(pageRe.FindAll(req.PDF, -1))
			return workerResponse{Pages: pages}
		case 2:
			if req.Index < 0 || req.Index >= pages {
				return workerResponse{Cause: result.CauseRender, Err: "page out of range"}
			}
			var lines []string
			if req.Index < len(doc) {
				lines = doc[req.Index]
			}
			dpi := req.DPI
			if dpi == 0 {
				dpi = cfg.WithDefaults().DPI
			}
			return workerResponse{Result: readLines(req.Index, dpi, lines)}
		}
		return workerResponse{Cause: result.CauseRender, Err: "unknown request"}
	})
	return child.ExitCode("batchtest worker", err)
}

// readLines is the page result of a page that draws lines: each word
// read exactly, in a box of its own, at the confidence a
// batchtest:conf=NN line sets.
func readLines(index, dpi int, lines []string) result.PageResult {
	conf := float64(defaultConf)
	var kept []string
	for _, l := range lines {
		switch {
		case l == "batchtest:crash":
			child.Misbehave(child.FaultCrash)
		case strings.HasPrefix(l, "batchtest:conf="):
			if n, err := strconv.ParseFloat(strings.TrimPrefix(l, "batchtest:conf="), 64); err == nil {
				conf = n
			}
		default:
			kept = append(kept, l)
		}
	}
	// The page is Referral's: 432 points wide, 26 points a line.
	line := 26 * dpi / 72
	res := result.PageResult{Index: index, DPI: dpi, Width: 6 * dpi, Height: max(144, 26*len(lines)+40) * dpi / 72, TextSource: result.TextFromOCR}
	if len(kept) == 0 {
		res.Blank = true
		return res
	}
	var text []string
	for y, l := range kept {
		words := strings.Fields(l)
		x := 10
		for _, w := range words {
			res.Words = append(res.Words, result.Word{Text: w, Conf: conf, Box: [4]int{x, 10 + y*line, x + 12*len(w), 10 + y*line + line*3/4}})
			x += 12*len(w) + 8
		}
		text = append(text, strings.Join(words, " "))
	}
	res.Text = strings.Join(text, "\n")
	res.MeanConf = conf
	return res
}
