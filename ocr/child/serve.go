package child

import (
	"bufio"
	"bytes"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// File descriptors of the pipes in the child; the parent passes them as
// exec.Cmd.ExtraFiles, which start at 3.
const (
	requestFD  = 3
	responseFD = 4
)

// maxRequest caps a request frame in the child. The parent is trusted, so
// this only guards against a stream that is not the parent's at all.
const maxRequest = 1 << 40

// hello is the child's first frame: Err when init failed, else the init
// function's value, encoded.
type helloFrame struct {
	Err     string
	Payload []byte
}

// ErrNotChild is returned by ServeMain when fds 3 and 4 are not open: the
// child mode was started by hand rather than by a parent.
var ErrNotChild = errors.New("this mode is started by refbatch itself, not by hand")

// ServeMain runs Serve on fds 3 (requests) and 4 (replies) after turning
// off core dumps (a core file would hold the child's input). It returns
// ErrNotChild when those fds are not open.
func ServeMain[S, H, Req, Rep any](init func(S) (H, error), handle func(Req) Rep) error {
	_ = syscall.Setrlimit(syscall.RLIMIT_CORE, &syscall.Rlimit{})
	in := os.NewFile(requestFD, "requests")
	out := os.NewFile(responseFD, "replies")
	for _, f := range []*os.File{in, out} {
		if _, err := f.Stat(); err != nil {
			return ErrNotChild
		}
	}
	defer in.Close()
	defer out.Close()
	return Serve(in, out, init, handle)
}

// Serve is a child's main loop. It reads the setup value from in, calls
// init with it and answers with a hello carrying init's value (or its
// error, after which Serve returns it). Then it answers each request with
// handle's reply, one at a time, until in reaches EOF, which is how the
// parent asks it to exit; it returns nil then.
func Serve[S, H, Req, Rep any](in io.Reader, out io.Writer, init func(S) (H, error), handle func(Req) Rep) error {
	br := bufio.NewReader(in)
	var setup S
	if err := readFrame(br, maxRequest, &setup); err != nil {
		return fmt.Errorf("reading setup: %w", err)
	}
	v, err := init(setup)
	if err != nil {
		_ = writeFrame(out, helloFrame{Err: err.Error()})
		return err
	}
	var payload bytes.Buffer
	if err := gob.NewEncoder(&payload).Encode(v); err != nil {
		return fmt.Errorf("encoding hello: %w", err)
	}
	if err := writeFrame(out, helloFrame{Payload: payload.Bytes()}); err != nil {
		return fmt.Errorf("sending hello: %w", err)
	}
	for {
		var req Req
		if err := readFrame(br, maxRequest, &req); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("reading request: %w", err)
		}
		if err := writeFrame(out, handle(req)); err != nil {
			return fmt.Errorf("sending reply: %w", err)
		}
	}
}

// decodeHello decodes the child's hello frame into v (a pointer, or nil).
func decodeHello(h helloFrame, v any) error {
	if h.Err != "" {
		return fmt.Errorf("child failed to start: %s", h.Err)
	}
	if v == nil {
		return nil
	}
	if err := gob.NewDecoder(bytes.NewReader(h.Payload)).Decode(v); err != nil {
		return fmt.Errorf("decoding hello: %w", err)
	}
	return nil
}

// LimitAddressSpace lowers the soft RLIMIT_AS to limit bytes (never above
// the hard limit), so a runaway allocation kills this process only. An
// idle Go process already reserves about 1.2 GiB of address space.
func LimitAddressSpace(limit int64) error {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &rl); err != nil {
		return fmt.Errorf("reading address-space limit: %w", err)
	}
	rl.Cur = min(uint64(limit), rl.Max)
	if err := syscall.Setrlimit(syscall.RLIMIT_AS, &rl); err != nil {
		return fmt.Errorf("limiting address space to %d bytes: %w", limit, err)
	}
	return nil
}

// LimitStack caps every goroutine's stack at n bytes (Go's default is
// 1 GB). Deep recursion on hostile input then dies of a stack overflow
// quickly and cheaply, instead of first growing a stack of hundreds of
// megabytes.
func LimitStack(n int) { debug.SetMaxStack(n) }

// WatchRSS starts a goroutine that ends the process, with a message the
// parent classifies as out of memory, once its resident set is over
// limit() bytes; it checks every interval. RLIMIT_AS cannot bound resident
// memory tightly, because the Go runtime reserves over a gigabyte of
// address space it never touches. limit is called each time, so a child
// may change it per request.
func WatchRSS(interval time.Duration, limit func() int64) {
	go func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for range t.C {
			rss := ResidentBytes()
			if l := limit(); l > 0 && rss > l {
				fmt.Fprintf(os.Stderr, "refbatch child: out of memory: resident %d bytes over the %d-byte cap\n", rss, l)
				os.Exit(3)
			}
		}
	}()
}

// ResidentBytes returns the process's resident set size, from
// /proc/self/statm; 0 if it cannot be read.
func ResidentBytes() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * int64(os.Getpagesize())
}
