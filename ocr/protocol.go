package ocr

import "github.com/refbatch/refbatch/ocr/page"

// The messages between parent and child, in child's frames. The parent
// sends one childConfig, then requests; the child answers the config with
// a hello and every request with exactly one response.

// childConfig is the first message on the request pipe. It travels over
// the pipe rather than argv so the child's command line stays fixed.
type childConfig struct {
	page.Policy
	MemoryLimit int64
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
	Index int    // opPage
	DPI   int    // opPage: the page's resolution; 0: fit it to the policy
}

// response answers one request. Cause is empty on success.
type response struct {
	Cause  Cause
	Err    string
	Pages  int        // opOpen
	Result PageResult // opPage
	Memory MemoryUsage
}
