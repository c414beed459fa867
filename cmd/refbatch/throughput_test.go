package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/refbatch/refbatch/batch/journal/journaltest"
)

// ThroughputEnv, set to a number of documents, runs TestBatchThroughput;
// ThroughputBeforeEnv names another build's refbatch binary to run beside
// this one.
// ThroughputWorkersEnv lists the worker counts ("2,8"; 2, 8 and 32 when
// unset).
const (
	ThroughputEnv        = "REFBATCH_BENCH_BATCH"
	ThroughputBeforeEnv  = "REFBATCH_BENCH_BATCH_BEFORE"
	ThroughputWorkersEnv = "REFBATCH_BENCH_BATCH_WORKERS"
)

// TestBatchThroughput is issue 52's batch: N one-page born-digital
// letters (their text layer read, next to no OCR), one `run --workers W`
// on a PostgreSQL journal, W = 2, 8 and 32, for the binary
// ThroughputBeforeEnv names and then for this one, case by case, each in
// a schema of its own: documents a second, with the machine's load
// average as each run began. Run it under .ci/with-postgres --fsync on.
func TestBatchThroughput(t *testing.T) {
	n, err := strconv.Atoi(os.Getenv(ThroughputEnv))
	if err != nil || n <= 0 {
		t.Skip(ThroughputEnv + " is not set to a number of documents: the throughput is not measured")
	}
	journaltest.Postgres(t) // skips without PostgreSQL
	dir := t.TempDir()
	docs := filepath.Join(dir, "docs")
	os.Mkdir(docs, 0o755)
	var b strings.Builder
	b.WriteString("source_id,participant_id,referral_date,consent,path,sha256\n")
	for i := range n {
		g := tinyRow(t, docs, fmt.Sprintf("T-%05d", i), 5000+i)
		fmt.Fprintf(&b, "%s,%s,%s,yes,%s,\n", g[0], g[1], g[2], g[3])
	}
	manifest := filepath.Join(dir, "manifest.csv")
	if err := os.WriteFile(manifest, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	builds := [][2]string{{"after", binary}}
	if before := os.Getenv(ThroughputBeforeEnv); before != "" {
		builds = [][2]string{{"before", before}, {"after", binary}}
	}
	table := []string{"| workers | build | docs/s | seconds | load (1 min) |", "|---:|---|---:|---:|---:|"}
	workers := []int{2, 8, 32}
	if v := os.Getenv(ThroughputWorkersEnv); v != "" {
		workers = nil
		for _, f := range strings.Split(v, ",") {
			w, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || w <= 0 {
				t.Fatalf("%s=%q: not a list of worker counts", ThroughputWorkersEnv, v)
			}
			workers = append(workers, w)
		}
	}
	for _, w := range workers {
		for _, bld := range builds {
			t.Run(fmt.Sprintf("workers=%d/%s", w, bld[0]), func(t *testing.T) {
				url := journaltest.Postgres(t)
				load, _ := os.ReadFile("/proc/loadavg")
				cmd, stderr := startCommand(t, nil, bld[1], append(append([]string{"run", "--plaintext", "--journal", url,
					"--out", filepath.Join(t.TempDir(), "out"), "--root", "/", "--workers", strconv.Itoa(w)}, tinyFlags...), manifest)...)
				start := time.Now()
				err := cmd.Wait()
				secs := time.Since(start).Seconds()
				if code := exitStatus(err); code != 0 {
					t.Fatalf("exit %d\n%s", code, tail(stderr.String(), 2000))
				}
				l1, _, _ := strings.Cut(string(load), " ")
				table = append(table, fmt.Sprintf("| %d | %s | %.1f | %.1f | %s |", w, bld[0], float64(n)/secs, secs, l1))
			})
		}
	}
	t.Logf("%d one-page born-digital documents, one run on PostgreSQL:\n%s", n, strings.Join(table, "\n"))
}

// tail is the last n bytes of s.
func tail(s string, n int) string { return s[max(0, len(s)-n):] }
