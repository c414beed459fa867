package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/refbatch/refbatch/batch/desk"
	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/batch/review"
	"github.com/refbatch/refbatch/ocr"
	"github.com/refbatch/refbatch/ocr/child"
	"github.com/refbatch/refbatch/ocr/view"
)

// deskOptions are refbatch desk's flags.
type deskOptions struct {
	out, journal, identity, listen, user string
	anyAddress, verbose                  bool
}

func deskCommand() *cli.Command {
	var o deskOptions
	return &cli.Command{
		Name:  "desk",
		Usage: "review the batch in a browser: the page, the text and the decision on one screen",
		Description: `Serves the review desk, a local web application over the batch's journal,
and prints its address and a one-time code: open the address and enter the
code, which opens one browser session (its own cookie) and is then used up.
The code is never part of a URL, so no browser history holds it; share it
with no one. For another browser (or after closing this one) press Enter
where refbatch desk runs, or send it SIGHUP: it prints a new code, and a
code not used yet stops working. Sessions end when the desk stops. One document at a time: the page image
(rendered on demand in a supervised child, never written to disk) with the
words read drawn over it (low-confidence words marked, unread regions and
handwriting outlined), the text, the manifest's fields and where the text
has them, the reason and its explanation (for a handwritten note not
transcribed, the pages it is on, in the queue too), the source path as the manifest
says it now, and the history. Decide with accept, reject or retry (with a
dpi), one document or all selected (a whole reason at once), with one note:
each decision goes through the journal transaction of refbatch review, is
recorded with the user and the host, and is refused when the document
changed since it was shown (another tab, refbatch review, a run).
The rejected rows are listed with their detail and advice and whether they
are open or dismissed; an open one is dismissed there with a note, as
refbatch review dismiss does. A reject, and a decision about several
documents, asks once; the Undo beside a decision's message takes it back
(refbatch review undo), and a transcription is withdrawn with the button
beside it (refbatch review withdraw). A page turned to is shown only once
its image has come; a legend names the outlines; a region to transcribe
is named by its page and place in words; an empty lane says so, with its
buttons disabled.

Keys: j/k next/previous document, a accept, r reject, t retry, x select,
n note, [ and ] page.

It listens on 127.0.0.1, on a random port unless --listen says otherwise;
an address other than loopback also needs --listen-any-address (anyone who
can reach it and has a code sees the documents). The session is a cookie
(HttpOnly, SameSite=Strict); every change needs its CSRF token; the Host
header is checked; nothing is cached by the browser. Ctrl-C stops it.

Exit status: 0 stopped by Ctrl-C or SIGTERM; 1 unexpected failure; 2 usage
error (no batch there, a non-loopback address without
--listen-any-address, encrypted artifacts and no --identity).`,
		Flags: []cli.Flag{
			outFlag(&o.out, "the output folder"),
			journalFlag(&o.journal),
			&cli.StringFlag{Name: "identity", Aliases: []string{"i"}, Usage: "age identity file `FILE`, to show encrypted artifacts' text", Destination: &o.identity},
			&cli.StringFlag{Name: "listen", Usage: "listen on `ADDR` (host:port)", Value: "127.0.0.1:0", Destination: &o.listen},
			&cli.BoolFlag{Name: "listen-any-address", Usage: "allow a --listen address other than loopback", Destination: &o.anyAddress},
			&cli.StringFlag{Name: "user", Usage: "who decides `NAME`", DefaultText: "$USER", Destination: &o.user},
			&cli.BoolFlag{Name: "verbose", Usage: "log each request (method, route, status; never a query or a document)", Destination: &o.verbose},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 0 {
				return usageErr("desk takes no arguments", "refbatch desk [--out DIR] [--identity FILE] [--listen ADDR]")
			}
			p, err := placeOf(c, o.out, o.journal)
			if err != nil {
				return err
			}
			return runDesk(c.Context, o, p, os.Stdin, c.App.Writer, c.App.ErrWriter)
		},
	}
}

// runDesk serves the desk until ctx ends.
func runDesk(ctx context.Context, o deskOptions, p layout.Place, stdin io.Reader, stdout, stderr io.Writer) error {
	host, _, err := net.SplitHostPort(o.listen)
	if err != nil {
		return usageErrf("--listen 127.0.0.1:8080, or 127.0.0.1:0 for a random port", "--listen %q: %w", o.listen, err)
	}
	if ip := net.ParseIP(host); (ip == nil || !ip.IsLoopback()) && host != "localhost" {
		if !o.anyAddress {
			return usageErr(fmt.Sprintf("--listen %s is not a loopback address: anyone who reaches it with the URL sees the documents", o.listen),
				"add --listen-any-address if that is meant, or listen on 127.0.0.1")
		}
		fmt.Fprintf(stderr, "refbatch: warning: the desk listens on %s, not only on this machine: anyone who reaches it with the URL sees the documents\n", o.listen)
	}
	ids, err := loadIdentities(o.identity, stderr)
	if err != nil {
		return err
	}
	// The batch must be there before anything listens.
	if _, err := review.DeskQueue(p); err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	if o.user == "" {
		o.user = currentUser()
	}
	hostname, _ := os.Hostname()
	pool := view.NewPool(view.Config{Command: child.Command{Path: exe, Args: []string{viewChildCommand}}})
	defer pool.Close()
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return usageErrf("pick another --listen address", "listening on %s: %w", o.listen, err)
	}
	addr := ln.Addr().String()
	cfg := desk.Config{Place: p, Identities: ids, View: pool, User: o.user, Host: hostname, CheckLanguages: ocr.CheckLanguages}
	if o.verbose {
		cfg.Log = slog.New(slog.NewTextHandler(stderr, nil))
	}
	d := desk.New(cfg, addr)
	// Requests are of the command's context: a signal stops the reads in
	// progress at once, rather than after Shutdown's wait.
	srv := &http.Server{Handler: d, BaseContext: func(net.Listener) context.Context { return ctx }, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, IdleTimeout: 2 * time.Minute,
		MaxHeaderBytes: 64 << 10, ErrorLog: slog.NewLogLogger(slog.NewTextHandler(io.Discard, nil), slog.LevelError)}
	// SIGHUP asks for a new code from before the first is printed: one
	// sent as soon as it is read must not end the desk.
	more := newCodes(ctx, stdin)
	defer more.stop()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	fmt.Fprintf(stdout, "http://%s/\ncode %s\n", addr, d.Code())
	fmt.Fprintln(stderr, "refbatch: the review desk is open at the address above: open it and enter the code, which opens one browser session; "+
		"press Enter or send SIGHUP for another code; Ctrl-C stops it")
	for {
		select {
		case err := <-done:
			return err
		case <-more.c:
			fmt.Fprintf(stdout, "code %s\n", d.NewCode())
			continue
		case <-ctx.Done():
		}
		break
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	fmt.Fprintln(stderr, "refbatch: the review desk stopped")
	return nil
}

// codes tells runDesk when to print a new code: on SIGHUP, or on a line
// read from stdin (Enter in the terminal). A stdin at its end (not a
// terminal, /dev/null) asks for none.
type codes struct {
	c    chan struct{}
	stop func()
}

func newCodes(ctx context.Context, stdin io.Reader) codes {
	c := make(chan struct{}, 1)
	ask := func() {
		select {
		case c <- struct{}{}:
		default: // one is pending already
		}
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		for {
			select {
			case <-hup:
				ask()
			case <-ctx.Done():
				return
			}
		}
	}()
	if stdin != nil {
		go func() {
			buf := make([]byte, 256)
			for {
				n, err := stdin.Read(buf)
				if bytes.ContainsRune(buf[:n], '\n') && ctx.Err() == nil {
					ask()
				}
				if err != nil {
					return
				}
			}
		}()
	}
	return codes{c: c, stop: func() { signal.Stop(hup); cancel() }}
}
