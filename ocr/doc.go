// Package ocr is refbatch's native-code boundary: it renders PDF pages with
// MuPDF (go-fitz) and recognises them with Tesseract (gosseract), inside a
// supervised child process.
//
// # Why a child process
//
// MuPDF and Tesseract are C and C++ libraries. A segfault, an abort, a
// runaway allocation or an endless loop inside them cannot be recovered in
// the Go process, and a cgo call cannot be cancelled. So the parent starts
// a worker child (the refbatch binary re-executed in a hidden mode), talks to
// it over two pipes and kills it when a page overruns its deadline. The
// child is supervised by the same child.Pool as admission's and export's,
// leased for the Worker's life since it keeps Tesseract and the open
// document between calls. A dead child is never reused, and its page is
// not tried again in another: the caller starts a new [Worker], and the
// document's retry is an attempt of its own.
//
// # Using a worker
//
//	w, err := ocr.StartWorker(ctx, ocr.WorkerConfig{
//		Command:     child.Command{Path: exe, Args: []string{"worker"}},
//		Policy:      page.Policy{DPI: 300}, // zero fields: the defaults
//		MemoryLimit: ocr.DefaultMemoryLimit,
//	})
//	defer w.Close()
//	n, err := w.Open(ctx, pdfBytes)
//	for i := range n {
//		res, err := w.Page(ctx, i, pageDPI[i], 120*time.Second)
//		...
//	}
//
// pageDPI holds the resolution admission gave each page; 0 lets the child
// fit the page to the policy itself.
//
// The hidden worker command of the binary calls [ServeMain], which serves
// requests until the parent closes the request pipe.
//
// A Worker does one thing at a time; it is not safe for concurrent use.
// Parallelism comes from running several workers, each with a
// single-threaded Tesseract (OMP_THREAD_LIMIT=1).
//
// One call into Tesseract happens in the caller's process: [Languages]
// asks the library, initialised without a language (no model is loaded,
// no input is read), which folder it reads traineddata from and what that
// folder holds, so that [CheckLanguages] can refuse a policy's missing
// language before any work rather than at a worker's start.
//
// # Failures
//
// Every engine failure is an [*EngineError] with a [Cause]. Causes that say
// the child died for a reason unrelated to the document's content (crash,
// oom, transient) are [EngineError.Transient] and worth a retry in a fresh
// worker; timeout, page_too_large, open and render are not.
//
// A child's death is classified from its wait status and its stderr, which
// the parent scans as it arrives for out-of-memory messages and the signal
// the Go runtime reports, keeping only the last 4 KiB in memory. stderr is
// never logged nor copied into an error, because C libraries may print
// document content there; only a signal name such as SIGSEGV is quoted.
//
// # Memory
//
// A child limits its own address space (RLIMIT_AS) to
// WorkerConfig.MemoryLimit; [DefaultMemoryLimit] documents what a child
// really needs. The child runs with one glibc malloc arena and without core
// dumps (a core file would hold page images). gosseract leaks a few bytes
// per recognised word, so a long-lived child grows slowly: replacing a
// worker after some thousands of pages keeps it bounded.
//
// # Protocol
//
// encoding/gob over two pipes passed as extra files: fd 3 carries requests
// to the child, fd 4 carries responses. stdin and stdout are not used,
// because C libraries write to stdout; the child's stdout is /dev/null.
// The first request is the configuration; the child answers it with a hello
// that carries the engine versions once Tesseract is initialised.
//
// # Pages
//
// For each page the child takes the DPI it is given, or picks one from the
// page's size with the policy's rule (page.Policy.FitDPI), and refuses
// the page with page_too_large before rendering when it is over the pixel
// cap at that DPI (or at the minimum). It renders the page (MuPDF applies
// its /Rotate) and converts it to 8-bit gray. Then come the page steps, each
// recorded in the [PageResult], and normally one recognition pass, from
// which both the words (with confidences and boxes) and the text are
// built. Tesseract is always told the DPI the image is at
// (user_defined_dpi), which turning and deskewing do not change, and reads
// the page as one column of text of varying sizes (page segmentation mode
// 4), which keeps a table's rows in reading order.
//
// # Page steps
//
// Archives hold pages that plain Tesseract reads badly: white on black,
// skewed, turned on their side or upside down. The steps that fix them
// are paid for only by the pages that need them; on an upright, straight
// page they cost two Leptonica measurements on a binarised copy, a few
// percent of the recognition (BenchmarkPageUpright measures it).
//
//   - Inversion: a page with 60% or more of its pixels darker than its
//     Otsu threshold is white on black and is inverted (Inverted).
//     Tesseract 5 would read such a page by itself, but about 1.7 times
//     slower.
//   - Blank pages: a page (once inverted) with almost no ink (pixels well darker than
//     its paper) and fewer than 2 marks the size of a character
//     (Leptonica's connected components) is blank: it is not prepared
//     further nor recognised, its text is empty and Blank is set.
//     Tesseract would read its specks as junk words. The count costs
//     about 4 ms and runs only on pages with little ink.
//   - Despeckle: marks of ink no more than 4 pixels across at 300 dpi
//     (scaled to the render's DPI; Leptonica's connected components of a
//     binarised copy) are a photocopy's speckle, not print, and are
//     painted over with the paper's gray. Tesseract reads specks as stray
//     punctuation, and dense speckle wrecks its layout analysis. It runs
//     on every page that is not blank, before deskewing, and costs one
//     connected-component pass. The policy's NoDespeckle turns it off.
//   - Deskew: Leptonica measures the skew of the lines within ±15 degrees
//     (pixFindSkewSweepAndSearchScore). A sure measurement of 1 degree or
//     more is corrected by rotating the gray page on a canvas large
//     enough to lose nothing (SkewDegrees, clockwise positive); what the
//     rotation brings in is the paper's gray, not white, which on a
//     faded page would make Tesseract take the paper for ink. Smaller
//     skews are left to Tesseract, which handles them as well; from 3
//     degrees on it does not. The policy's NoDeskew turns this off.
//   - Orientation: Leptonica's up/down and left/right test
//     (pixOrientDetect) is the cheap test. A page it finds upright goes
//     on; on any other page Tesseract's orientation detection (a second,
//     legacy-engine handle on the osd model, made once per child) decides,
//     and the page is turned upright when it is sure (Rotation, the
//     clockwise turn applied). If a page the cheap test let through then
//     reads badly (fewer than half its words credible), orientation
//     detection is asked after all and, if it turns the page, the page is
//     read again and the better reading kept. The policy's NoOrientation
//     turns this off.
//
// # Text layers
//
// A page may already carry text: a born-digital page, or a scan with an
// invisible OCR layer (OCRmyPDF). MuPDF extracts it, and it is used
// instead of recognising the page (TextSource "layer") when it passes the
// layer rule; otherwise the page is recognised (TextSource "ocr").
// The policy's ForceOCR recognises every page and never looks at layers.
//
// A layer is never trusted unread, because an invisible layer can say
// anything: text from another page, a partial stamp, a poor earlier OCR.
// The layer is compared with a reading of the prepared page (inverted,
// deskewed, turned as above). Words are compared by their letters and
// digits, lower-cased, and match when equal or within one edit per four
// characters; a reading's credible words are those with confidence 60 or
// more, and a reading is doubtful when fewer than half its words are. The
// rule:
//
//  1. The layer must hold at least 3 distinct words of two or more
//     letters or digits, and at most 256 KiB of text (no page shows
//     more); another layer is ignored.
//  2. Three bands of the page, holding about a quarter of the rows with
//     ink, are read at full DPI. Tesseract's time follows the amount of
//     text, not of pixels (a whole page at 150 dpi takes 75% of the time
//     at 300 dpi), so this costs about 30% of reading the page. If that
//     reading is credible and has at least 10 distinct credible words, it
//     decides: the layer is used when it holds 60% or more of them
//     (coverage) and holds between half and twice as many words as the
//     page shows by the sample's estimate; otherwise the page is read.
//  3. Otherwise (a page with little text, a chart, a poor scan) the whole
//     page is read, and the layer is used when it matches that reading:
//     60% or more of the layer's distinct words are read on the page
//     (agreement) and 60% or more of the reading's credible words are in
//     the layer (coverage); or, when the reading is doubtful, when the
//     agreement alone is 30% or more. A doubtful reading's credible words
//     are too few and too often wrong to hold a layer to, and reading the
//     page again would do no better, while a layer unrelated to the page
//     does not reach 30%. When the layer is not used, that reading is the
//     page's text.
//
// Every word of a layer that is used carries the confidence 100 × the
// share that decided (coverage in 2; the lower of agreement and coverage
// in 3, or agreement for a doubtful reading): the layer's producer gave no
// confidence, and the share of it that a reading confirms is what is
// known. A layer that only just passes on a doubtful page therefore scores
// low, and the batch's validation treats it accordingly. Layer words have
// no boxes (all zero).
package ocr
