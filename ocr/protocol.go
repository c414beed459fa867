package ocr

// The messages between parent and child, in child's frames. The parent
// sends one childConfig, then requests; the child answers the config with
// a hello and every request with exactly one response.

// childConfig is the first message on the request pipe. It travels over
// the pipe rather than argv so the child's command line stays fixed.
type childConfig struct {
	Lang          string
	MemoryLimit   int64
	DPI           int
	MinDPI        int
	MaxPagePixels int64
	// The page steps; see WorkerConfig.
	ForceOCR      bool
	NoOrientation bool
	NoDeskew      bool
	NoDespeckle   bool
	NoCoverage    bool
}

// hello is the child's answer to childConfig: Tesseract is initialised.
// (A child that could not initialise says so in child's own hello.)
type hello struct {
	Versions Versions
}

type op int

const (
	opOpen op = iota + 1
	opPage
)

type request struct {
	Op    op
	PDF   []byte // opOpen
	Tag   string // opOpen: opaque label, used only for fault injection
	Index int    // opPage
}

// response answers one request. Cause is empty on success.
type response struct {
	Cause  Cause
	Err    string
	Pages  int        // opOpen
	Result PageResult // opPage
	Memory MemoryUsage
}

// MemoryUsage is the worker child's memory high-water marks, read from
// /proc/self/status after each request: VmPeak is the peak virtual size
// (what RLIMIT_AS limits), VmHWM the peak resident size. Both are bytes,
// 0 where unavailable.
type MemoryUsage struct {
	VmPeak int64 `json:"vm_peak"`
	VmHWM  int64 `json:"vm_hwm"`
}
