package main

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/notify"
)

// receiver is a webhook receiver on the loopback address: it records every
// request, answers 500 to the first fail attempts of each event, and holds
// requests while hold is set (a receiver that does not answer).
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	fail   int
	failed map[string]int // per event ID
	hold   chan struct{}  // closed: answer; nil: answer at once
	got    []request
}

type request struct {
	header http.Header
	body   []byte
	status int
	notice journal.Notice
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{failed: map[string]int{}}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		q := request{header: req.Header.Clone(), body: body, status: http.StatusOK}
		json.Unmarshal(body, &q.notice)
		if r.failed[q.notice.ID] < r.fail {
			r.failed[q.notice.ID]++
			q.status = http.StatusInternalServerError
		}
		hold := r.hold
		if hold != nil {
			q.status = 0 // never answered
		}
		r.got = append(r.got, q)
		r.mu.Unlock()
		if hold != nil {
			select {
			case <-hold:
			case <-req.Context().Done():
			}
			return
		}
		w.WriteHeader(q.status)
	}))
	t.Cleanup(r.Close)
	return r
}

// requests returns the requests so far.
func (r *receiver) requests() []request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]request(nil), r.got...)
}

// ofType returns the requests that carried an event of type typ.
func (r *receiver) ofType(typ string) []request {
	var out []request
	for _, q := range r.requests() {
		if q.notice.Type == typ {
			out = append(out, q)
		}
	}
	return out
}

func secretFile(t *testing.T, secret string) string {
	p := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(p, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestWebhooks is issue 21's acceptance 1, 2 and 5: a receiver that
// answers 500 three times gets batch_finished on the fourth attempt, same
// ID, validly signed; a forgery and a replay are refused by notify.Verify;
// the run's exit code and OCR time are those of a run without --notify;
// no body, header or log holds a participant ID or a source's path.
func TestWebhooks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// Tiny documents and the sample's bad rows: done and rejected rows,
	// read in a few seconds; in a folder of their own, which the log
	// must not name (it names the output folder).
	manifest := bigManifest(t, filepath.Join(dir, "in"), 3)
	plain := refbatch(t, nil, runArgs(filepath.Join(dir, "plain"), "--root", "/", manifest)...)

	rcv := newReceiver(t)
	rcv.fail = 3
	const secret = "test-secret-21"
	cmdOut := filepath.Join(dir, "cmd-events")
	out := filepath.Join(dir, "out")
	r := refbatch(t, nil, runArgs(out, "--notify", rcv.URL+"/hooks/refbatch", "--notify-secret-file", secretFile(t, secret),
		"--notify-cmd", "cat >> "+cmdOut+"; echo >> "+cmdOut, "--root", "/", manifest)...)
	if r.code != plain.code {
		t.Fatalf("exit %d with --notify, %d without\n%s", r.code, plain.code, r.stderr)
	}

	fin := rcv.ofType(journal.NoticeFinished)
	if len(fin) != 4 {
		t.Fatalf("%d batch_finished requests, want 4 (3 answered 500, then 200)", len(fin))
	}
	for i, q := range fin {
		if q.notice.ID != fin[0].notice.ID || q.header.Get("Refbatch-Event-Id") != fin[0].notice.ID {
			t.Errorf("attempt %d: ID %s, first %s", i+1, q.notice.ID, fin[0].notice.ID)
		}
		if want := map[bool]int{true: 200, false: 500}[i == 3]; q.status != want {
			t.Errorf("attempt %d answered %d, want %d", i+1, q.status, want)
		}
		if err := notify.Verify([]byte(secret), q.header.Get(notify.Header), q.body, time.Now(), 0); err != nil {
			t.Errorf("attempt %d: a valid request refused: %v", i+1, err)
		}
	}
	last := fin[3]
	var data struct {
		ExitCode int            `json:"exit_code"`
		Rows     map[string]int `json:"rows"`
		Custody  *journal.Root  `json:"custody"`
	}
	json.Unmarshal(last.notice.Data, &data)
	rep := readReport(t, out)
	if last.notice.Schema != journal.NotifySchema || !strings.HasPrefix(last.notice.BatchID, "refbatch-") || data.ExitCode != r.code ||
		data.Rows["rejected"] != rep.Summary.States["rejected"] || data.Custody == nil || data.Custody.Hash != rep.Custody.Root {
		t.Errorf("batch_finished %s, exit %d, report root %+v", last.body, r.code, rep.Custody)
	}
	if need := rcv.ofType(journal.NoticeNeedsPerson); len(need) != 4 || need[3].status != 200 {
		t.Errorf("rows_need_person: %d requests, want 4, the last answered", len(need))
	}

	// The documented routine refuses a forgery and a replay.
	forged := strings.Replace(string(last.body), `"rejected":`, `"rejected":1`, 1)
	if err := notify.Verify([]byte(secret), last.header.Get(notify.Header), []byte(forged), time.Now(), 0); !errors.Is(err, notify.ErrBadSignature) {
		t.Errorf("forged body: %v, want ErrBadSignature", err)
	}
	if err := notify.Verify([]byte("another"), last.header.Get(notify.Header), last.body, time.Now(), 0); !errors.Is(err, notify.ErrBadSignature) {
		t.Errorf("another secret: %v, want ErrBadSignature", err)
	}
	if err := notify.Verify([]byte(secret), last.header.Get(notify.Header), last.body, time.Now().Add(time.Hour), 0); !errors.Is(err, notify.ErrStale) {
		t.Errorf("replayed an hour later: %v, want ErrStale", err)
	}

	// The attempts are in the report and in status.
	attempts := -1
	for _, n := range rep.Notifications {
		if n.ID == last.notice.ID {
			for _, d := range n.Deliveries {
				if strings.HasPrefix(d.Target, "http://") {
					attempts = d.Attempts
				}
			}
		}
	}
	if attempts != 4 {
		t.Errorf("report: %d attempts for batch_finished, want 4: %+v", attempts, rep.Notifications)
	}
	st := refbatch(t, nil, "status", "--out", out)
	if !strings.Contains(st.stdout, "notify") || !strings.Contains(st.stdout, "0 pending") {
		t.Errorf("status does not show the deliveries:\n%s", st.stdout)
	}

	// The command target got each event once, the same bodies.
	lines, _ := os.ReadFile(cmdOut)
	if n := strings.Count(string(lines), `"type":"batch_finished"`); n != 1 || !strings.Contains(string(lines), last.notice.ID) {
		t.Errorf("--notify-cmd received batch_finished %d times:\n%s", n, lines)
	}

	// OCR time: the run's wall (its start to its end, before delivery)
	// is within noise of the run without --notify.
	without := readReport(t, filepath.Join(dir, "plain")).Run.WallSeconds
	with := rep.Run.WallSeconds
	t.Logf("OCR wall without --notify %.2fs, with (receiver failing 3 times) %.2fs; run command %s and %s",
		without, with, plain.elapsed.Round(time.Millisecond), r.elapsed.Round(time.Millisecond))
	if with > 1.5*without+2 {
		t.Errorf("the run took %.2fs with --notify, %.2fs without", with, without)
	}

	// Acceptance 5: no participant ID or source path anywhere the events
	// or the logs go.
	var haystack strings.Builder
	for _, q := range rcv.requests() {
		haystack.Write(q.body)
		for k, v := range q.header {
			haystack.WriteString(k + ": " + strings.Join(v, ",") + "\n")
		}
	}
	haystack.Write(lines)
	if strings.Contains(haystack.String(), dir) {
		t.Errorf("an event or its headers name a path under %s", dir)
	}
	haystack.WriteString(r.stderr)
	assertNoIdentifiers(t, haystack.String(), manifest)
}

// assertNoIdentifiers fails when text holds a participant ID or the path
// of a source or its folder. (The log names the output folder, as it
// always did: it is where the reports are.)
func assertNoIdentifiers(t *testing.T, text, manifest string) {
	t.Helper()
	needles := []string{sampleDir(t), filepath.Dir(manifest)}
	for _, row := range readCSV(t, manifest) {
		needles = append(needles, row["participant_id"], row["path"], filepath.Base(row["path"]))
	}
	for _, n := range needles {
		if n != "" && strings.Contains(text, n) {
			t.Errorf("%q found in the events, their headers or the log", n)
		}
	}
}

// TestWebhookAfterKill is acceptance 3: a run killed after its last
// document, while its receiver has not answered, leaves batch_finished in
// the outbox; refbatch notify delivers it once, with the same ID, and
// neither notify nor the next run sends it again.
func TestWebhookAfterKill(t *testing.T) {
	t.Parallel() // it waits on processes more than it computes
	dir := t.TempDir()
	manifest := bigManifest(t, dir, 2)
	out := filepath.Join(dir, "out")
	rcv := newReceiver(t)
	rcv.hold = make(chan struct{})
	secret := secretFile(t, "kill-secret")
	notifyArgs := []string{"--notify", rcv.URL, "--notify-secret-file", secret}

	cmd, stderr := start(t, nil, runArgs(out, append(notifyArgs, "--root", "/", manifest)...)...)
	waitFor(t, 60*time.Second, func() bool { return len(rcv.ofType(journal.NoticeFinished)) > 0 })
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	cmd.Wait()
	id := rcv.ofType(journal.NoticeFinished)[0].notice.ID
	rcv.mu.Lock()
	close(rcv.hold)
	rcv.hold, rcv.got = nil, nil
	rcv.mu.Unlock()

	st := refbatch(t, nil, "status", "--out", out, "--json")
	if !strings.Contains(st.stdout, `"events"`) {
		t.Errorf("status after the kill:\n%s\n%s", st.stdout, stderr)
	}
	n := refbatch(t, nil, append([]string{"notify", "--out", out}, notifyArgs...)...)
	if n.code != 0 {
		t.Fatalf("notify: exit %d\n%s%s", n.code, n.stdout, n.stderr)
	}
	got := rcv.ofType(journal.NoticeFinished)
	if len(got) != 1 || got[0].notice.ID != id || got[0].status != 200 {
		t.Fatalf("notify delivered %d batch_finished (want 1, ID %s): %+v", len(got), id, got)
	}
	if again := refbatch(t, nil, append([]string{"notify", "--out", out}, notifyArgs...)...); again.code != 0 || len(rcv.requests()) != len(got)+len(rcv.ofType(journal.NoticeNeedsPerson)) {
		t.Errorf("notify again: exit %d, %d requests", again.code, len(rcv.requests()))
	}
	// The next run delivers its own batch_finished, never the old one again.
	r := refbatch(t, nil, runArgs(out, append(notifyArgs, "--root", "/", manifest)...)...)
	if r.code != exitNeedsPerson {
		t.Fatalf("rerun: exit %d\n%s", r.code, r.stderr)
	}
	old := 0
	for _, q := range rcv.ofType(journal.NoticeFinished) {
		if q.notice.ID == id {
			old++
		}
	}
	if old != 1 || len(rcv.ofType(journal.NoticeFinished)) != 2 {
		t.Errorf("after the rerun: the killed run's event %d times, %d batch_finished in all", old, len(rcv.ofType(journal.NoticeFinished)))
	}
}

// TestStatusCheck is acceptance 4, and batch_stalled: status --check
// exits 0 on a live run, 5 with the resume hint on a batch killed mid-run
// (0 while the stall time has not passed), 0 on a finished batch; a run
// whose pages hang sends batch_stalled itself.
func TestStatusCheck(t *testing.T) {
	t.Parallel() // it waits on processes more than it computes
	dir := t.TempDir()
	// Six documents: the live run is killed with some still queued, one
	// of which the resumed run finds hanging.
	manifest := bigManifest(t, dir, 6)
	out := filepath.Join(dir, "out")
	check := func(extra ...string) result {
		return refbatch(t, nil, append([]string{"status", "--check", "--out", out}, extra...)...)
	}

	cmd, stderr := start(t, []string{"REFBATCH_TEST_FAULTS=slow500ms=*"}, runArgs(out, "--root", "/", "--workers", "1", manifest)...)
	waitFor(t, 60*time.Second, func() bool { return strings.Count(stderr.String(), "document finished") >= 1 })
	live := check("--stall-after", "1ms")
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	cmd.Wait()
	if live.code != 0 || !strings.HasPrefix(live.stdout, "ok: running") {
		t.Errorf("live run: exit %d, %q", live.code, live.stdout)
	}

	killed := check("--stall-after", "1ms")
	if killed.code != exitStalled || !strings.HasPrefix(killed.stdout, "stalled:") ||
		!strings.Contains(killed.stdout, "run the same refbatch run command again to resume") || strings.Count(killed.stdout, "\n") != 1 {
		t.Errorf("killed run: exit %d, %q", killed.code, killed.stdout)
	}
	if w := check(); w.code != 0 || !strings.HasPrefix(w.stdout, "ok: waiting") {
		t.Errorf("killed run, within the default stall time: exit %d, %q", w.code, w.stdout)
	}

	// The resumed run: every page of one document hangs until the page
	// timeout, longer than --stall-after; the run says so itself.
	events := filepath.Join(dir, "events")
	env := []string{"REFBATCH_TEST_FAULTS=hang=" + firstQueuedSHA(t, out)}
	r := refbatch(t, env, runArgs(out, "--root", "/", "--workers", "1", "--page-timeout", "4s", "--stall-after", "1s",
		"--notify-cmd", "cat >> "+events+"; echo >> "+events, manifest)...)
	if r.code != exitNeedsPerson {
		t.Fatalf("resumed run: exit %d\n%s", r.code, r.stderr)
	}
	b, _ := os.ReadFile(events)
	if !strings.Contains(string(b), `"type":"batch_stalled"`) {
		t.Errorf("no batch_stalled from a run stuck on a hanging page:\n%s", b)
	}
	if done := check("--stall-after", "1ms"); done.code != 0 || !strings.HasPrefix(done.stdout, "ok: complete, every row is final") {
		t.Errorf("finished batch: exit %d, %q", done.code, done.stdout)
	}
}

// firstQueuedSHA is the SHA-256 of a document the batch in out has not
// finished.
func firstQueuedSHA(t *testing.T, out string) string {
	t.Helper()
	j, err := journal.OpenReadOnly(filepath.Join(out, "journal.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	sha := ""
	j.QueuedDocuments(func(d journal.Doc) error {
		if sha == "" {
			sha = d.SHA256
		}
		return nil
	})
	if sha == "" {
		t.Fatal("no queued document left")
	}
	return sha
}
