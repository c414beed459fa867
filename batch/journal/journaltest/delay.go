package journaltest

import (
	"net"
	"net/url"
	"sync"
	"testing"
	"time"
)

// Delayed returns location, a postgres:// URL, with its host replaced by
// a proxy on loopback that adds rtt to every round trip to the server
// (half of it each way), as a network between machines does: a benchmark
// of the journal over a LAN on one machine. Bytes are delayed, not
// throttled: what is sent in a burst arrives in a burst, rtt/2 later. The
// proxy closes after t.
func Delayed(t testing.TB, location string, rtt time.Duration) string {
	t.Helper()
	u, err := url.Parse(location)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	target := u.Host
	var conns sync.WaitGroup
	t.Cleanup(func() { l.Close(); conns.Wait() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns.Go(func() { delayConn(c, target, rtt/2) })
		}
	}()
	u.Host = l.Addr().String()
	return u.String()
}

// delayConn carries client's bytes to a new connection to target and
// back, each way delay later than they came.
func delayConn(client net.Conn, target string, delay time.Duration) {
	defer client.Close()
	server, err := net.Dial("tcp", target)
	if err != nil {
		return
	}
	defer server.Close()
	var both sync.WaitGroup
	both.Go(func() { delayCopy(server, client, delay) })
	both.Go(func() { delayCopy(client, server, delay) })
	both.Wait()
}

// delayCopy writes what src reads to dst, each read delay after it came;
// at src's end it ends dst's writing side, so that the other way ends
// too.
func delayCopy(dst, src net.Conn, delay time.Duration) {
	type chunk struct {
		b   []byte
		due time.Time
	}
	// Sized so that the reader never waits for the writer behind it:
	// a chunk is one protocol message or a few.
	chunks := make(chan chunk, 4096)
	go func() {
		defer close(chunks)
		for {
			b := make([]byte, 32<<10)
			n, err := src.Read(b)
			if n > 0 {
				chunks <- chunk{b[:n], time.Now().Add(delay)}
			}
			if err != nil {
				return
			}
		}
	}()
	failed := false
	for c := range chunks {
		if failed {
			continue // drained, so that the reader ends
		}
		sleepUntil(c.due)
		if _, err := dst.Write(c.b); err != nil {
			failed = true
			src.Close()
		}
	}
	if tc, ok := dst.(*net.TCPConn); ok {
		tc.CloseWrite()
	} else {
		dst.Close()
	}
}

// sleepUntil returns at due, or soon after. The runtime's timers wake no
// sooner than about a millisecond on some machines (a VM's), coarser than
// the round trips Delayed adds; the thread's own sleep (sleepFor) is
// finer but overshoots by a tenth of a millisecond or so, so it sleeps
// half of what is left until what is left is under that.
func sleepUntil(due time.Time) {
	for left := time.Until(due); left > 40*time.Microsecond; left = time.Until(due) {
		sleepFor(left / 2)
	}
}
