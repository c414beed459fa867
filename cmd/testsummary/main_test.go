package main

import (
	"strings"
	"testing"
)

// TestRender: a stream of go test -json gives go test's plain output (the
// package lines, a failed test's output with its --- FAIL line first,
// nothing of passing or skipped tests) and the skips by reason, a skip
// without a message under "(no reason given)".
func TestRender(t *testing.T) {
	stream := `{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"output","Package":"p","Test":"TestA","Output":"    a_test.go:5: boom\n"}
{"Action":"output","Package":"p","Test":"TestA","Output":"--- FAIL: TestA (0.00s)\n"}
{"Action":"fail","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestB","Output":"    b_test.go:9: quiet\n"}
{"Action":"pass","Package":"p","Test":"TestB"}
{"Action":"output","Package":"p","Test":"TestC/postgres","Output":"    j.go:66: no PostgreSQL\n"}
{"Action":"output","Package":"p","Test":"TestC/postgres","Output":"--- SKIP: TestC/postgres (0.00s)\n"}
{"Action":"skip","Package":"p","Test":"TestC/postgres"}
{"Action":"output","Package":"q","Test":"TestD","Output":"    d_test.go:3: no PostgreSQL\n"}
{"Action":"skip","Package":"q","Test":"TestD"}
{"Action":"output","Package":"q","Test":"TestE","Output":"    e_test.go:3: \n"}
{"Action":"skip","Package":"q","Test":"TestE"}
{"Action":"output","Package":"p","Output":"FAIL\n"}
{"Action":"output","Package":"p","Output":"FAIL\tp\t0.1s\n"}
{"Action":"output","Package":"q","Output":"PASS\n"}
{"Action":"output","Package":"q","Output":"ok  \tq\t0.1s\n"}
not json
`
	var out, sum strings.Builder
	report(&sum, render(strings.NewReader(stream), &out))
	want := "--- FAIL: TestA (0.00s)\n    a_test.go:5: boom\nFAIL\nFAIL\tp\t0.1s\nok  \tq\t0.1s\nnot json\n"
	if out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out.String(), want)
	}
	wantSum := "skipped: 3 tests and subtests, by reason:\n    2  no PostgreSQL (p TestC/postgres and 1 more)\n    1  (no reason given) (q TestE)\n"
	if sum.String() != wantSum {
		t.Errorf("summary:\n%s\nwant:\n%s", sum.String(), wantSum)
	}
}
