package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/journal/journaltest"
	"github.com/refbatch/refbatch/report/outcome"
)

// TestThreeHosts runs one batch on three hosts that share a PostgreSQL
// journal: each a network namespace of its own, reaching the database
// over its own address, with a host name of its own (so that no host can
// read another's process table: a dead host's leases end only by
// expiring). Host a runs the batch, b and c join it; a is killed mid-batch
// (every process it has, as a machine that loses power), while it holds
// leases and the manifest's admission. b and c finish the batch: every
// row final, every document done by exactly one attempt, one artifact
// each, and verify finds nothing.
//
// It needs root (network namespaces, veth pairs, host names) and
// REFBATCH_TEST_POSTGRES, and skips with a message without them.
func TestThreeHosts(t *testing.T) {
	if testing.Short() {
		t.Skip("three hosts take a minute")
	}
	base := journaltest.Postgres(t) // skips without PostgreSQL
	for _, tool := range []string{"ip", "unshare"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s: network namespaces cannot be made here", tool)
		}
	}
	pgAddr, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	hosts := []string{"a", "b", "c"}
	addrs := makeHosts(t, hosts)

	// Each host reaches PostgreSQL at its own gateway address, which this
	// process forwards to the database's own (on loopback, which no
	// namespace reaches).
	urls := map[string]string{}
	for _, h := range hosts {
		ln, err := net.Listen("tcp", addrs[h].gateway+":0")
		if err != nil {
			t.Fatal(err)
		}
		go forward(t, ln, pgAddr.Host)
		t.Cleanup(func() { ln.Close() })
		u := *pgAddr
		u.Host = ln.Addr().String()
		urls[h] = u.String()
	}

	dir := t.TempDir()
	manifest := bigManifest(t, dir, 24)
	out := filepath.Join(dir, "out")
	slow := "REFBATCH_TEST_FAULTS=slow300ms=*"
	hostRun := func(h string, args ...string) (*exec.Cmd, *bytes.Buffer) {
		// ip netns exec and unshare each exec the next: the process
		// started is refbatch itself, in a process group of its own.
		script := `hostname "$0" && exec "$@"`
		full := append([]string{"netns", "exec", addrs[h].netns, "unshare", "--uts", "sh", "-c", script, "host-" + h, binary}, args...)
		return startCommand(t, []string{slow, "TMPDIR=" + dir}, "ip", full...)
	}
	a, errA := hostRun("a", append(append([]string{"run", "--plaintext", "--journal", urls["a"], "--out", out, "--root", "/", "--workers", "1"},
		tinyFlags...), manifest)...)
	aDone := make(chan error, 1)
	go func() { aDone <- a.Wait() }()
	waitFor(t, 60*time.Second, func() bool { return strings.Contains(errA.String(), "document started") })

	type joined struct {
		cmd    *exec.Cmd
		stderr *bytes.Buffer
	}
	var joins []joined
	for _, h := range hosts[1:] {
		cmd, stderr := hostRun(h, "join", "--journal", urls[h], "--workers", "1")
		joins = append(joins, joined{cmd, stderr})
	}
	// Kill host a once the others have each finished a document, while
	// a is in the middle of one.
	waitFor(t, 120*time.Second, func() bool {
		return strings.Count(joins[0].stderr.String(), "document finished") >= 1 &&
			strings.Count(joins[1].stderr.String(), "document finished") >= 1
	})
	waitFor(t, 60*time.Second, func() bool {
		s := errA.String()
		return strings.LastIndex(s, "document started") > strings.LastIndex(s, "document finished")
	})
	syscall.Kill(-a.Process.Pid, syscall.SIGKILL)
	<-aDone
	killedAt := time.Now()
	t.Logf("host a killed after it started %d documents and finished %d", strings.Count(errA.String(), "document started"),
		strings.Count(errA.String(), "document finished"))

	for i, jn := range joins {
		done := make(chan error, 1)
		go func() { done <- jn.cmd.Wait() }()
		select {
		case err := <-done:
			if code := exitStatus(err); code != exitNeedsPerson {
				t.Errorf("host %s: join exit %d, want %d\n%s", hosts[i+1], code, exitNeedsPerson, jn.stderr)
			}
		case <-time.After(5 * time.Minute):
			syscall.Kill(-jn.cmd.Process.Pid, syscall.SIGKILL)
			t.Fatalf("host %s: join did not end\n%s", hosts[i+1], jn.stderr)
		}
	}
	t.Logf("b and c finished the batch %s after a was killed; b started %d documents, c %d", time.Since(killedAt).Round(time.Second),
		strings.Count(joins[0].stderr.String(), "document started"), strings.Count(joins[1].stderr.String(), "document started"))
	if !strings.Contains(joins[0].stderr.String()+joins[1].stderr.String(), "row admitted") {
		t.Error("neither b nor c admitted a row: a was killed after it had admitted them all, and the takeover of its admission went untested")
	}

	// Every row final, every document done once.
	j, err := journal.OpenReadOnly(base)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if queued, _, err := j.Unfinished(); err != nil || queued != 0 {
		t.Errorf("%d documents not final (%v)", queued, err)
	}
	ms, err := j.Manifests()
	if err != nil || len(ms) != 1 || ms[0].Rows != 24+4 {
		t.Errorf("manifests recorded: %+v, %v; want 28 rows of one", ms, err)
	}
	finishedOnce(t, base, out)
	states := rowStates(t, out)
	for id, s := range states {
		if strings.HasPrefix(id, "K-") && s != string(outcome.Done)+"/" {
			t.Errorf("%s: %s, want done", id, s)
		}
	}
	if r := refbatch(t, nil, "verify", "--journal", base); r.code != 0 {
		t.Errorf("verify: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// host is one test host: its network namespace and addresses.
type host struct{ netns, gateway, addr string }

// makeHosts makes a network namespace per name, joined to this one by a
// veth pair on a /30 of its own, and removes them after t; it skips t
// when they cannot be made.
func makeHosts(t *testing.T, names []string) map[string]host {
	t.Helper()
	ip := func(args ...string) error {
		out, err := exec.Command("ip", args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	tag := fmt.Sprintf("%04x", os.Getpid()&0xffff)
	if err := ip("netns", "add", "rb"+tag+"probe"); err != nil {
		t.Skipf("network namespaces cannot be made here (root is needed): %v", err)
	}
	ip("netns", "del", "rb"+tag+"probe")
	hosts := map[string]host{}
	for i, name := range names {
		ns, veth := "rb"+tag+name, "rb"+tag+name
		// 10.213.x.y/30, x from the pid so that parallel test runs do
		// not collide.
		sub := fmt.Sprintf("10.%d.%d.%d", 200+(os.Getpid()>>8)%50, os.Getpid()%256, 4*i)
		h := host{netns: ns, gateway: incr(sub, 1), addr: incr(sub, 2)}
		t.Cleanup(func() {
			ip("link", "del", veth+"g")
			ip("netns", "del", ns)
		})
		for _, args := range [][]string{
			{"netns", "add", ns},
			{"link", "add", veth + "g", "type", "veth", "peer", "name", veth + "h"},
			{"link", "set", veth + "h", "netns", ns},
			{"addr", "add", h.gateway + "/30", "dev", veth + "g"},
			{"link", "set", veth + "g", "up"},
			{"-n", ns, "addr", "add", h.addr + "/30", "dev", veth + "h"},
			{"-n", ns, "link", "set", veth + "h", "up"},
			{"-n", ns, "link", "set", "lo", "up"},
		} {
			if err := ip(args...); err != nil {
				t.Skipf("network namespaces cannot be made here: %v", err)
			}
		}
		hosts[name] = h
	}
	return hosts
}

// incr is the IPv4 address a, its last byte increased by n.
func incr(a string, n int) string {
	ip := net.ParseIP(a).To4()
	ip[3] += byte(n)
	return ip.String()
}

// forward relays every connection ln accepts to the address to, until ln
// is closed.
func forward(t *testing.T, ln net.Listener, to string) {
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			var d net.Dialer
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			up, err := d.DialContext(ctx, "tcp", to)
			cancel()
			if err != nil {
				t.Logf("forwarding to %s: %v", to, err)
				return
			}
			defer up.Close()
			done := make(chan struct{}, 2)
			pipe := func(dst, src net.Conn) {
				io.Copy(dst, src)
				if tc, ok := dst.(*net.TCPConn); ok {
					tc.CloseWrite()
				}
				done <- struct{}{}
			}
			go pipe(up, c)
			go pipe(c, up)
			<-done
			<-done
		}()
	}
}
