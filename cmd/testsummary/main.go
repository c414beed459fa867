// Command testsummary runs go test with -json and prints what go test
// prints without it (each package's result line, and the output of the
// tests that failed), then the tests that skipped, counted by the reason
// they gave: a CI that lost PostgreSQL, root or a tool shows it in the
// last lines of make test instead of passing quietly.
//
//	go run ./cmd/testsummary [-skips FILE] go test -json [flags] [packages]
//
// -skips FILE writes the skips' count to FILE as well, for make test to
// print it again after the gates that follow. It exits with go test's
// status. Skips without a reason count under
// "(no reason given)".
package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
)

// event is one line of go test -json (cmd/test2json).
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	ImportPath string // build-output
}

// skip is one reason tests gave for skipping, and who gave it.
type skip struct {
	reason string
	tests  []string
}

func main() {
	args, skipsFile := os.Args[1:], ""
	if len(args) >= 2 && args[0] == "-skips" {
		skipsFile, args = args[1], args[2:]
	}
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: testsummary [-skips FILE] go test -json [flags] [packages]")
		os.Exit(2)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stderr = os.Stdin, os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(2)
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(2)
	}
	skips := render(out, os.Stdout)
	err = cmd.Wait()
	var summary strings.Builder
	report(&summary, skips)
	fmt.Print(summary.String())
	if skipsFile != "" {
		if err := os.WriteFile(skipsFile, []byte(summary.String()), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "testsummary:", err)
		}
	}
	if err != nil {
		if exit, ok := err.(*exec.ExitError); ok {
			os.Exit(exit.ExitCode())
		}
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(2)
	}
}

// located is the file:line go test puts before a test's log line.
var located = regexp.MustCompile(`^[\w.-]+\.go:\d+:\s*`)

// render copies go test's output from the JSON stream r to w as go test
// prints it without -json, and returns the skips by reason.
func render(r io.Reader, w io.Writer) map[string]*skip {
	skips := map[string]*skip{}
	held := map[string][]string{} // a running test's output, by package and test
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			fmt.Fprintf(w, "%s\n", line)
			continue
		}
		key := e.Package + " " + e.Test
		switch {
		case e.Action == "build-output":
			fmt.Fprint(w, e.Output)
		case e.Action == "output" && e.Test == "":
			if e.Output != "PASS\n" && !strings.HasPrefix(e.Output, "testing: warning: no tests to run") {
				fmt.Fprint(w, e.Output)
			}
		case e.Action == "output":
			held[key] = append(held[key], e.Output)
		case e.Test == "":
		case e.Action == "fail":
			// The "--- FAIL" line first, then what the test logged, as
			// go test without -json prints them.
			out := slices.DeleteFunc(held[key], func(o string) bool { return strings.HasPrefix(o, "=== ") })
			slices.SortStableFunc(out, func(a, b string) int {
				return cmp.Compare(btoi(!strings.Contains(a, "--- FAIL: ")), btoi(!strings.Contains(b, "--- FAIL: ")))
			})
			for _, o := range out {
				fmt.Fprint(w, o)
			}
			delete(held, key)
		case e.Action == "skip":
			reason := skipReason(held[key])
			s := skips[reason]
			if s == nil {
				s = &skip{reason: reason}
				skips[reason] = s
			}
			s.tests = append(s.tests, strings.TrimPrefix(e.Package, "github.com/refbatch/refbatch/")+" "+e.Test)
			delete(held, key)
		case e.Action == "pass":
			delete(held, key)
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(w, "testsummary: reading go test's output:", err)
	}
	return skips
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// skipReason is what a skipped test logged last (t.Skip's message, which
// go test prints just before the "--- SKIP" line), without its file:line.
func skipReason(output []string) string {
	reason := ""
	for _, o := range output {
		o = strings.TrimSpace(o)
		if o != "" && !strings.HasPrefix(o, "=== ") && !strings.HasPrefix(o, "--- SKIP: ") {
			reason = located.ReplaceAllString(o, "")
		}
	}
	if reason == "" {
		return "(no reason given)"
	}
	return reason
}

// report prints the skips, the most frequent reason first, each with the
// first test that gave it.
func report(w io.Writer, skips map[string]*skip) {
	var all []*skip
	n := 0
	for _, s := range skips {
		all = append(all, s)
		n += len(s.tests)
	}
	if n == 0 {
		fmt.Fprintln(w, "skipped: none")
		return
	}
	slices.SortFunc(all, func(a, b *skip) int {
		return cmp.Or(cmp.Compare(len(b.tests), len(a.tests)), strings.Compare(a.reason, b.reason))
	})
	fmt.Fprintf(w, "skipped: %d tests and subtests, by reason:\n", n)
	for _, s := range all {
		slices.Sort(s.tests)
		fmt.Fprintf(w, "%5d  %s (%s", len(s.tests), s.reason, s.tests[0])
		if len(s.tests) > 1 {
			fmt.Fprintf(w, " and %d more", len(s.tests)-1)
		}
		fmt.Fprintln(w, ")")
	}
}
