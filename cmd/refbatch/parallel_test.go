package main

import (
	"flag"
	"runtime"
	"strconv"
	"testing"
)

// The package's tests are of two kinds. Most wait: on slowed pages,
// kills, timeouts, a child stuck on purpose; they use little CPU, so many
// can run at once. A few read real documents with every engine the
// machine has (the sample, the real corpus, the hostile files, an eval):
// more than two of those at once only make each slower and bring page
// timeouts closer. So the waiting tests run many at a time and the
// reading ones two at a time beside them, instead of all the reading ones
// first, one after another, then the waiting ones, two at a time. Two,
// because one reading test alone leaves cores idle while it admits its
// rows, waits on its last document or runs a command that reads nothing.

// readers is how many reading tests run at once.
var readers = make(chan struct{}, 2)

// reads marks a test that reads documents with every engine: it runs in
// parallel with the waiting tests, and with one other reading test at
// most. Call it after the test's own skips.
func reads(t *testing.T) {
	t.Helper()
	t.Parallel()
	readers <- struct{}{}
	t.Cleanup(func() { <-readers })
}

// readsAlone is reads for a test that reads with every engine pages that
// take seconds of CPU each (the real corpus at 300 DPI): no other reading
// test runs beside it, so that its page timeouts keep the margin they
// have on a machine of its own.
func readsAlone(t *testing.T) {
	t.Helper()
	t.Parallel()
	for range cap(readers) {
		readers <- struct{}{}
	}
	t.Cleanup(func() {
		for range cap(readers) {
			<-readers
		}
	})
}

// widenParallel lets more waiting tests run at once than go test's
// default of one per core, unless -parallel was given.
func widenParallel() {
	if !flag.Parsed() {
		flag.Parse()
	}
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		flag.Set("test.parallel", strconv.Itoa(4*runtime.GOMAXPROCS(0)))
	}
}
