package admit

import (
	"context"
	"errors"
	"time"

	"github.com/refbatch/refbatch/ocr/child"
	"github.com/refbatch/refbatch/report/outcome"
)

// Defaults of a Pool.
const (
	// DefaultInspectMemory is the resident memory an admission child may
	// use for one file. pdfcpu holds the whole object graph: a 60 MB scan
	// of 200 image pages needs about 140 MB, a file of 100,000 small
	// objects (7 MB) about 330 MB, while a scanned referral has a few
	// dozen objects.
	DefaultInspectMemory = 384 << 20
	// DefaultInspectTimeout is the CPU time the checks may take for a file
	// of a few KB; a larger file gets DefaultInspectTimeoutPerMiB more per
	// MiB. pdfcpu reads a 60 MB scan in 0.1 s and 100,000 objects in 2 s.
	// It is CPU time, not wall time, so that a loaded machine, which
	// starves the child, cannot make a sound file miss it.
	DefaultInspectTimeout       = 5 * time.Second
	DefaultInspectTimeoutPerMiB = time.Second
	// maxInspectReply caps a child's answer: a verdict and a DPI per page.
	maxInspectReply = 1 << 20
)

// PoolConfig says how a Pool starts its children.
type PoolConfig struct {
	// Command re-executes the binary in its admission mode, which calls
	// ServeMain.
	child.Command
	// Budget is what a child may use on one file: Memory of resident
	// memory, and Timeout plus TimeoutPerMiB for each MiB of the file of
	// CPU time. 0 means the defaults (DefaultInspectMemory, ...).
	child.Budget
	// Children is how many files may be inspected at once, each in a
	// child of its own; 0 means 1.
	Children int
}

// Pool inspects PDF bytes in supervised child processes (a child.Pool),
// one file per child at a time. It is safe for concurrent use.
type Pool struct {
	budget   child.Budget
	children *child.Pool
}

// NewPool returns a pool that starts its children with cfg.
func NewPool(cfg PoolConfig) *Pool {
	return &Pool{
		budget: cfg.Budget.Or(child.Budget{Memory: DefaultInspectMemory,
			Timeout: DefaultInspectTimeout, TimeoutPerMiB: DefaultInspectTimeoutPerMiB}),
		children: child.NewPool(child.PoolConfig{Command: cfg.Command, Name: "an admission child",
			Setup: child.ParserSetup, Children: cfg.Children, MaxReply: maxInspectReply}),
	}
}

// Inspect runs checks 5 to 9 on data in a child. A file that kills a
// child (see child.Pool: a crash is tried once more, an overrun of the
// CPU budget or of memory is not) is rejected as unparseable_pdf.
func (p *Pool) Inspect(ctx context.Context, data []byte, lim Limits) ([]int, error) {
	var rep inspectReply
	req := inspectRequest{Data: data, Limits: lim, Memory: p.budget.Memory}
	err := p.children.Call(ctx, child.Limits{CPU: p.budget.CPU(len(data))}, req, &rep)
	var f *child.Failure
	switch {
	case errors.As(err, &f):
		return nil, reject(outcome.UnparseablePDF, "%s", f.Describe("the PDF checks"))
	case err != nil:
		return nil, err
	case rep.Reason != "":
		return nil, &Rejection{Reason: rep.Reason, Detail: rep.Detail}
	}
	return rep.PageDPI, nil
}

// Close ends the idle children; a child in use ends when its call returns.
func (p *Pool) Close() error { return p.children.Close() }

// The messages between a Pool and its children.

type inspectRequest struct {
	Data   []byte
	Limits Limits
	Memory int64 // resident cap while this file is inspected
}

type inspectReply struct {
	PageDPI []int
	Reason  outcome.Reason // a Rejection's, "" when admitted
	Detail  string
}

// ServeMain is the admission child's entry point, called by the binary's
// hidden admission command. It returns the process exit code: 0 when the
// parent closed the request pipe, 1 on a failure, 2 when the command was
// run by hand.
func ServeMain() int {
	return child.ExitCode("refbatch admission", child.ServeMain(serveSetup, serveInspect))
}

func serveSetup(s child.Setup) (struct{}, error) { return struct{}{}, s.Apply() }

func serveInspect(req inspectRequest) inspectReply {
	child.BeginCall(req.Memory)
	dpis, err := inspect(req.Data, req.Limits)
	child.EndCall()
	var r *Rejection
	switch {
	case errors.As(err, &r):
		return inspectReply{Reason: r.Reason, Detail: r.Detail}
	case err != nil:
		return inspectReply{Reason: outcome.MalformedPDF, Detail: "inspection failed"}
	}
	return inspectReply{PageDPI: dpis}
}
