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
// it over two pipes and kills it when a page overruns its deadline. A dead
// child is never reused: the caller starts a new [Worker].
//
// # Using a worker
//
//	w, err := ocr.StartWorker(ctx, ocr.WorkerConfig{
//		Path: exe, Args: []string{"worker"}, Lang: "eng",
//		MemoryLimit: ocr.DefaultMemoryLimit,
//		DPI: 300, MinDPI: 150, MaxPagePixels: 50_000_000,
//	})
//	defer w.Close()
//	n, err := w.Open(ctx, pdfBytes, sourceID)
//	for i := range n {
//		page, err := w.Page(ctx, i, 120*time.Second)
//		...
//	}
//
// The hidden worker command of the binary calls [ServeMain], which serves
// requests until the parent closes the request pipe.
//
// A Worker does one thing at a time; it is not safe for concurrent use.
// Parallelism comes from running several workers, each with a
// single-threaded Tesseract (OMP_THREAD_LIMIT=1).
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
// For each page the child reads the page's size, picks a DPI with [FitDPI]
// (refusing the page with page_too_large before rendering if even the
// minimum DPI is over the pixel cap), renders it, converts it to 8-bit gray,
// hands it to Tesseract as a PGM and makes one recognition pass, from which
// both the words (with confidences and boxes) and the text are built.
package ocr
