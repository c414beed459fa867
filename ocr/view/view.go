// Package view renders pages for a person to look at (the review desk):
// one page of a PDF at screen resolution, as JPEG bytes, in a supervised
// child process, since MuPDF parses the file and a malformed one can crash
// it. Nothing is written to disk: the source goes to the child over a
// pipe and the image comes back over another.
//
// A Pool keeps a few children (one render each at a time, so the pool
// bounds concurrent renders) and the source each has open, so the next
// page of the same document is sent no source again.
//
// It keeps its own children ([child.Process]) rather than a child.Pool's:
// a render goes to whichever child is free, and what it sends depends on
// that child's state (the source, unless the child has it open), which a
// child.Pool does not keep per child; its Lease keeps one child for one
// caller, as the OCR worker needs, not a state per child for any caller.
// A crashed render is tried once more in a new child, with the source
// sent again.
package view

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/refbatch/refbatch/ocr/child"
)

// Limits of a render.
const (
	// MaxWidth is the widest image a page is rendered to, in pixels.
	MaxWidth = 2400
	// MaxPixels caps a rendered image whatever the page's shape.
	MaxPixels = 24 << 20
	// maxDPI caps the resolution: a tiny page is not blown up past it.
	maxDPI = 300
	// cpuBudget is the CPU time one render may take; wall time is
	// child.WallFactor times more.
	cpuBudget = 10 * time.Second
	// maxReply caps a reply: a JPEG of MaxPixels is far smaller.
	maxReply = 64 << 20
)

// Config says how a Pool starts its children.
type Config struct {
	// Command re-executes the binary in its view mode, which calls
	// ServeMain.
	child.Command
	// Children is how many pages may render at once; 0 means 2.
	Children int
}

// Image is one rendered page.
type Image struct {
	JPEG []byte
	// Width and Height are the image's size in pixels; Pages is the
	// document's page count.
	Width, Height, Pages int
}

// RenderError is a page that could not be rendered: the child reported
// an error or died. Reason is in refbatch's words, never the file's.
type RenderError struct{ Reason string }

func (e *RenderError) Error() string { return e.Reason }

// Pool renders pages in a bounded set of children. It is safe for
// concurrent use.
type Pool struct {
	cfg  Config
	idle chan *slot
}

// slot is one child, started on first use, and the document it has open.
type slot struct {
	proc *child.Process
	key  string
}

// NewPool returns a pool that starts its children as cfg says, when first
// needed. Close it.
func NewPool(cfg Config) *Pool {
	if cfg.Children <= 0 {
		cfg.Children = 2
	}
	p := &Pool{cfg: cfg, idle: make(chan *slot, cfg.Children)}
	for range cfg.Children {
		p.idle <- &slot{}
	}
	return p
}

// Render renders page (from 0) of the document known by key (its
// SHA-256) at width pixels (at most MaxWidth). source is called for the
// document's bytes only when the child taking the render does not have
// it open. It waits for a free child, or for ctx.
//
// g says how the render is turned (see Geometry) so that the words'
// boxes fall on the words; width is the turned image's.
func (p *Pool) Render(ctx context.Context, key string, source func() ([]byte, error), page, width int, g Geometry) (*Image, error) {
	if err := g.Check(); err != nil {
		return nil, &RenderError{Reason: err.Error()}
	}
	var s *slot
	select {
	case s = <-p.idle:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { p.idle <- s }()
	req := request{Key: key, Page: page, Width: min(max(width, 100), MaxWidth), Geometry: g}
	for try := 1; ; try++ {
		if s.proc != nil && !s.proc.Alive() {
			s.proc.Close()
			s.proc, s.key = nil, ""
		}
		if s.proc == nil {
			proc, err := child.Start(ctx, child.Config{Command: p.cfg.Command, MaxReply: maxReply},
				child.ParserSetup, nil)
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				return nil, fmt.Errorf("starting the page view child: %w", err)
			}
			s.proc = proc
		}
		req.PDF = nil
		if s.key != key {
			b, err := source()
			if err != nil {
				return nil, err
			}
			req.PDF = b
		}
		var rep reply
		err := s.proc.CallCPU(ctx, child.WallFactor*cpuBudget, cpuBudget, req, &rep)
		var d *child.Death
		switch {
		case err == nil && rep.Err != "":
			s.key = rep.Key
			return nil, &RenderError{Reason: rep.Err}
		case err == nil:
			s.key = key
			return &Image{JPEG: rep.JPEG, Width: rep.Width, Height: rep.Height, Pages: rep.Pages}, nil
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case errors.As(err, &d) && try == 1 && !d.CPU && d.Cause == child.CauseCrash:
			s.key = ""
			continue
		case errors.As(err, &d):
			s.key = ""
			return nil, &RenderError{Reason: "the page view child " + string(d.Cause)}
		}
		return nil, err
	}
}

// Close waits for the renders under way and ends the children.
func (p *Pool) Close() error {
	var wg sync.WaitGroup
	for range p.cfg.Children {
		s := <-p.idle
		if s.proc != nil {
			wg.Go(func() { s.proc.Close() })
		}
	}
	wg.Wait()
	return nil
}

// The messages between a Pool and its children.

type request struct {
	Key      string
	PDF      []byte // nil: the document the child has open, which must be Key
	Page     int
	Width    int
	Geometry Geometry
}

type reply struct {
	JPEG          []byte
	Width, Height int
	Pages         int
	Key           string // the document the child has open after the request
	Err           string
}
