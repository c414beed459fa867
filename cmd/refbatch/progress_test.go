package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/refbatch/refbatch/batch"
	"github.com/refbatch/refbatch/report/outcome"
)

// tinyManifest writes five rows made of tiny referrals: two
// read (done), one refused at admission (bad_date), the first again (a
// duplicate) and the second with another file (a conflict), in a folder of
// their own (run it with --root).
func tinyManifest(t *testing.T) (path, root string) {
	t.Helper()
	root = t.TempDir()
	a, b, rescan := tinyRow(t, root, "S-1", 801), tinyRow(t, root, "S-2", 802), tinyRow(t, root, "S-2-rescan", 803)
	rescan[0], rescan[1], rescan[2] = b[0], b[1], b[2]
	bad := a
	bad[0], bad[2] = "S-3", "2024-02-30"
	return writeRows(t, root, [][4]string{a, b, bad, a, rescan}), root
}

// smallRunArgs runs the tiny manifest into out.
func smallRunArgs(out, manifest, root string, extra ...string) []string {
	args := append(runArgs(out, "--root", root), extra...)
	return append(args, manifest)
}

// barMarks are what only the progress bar prints (the summary says
// pages/min too).
var barMarks = []string{"documents ·", "pages/min ·", "ETA "}

func hasBar(s string) bool {
	for _, m := range barMarks {
		if strings.Contains(s, m) {
			return true
		}
	}
	return strings.Contains(s, "\r")
}

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// TestProgressBarOnTerminal runs `refbatch run` with stderr on a
// pseudo-terminal (util-linux script) and stdout to a file: the bar is on
// the terminal, and stdout holds the summary and no bar. (The runs of the
// other tests have no terminal and check that no bar shows there.)
func TestProgressBarOnTerminal(t *testing.T) {
	t.Parallel()
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("script (util-linux) not found: cannot make a pseudo-terminal")
	}
	// Tiny referrals, each page slowed so that the bar has time to draw
	// (the bar is the point, not the reading).
	manifest, root := tinyManifest(t)
	dir := t.TempDir()
	var words []string
	for _, a := range append([]string{binary}, smallRunArgs(filepath.Join(dir, "out"), manifest, root)...) {
		words = append(words, shellQuote(a))
	}
	stdout := filepath.Join(dir, "stdout.txt")
	cmd := exec.Command(script, "-qec", strings.Join(words, " ")+" >"+shellQuote(stdout), "/dev/null")
	cmd.Env = append(os.Environ(), "TERM=xterm", "COLUMNS=160", "REFBATCH_TEST_FAULTS=slow1s=*")
	var tty bytes.Buffer
	cmd.Stdout, cmd.Stderr = &tty, &tty
	if err := cmd.Run(); exitStatus(err) != exitNeedsPerson {
		t.Fatalf("%v\n%s", err, tty.String())
	}
	term := tty.String()
	for _, want := range append([]string{"pages/min", "% |"}, barMarks...) {
		if !strings.Contains(term, want) {
			t.Errorf("the terminal shows no %q:\n%q", want, term)
		}
	}
	if strings.Contains(term, "level=INFO") {
		t.Errorf("info logs printed under the bar:\n%s", term)
	}
	b, err := os.ReadFile(stdout)
	if err != nil {
		t.Fatal(err)
	}
	if hasBar(string(b)) {
		t.Errorf("the bar reached stdout:\n%q", b)
	}
	if !strings.Contains(string(b), "report:") || strings.Contains(term, "report:") {
		t.Errorf("the summary is not on stdout alone:\nstdout %q\nterminal %q", b, term)
	}
}

// TestJSONEvents: --json prints one JSON event per line on stdout and
// nothing else there; every row ends with one finished event, and the
// last line is the summary: counts, exit code, report paths. The tiny
// manifest's three bad rows need a person: exit 4, said on stderr too.
func TestJSONEvents(t *testing.T) {
	t.Parallel()
	manifest, root := tinyManifest(t)
	r := refbatch(t, nil, smallRunArgs(filepath.Join(t.TempDir(), "out"), manifest, root, "--json")...)
	if r.code != exitNeedsPerson {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	kinds := map[string]int{}
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	n := 0
	var last summaryEvent
	for sc.Scan() {
		n++
		var e map[string]any
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("stdout line %d is not JSON: %v\n%q", n, err, sc.Text())
		}
		kind, _ := e["event"].(string)
		switch batch.EventKind(kind) {
		case batch.EventAdmitted, batch.EventStarted, batch.EventPageDone:
		case batch.EventFinished:
			if e["state"] == "" || e["state"] == nil {
				t.Errorf("finished event without a state: %s", sc.Text())
			}
		case "summary":
			if err := json.Unmarshal(sc.Bytes(), &last); err != nil {
				t.Fatal(err)
			}
		default:
			t.Errorf("line %d: unknown event %q", n, kind)
		}
		if _, err := time.Parse(time.RFC3339Nano, e["time"].(string)); err != nil {
			t.Errorf("line %d: time %v", n, e["time"])
		}
		kinds[kind]++
	}
	if kinds["finished"] != 5 || kinds["page_done"] == 0 || kinds["started"] == 0 || kinds["admitted"] == 0 {
		t.Errorf("events %v, want one finished per row (5) and some of every kind", kinds)
	}
	if kinds["summary"] != 1 || last.Kind != "summary" {
		t.Fatalf("stdout does not end with one summary event:\n%s", lastLines(r.stdout, 2))
	}
	st := last.States
	if last.Exit != exitNeedsPerson || last.Rows != 5 || st[outcome.Done] != 2 || st[outcome.Rejected] != 2 || st[outcome.Duplicate] != 1 ||
		last.Reports.HTML == "" || last.Pages == 0 {
		t.Errorf("summary %+v, want 5 rows (2 done, 2 rejected, 1 duplicate), exit 4 and the reports", last)
	}
	if !strings.Contains(r.stderr, "refbatch: 2 rows need a person: ") || !strings.Contains(r.stderr, " rejected ") ||
		!strings.Contains(r.stderr, ": see "+last.Reports.HTML) || last.NeedPerson != 2 {
		t.Errorf("stderr does not say that 2 rows need a person:\n%s", r.stderr)
	}
	if hasBar(r.stderr) {
		t.Errorf("a bar without a terminal:\n%s", r.stderr)
	}
}

// testBar is a bar on a terminal of cols columns, with a clock the test
// moves.
func testBar(t *testing.T, total, cols int) (p *barProgress, now *time.Time) {
	t.Helper()
	var w bytes.Buffer
	p = newBarProgress(&w, total)
	t.Cleanup(p.Close)
	start := time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)
	now = &start
	p.mu.Lock()
	p.start, p.now, p.columns = start, func() time.Time { return *now }, func() int { return cols }
	p.mu.Unlock()
	return p, now
}

// TestBarDescription feeds events to the bar with a fixed clock.
func TestBarDescription(t *testing.T) {
	t.Parallel()
	p, now := testBar(t, 10, 160)
	if got := p.describeNow(); got != "documents · 0 pages · 0 pages/min · ETA -- · 0 in review" {
		t.Errorf("at start: %q", got)
	}
	// A minute in: 2 rows finished (one resumed, one in review), 6 pages.
	p.Event(batch.Event{Kind: batch.EventFinished, State: "done", Resumed: true})
	for range 6 {
		*now = now.Add(10 * time.Second)
		p.Event(batch.Event{Kind: batch.EventPageDone})
	}
	p.Event(batch.Event{Kind: batch.EventFinished, State: "review"})
	// One row of this run's own is too little for an estimate.
	if got, want := p.describeNow(), "documents · 6 pages · 6 pages/min · ETA -- · 1 in review"; got != want {
		t.Errorf("after a minute: %q, want %q", got, want)
	}
	for range 6 {
		*now = now.Add(10 * time.Second)
		p.Event(batch.Event{Kind: batch.EventPageDone})
	}
	p.Event(batch.Event{Kind: batch.EventFinished, State: "done"})
	// Two rows of 6 pages, 6 pages a minute: 7 rows left are 42 pages,
	// 7 minutes.
	if got, want := p.describeNow(), "documents · 12 pages · 6 pages/min · ETA 7m · 1 in review"; got != want {
		t.Errorf("after two minutes: %q, want %q", got, want)
	}
	// Ten minutes of nothing: the window holds no page, the rate falls
	// to zero and the estimate is unknown, as a stall should read.
	*now = now.Add(10 * time.Minute)
	if got, want := p.describeNow(), "documents · 12 pages · 0 pages/min · ETA -- · 1 in review"; got != want {
		t.Errorf("after a stall: %q, want %q", got, want)
	}
}

// TestBarETASteady: a resume (half the rows final at once) then a page
// every 10 s, three pages a row, the bar redrawn every second: no
// estimate in the first 30 s, then every estimate within a fifth of the
// truth (the rows left × 30 s), never the seconds a first quick page
// would suggest.
func TestBarETASteady(t *testing.T) {
	t.Parallel()
	const total = 40
	p, now := testBar(t, total, 160)
	for range total / 2 {
		p.Event(batch.Event{Kind: batch.EventFinished, State: "done", Resumed: true})
	}
	done, shown := total/2, 0
	for sec := 1; sec <= 15*60 && done < total; sec++ {
		*now = now.Add(time.Second)
		if sec%10 == 0 {
			p.Event(batch.Event{Kind: batch.EventPageDone})
			if sec%30 == 0 {
				p.Event(batch.Event{Kind: batch.EventFinished, State: "done"})
				done++
			}
		}
		got := p.describeNow()
		_, eta, ok := strings.Cut(got, "ETA ")
		if !ok || strings.HasPrefix(eta, "--") || strings.HasPrefix(eta, "finishing") {
			continue
		}
		if sec < 40 {
			t.Fatalf("an estimate at %d s, before enough was seen: %q", sec, got)
		}
		d, err := time.ParseDuration(strings.Fields(eta)[0])
		if err != nil {
			t.Fatalf("%q: %v", got, err)
		}
		// Until a few rows are finished, the pages of the rows in
		// flight weigh on the pages a row costs: within a factor of 2; from
		// three minutes, within a fifth.
		truth := time.Duration(total-done) * 30 * time.Second
		lo, hi := truth/2, truth*2
		if sec >= 180 {
			lo, hi = truth*4/5, truth*6/5+10*time.Second
		}
		if d < lo || d > hi {
			t.Errorf("at %d s: ETA %s, want about %s", sec, d, truth)
		}
		shown++
	}
	if shown < 100 {
		t.Errorf("%d estimates shown, want one a second once enough was seen", shown)
	}
}

// TestBarFitsTerminal: the line (percentage, a bar of minBarWidth, count,
// clock and description) fits 60, 80 and 120 columns, with large counts
// and a long estimate (the description keeps the estimate at least), and
// a wide terminal gets the whole description.
func TestBarFitsTerminal(t *testing.T) {
	t.Parallel()
	for _, cols := range []int{60, 80, 120} {
		p, now := testBar(t, 100000, cols)
		for range 3 {
			p.Event(batch.Event{Kind: batch.EventFinished, State: "done"})
		}
		for range 5000 {
			*now = now.Add(time.Second / 10)
			p.Event(batch.Event{Kind: batch.EventPageDone})
		}
		for range 999 {
			p.Event(batch.Event{Kind: batch.EventFinished, State: "review"})
		}
		*now = now.Add(3 * time.Hour)
		p.Event(batch.Event{Kind: batch.EventPageDone})
		p.mu.Lock()
		desc := p.describe()
		width := fixedWidth(p.done, p.total, now.Sub(p.start)) + utf8.RuneCountInString(desc)
		p.mu.Unlock()
		if width > cols {
			t.Errorf("%d columns: the line is %d wide: %q", cols, width, desc)
		}
		if !strings.Contains(desc, "ETA ") {
			t.Errorf("%d columns: %q lacks the estimate", cols, desc)
		}
		if cols >= 120 && !strings.HasPrefix(desc, "documents · ") {
			t.Errorf("%d columns: %q, want the whole description", cols, desc)
		}
	}
}

// describeNow is describe with the lock taken, for tests.
func (p *barProgress) describeNow() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.describe()
}
