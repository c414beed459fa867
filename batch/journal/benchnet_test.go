package journal

import (
	"bufio"
	"database/sql"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// benchRTTs are the round trips BenchmarkWorkers's live runs add between
// the workers and be's database: none on SQLite, which has no network.
func benchRTTs(be backend) []time.Duration {
	if be.name != "postgres" {
		return []time.Duration{0}
	}
	return []time.Duration{0, 500 * time.Microsecond, time.Millisecond}
}

// pingTime is the median time of a round trip to the database at the
// URL location (a statement that reads nothing), over 200.
func pingTime(b *testing.B, location string) time.Duration {
	b.Helper()
	db, err := sql.Open("pgx", location)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	times := make([]time.Duration, 200)
	for i := range times {
		start := time.Now()
		if _, err := conn.ExecContext(b.Context(), `SELECT 1`); err != nil {
			b.Fatal(err)
		}
		times[i] = time.Since(start)
	}
	slices.Sort(times)
	return times[len(times)/2]
}

// startCPU starts counting the machine's CPU time in use (every process's,
// the database's too; Linux's /proc/stat), and returns what stops it,
// which says the share of the machine's cores that was busy meanwhile (1:
// all of them), or -1 where /proc/stat cannot be read.
func startCPU() (stop func() float64) {
	busy0, all0 := cpuTimes()
	return func() float64 {
		busy1, all1 := cpuTimes()
		if all0 < 0 || all1 <= all0 {
			return -1
		}
		return float64(busy1-busy0) / float64(all1-all0)
	}
}

// cpuTimes are the machine's busy and total CPU ticks so far (-1: not
// known): busy is all but idle and iowait.
func cpuTimes() (busy, all int64) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return -1, -1
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadString('\n')
	fields := strings.Fields(line)
	if err != nil || len(fields) < 6 || fields[0] != "cpu" {
		return -1, -1
	}
	for i, s := range fields[1:] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return -1, -1
		}
		all += n
		if i != 3 && i != 4 { // idle, iowait
			busy += n
		}
	}
	return busy, all
}
