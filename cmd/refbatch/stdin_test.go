package main

import (
	"bytes"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// refbatchStdin runs refbatch in dir with stdin as its standard input.
func refbatchStdin(t *testing.T, dir, stdin string, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir, cmd.Stdin = dir, strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	if err != nil {
		r.code = exitStatus(err)
	}
	return r
}

// TestManifestFromStdin: `run -` reads the manifest from the standard
// input, records "-" and the bytes' SHA-256 (not the bytes), and reruns
// with the same bytes as a file's rerun; a manifest too large or empty is
// a usage error. The row is rejected at admission: no OCR.
func TestManifestFromStdin(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	csv := "source_id,participant_id,referral_date,consent,path\nR-1,P-1,2024-01-01,yes,missing.pdf\n"
	for i := range 2 {
		r := refbatchStdin(t, dir, csv, append(runArgs(out), "-")...)
		if r.code != exitNeedsPerson || strings.Contains(r.stderr, "stat -") {
			t.Fatalf("run %d of -: exit %d, want %d\n%s%s", i+1, r.code, exitNeedsPerson, r.stdout, r.stderr)
		}
	}
	db, err := sql.Open("sqlite", filepath.Join(out, "journal.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var rows int
	if err := db.QueryRow(`SELECT COUNT(*) FROM rows WHERE manifest='-'`).Scan(&rows); err != nil || rows != 1 {
		t.Errorf("rows of manifest -: %d (%v), want 1 over two runs", rows, err)
	}
	sum := sha256.Sum256([]byte(csv))
	var settings []string
	q, err := db.Query(`SELECT settings FROM runs ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	for q.Next() {
		var s string
		if err := q.Scan(&s); err != nil {
			t.Fatal(err)
		}
		settings = append(settings, s)
	}
	q.Close()
	if len(settings) != 2 {
		t.Fatalf("%d runs recorded, want 2", len(settings))
	}
	for _, s := range settings {
		if !strings.Contains(s, `"manifest":"-"`) || !strings.Contains(s, `"stdin_sha256":"`+hex.EncodeToString(sum[:])+`"`) {
			t.Errorf("a run's settings do not record - and its SHA-256: %s", s)
		}
		if strings.Contains(s, "P-1") {
			t.Errorf("a run's settings hold the manifest's text: %s", s)
		}
	}
	// status cannot read the manifest: it counts the rows the run recorded.
	if st := refbatch(t, nil, "status", "--out", out); st.code != 0 || !strings.Contains(st.stdout, "batch       complete") ||
		!strings.Contains(st.stdout, "-  1 rows, 1 recorded") {
		t.Errorf("status of a batch of -: exit %d\n%s", st.code, st.stdout)
	}
	if r := refbatchStdin(t, dir, "", append(runArgs(filepath.Join(dir, "out2")), "-")...); r.code != exitUsage {
		t.Errorf("run - with an empty standard input: exit %d, want %d\n%s", r.code, exitUsage, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "-")); err == nil {
		t.Error("the run wrote a file named -")
	}
}

// TestWithFinalNewline: show adds a newline to a text without one, and
// only then.
func TestWithFinalNewline(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"": "", "a": "a\n", "a\fb": "a\fb\n", "a\n": "a\n", "a\f": "a\f\n"} {
		if got := withFinalNewline(in); got != want {
			t.Errorf("withFinalNewline(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRunSummaryConventions: a run's summary says this run's time and
// the batch's, `within slo` says n/a when no document was done or due,
// and status names no outbox when no notification was configured. The
// row is rejected at admission: no OCR.
func TestRunSummaryConventions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out, manifest := filepath.Join(dir, "out"), filepath.Join(dir, "m.csv")
	csv := "source_id,participant_id,referral_date,consent,path\nR-1,P-1,2024-01-01,yes,missing.pdf\n"
	if err := os.WriteFile(manifest, []byte(csv), 0o600); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		r := refbatch(t, nil, append(runArgs(out), manifest)...)
		if r.code != exitNeedsPerson {
			t.Fatalf("run %d: exit %d\n%s%s", i+1, r.code, r.stdout, r.stderr)
		}
		var timeLine, sloLine string
		for _, l := range strings.Split(r.stdout, "\n") {
			switch {
			case strings.HasPrefix(l, "time "):
				timeLine = l
			case strings.HasPrefix(l, "within slo "):
				sloLine = l
			}
		}
		if !strings.Contains(timeLine, " this run; ") || !strings.HasSuffix(timeLine, " cpu in all") {
			t.Errorf("run %d: the time line does not say this run's and the batch's: %q", i+1, timeLine)
		}
		if !strings.Contains(sloLine, "n/a") || strings.Contains(sloLine, "%") {
			t.Errorf("run %d: within slo with no document: %q, want n/a", i+1, sloLine)
		}
	}
	st := refbatch(t, nil, "status", "--out", out)
	if st.code != 0 || strings.Contains(st.stdout, "outbox") || strings.Contains(st.stdout, "notify") {
		t.Errorf("status with no notifications configured: exit %d\n%s", st.code, st.stdout)
	}
}
