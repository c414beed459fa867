package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"filippo.io/age"

	"github.com/refbatch/refbatch/batch/batchtest/finished"
	"github.com/refbatch/refbatch/batch/journal"
)

// TestEncryptedCustody builds a batch shaped as part of the sample with a
// recipient (three documents read, their duplicate and conflicting rows,
// three rows rejected at admission), without OCR (custodyRows): every
// byte written
// under --out outside artifacts/ and every artifact (ciphertext) is free of
// participant IDs and OCR text; show round-trips each document's text
// exactly; verify passes, with and without the identity and the sources;
// an independent implementation of the custody log recomputes its root.
func TestEncryptedCustody(t *testing.T) {
	t.Parallel() // its batch is built without OCR
	dir := t.TempDir()
	key := filepath.Join(dir, "id.txt")
	kg := refbatch(t, nil, "keygen", "--out", key)
	if kg.code != 0 {
		t.Fatalf("keygen: %d %s", kg.code, kg.stderr)
	}
	recipient := strings.TrimSpace(kg.stdout)
	out := filepath.Join(dir, "out")
	manifest, log := finishedBatch(t, filepath.Join(dir, "in"), out, custodyRows(t, filepath.Join(dir, "in")), recipient)
	// The run's log, and what a run prints (a rerun that reads nothing
	// prints the batch's summary), are checked for secrets below with the
	// files.
	args := append([]string{"run", "--recipient", recipient, "--out", out}, fastFlags...)
	r := refbatch(t, nil, append(args, manifest)...)
	if r.code != exitNeedsPerson {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	rep := readReport(t, out)
	if !rep.Run.Encrypted {
		t.Error("report does not record the encryption choice")
	}
	// The demo's batch: its root, recomputed from the custody topic's encoding
	// of the custody log without refbatch's code, is the one reported.
	if root, n := independentRoot(t, openDB(t, out)); rep.Custody == nil || root != rep.Custody.Root || n != rep.Custody.Events {
		t.Errorf("independent root %s after %d events, report %+v", root, n, rep.Custody)
	}

	f, _ := os.Open(key)
	ids, err := age.ParseIdentities(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	var secrets []string
	for _, row := range readCSV(t, manifest) {
		if id := row["participant_id"]; len(id) >= 4 {
			secrets = append(secrets, id)
		}
	}
	shown := 0
	seen := map[string]bool{}
	for _, row := range rep.Rows {
		if row.Artifact == "" || seen[row.SourceID] {
			continue
		}
		seen[row.SourceID] = true
		// Decrypt the artifact directly with age: the reference text.
		ct, err := os.ReadFile(filepath.Join(out, row.Artifact))
		if err != nil {
			t.Fatal(err)
		}
		pt, err := age.Decrypt(bytes.NewReader(ct), ids...)
		if err != nil {
			t.Fatalf("%s: %v", row.Artifact, err)
		}
		plain, _ := io.ReadAll(pt)
		var a struct {
			Pages []struct {
				Text string `json:"text"`
			} `json:"pages"`
		}
		if err := json.Unmarshal(plain, &a); err != nil {
			t.Fatal(err)
		}
		var texts []string
		for _, p := range a.Pages {
			texts = append(texts, p.Text)
		}
		want := strings.Join(texts, "\f")
		secrets = append(secrets, artifactLines(t, plain)...)

		s := refbatch(t, nil, "show", "--out", out, "--identity", key, row.SourceID)
		if s.code != 0 {
			t.Fatalf("show %s: exit %d %s", row.SourceID, s.code, s.stderr)
		}
		if s.stdout != withFinalNewline(want) {
			t.Errorf("show %s does not round-trip the artifact's text", row.SourceID)
		}
		if shown == 0 {
			s := refbatch(t, nil, "show", "--out", out, row.SourceID)
			if s.code != exitUsage || s.stdout != "" || !strings.Contains(s.stderr, "refbatch: hint: pass --identity FILE") {
				t.Errorf("show without --identity: exit %d, want 2 and a hint\n%s", s.code, s.stderr)
			}
		}
		shown++
	}
	if shown == 0 {
		t.Fatal("no artifact to show")
	}
	blobs := map[string][]byte{"log": []byte(log), "stdout": []byte(r.stdout), "stderr": []byte(r.stderr)}
	filepath.Walk(out, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			b, _ := os.ReadFile(p)
			blobs[p] = b
		}
		return nil
	})
	for name, b := range blobs {
		for _, s := range secrets {
			if len(s) >= 8 && bytes.Contains(b, []byte(s)) {
				t.Errorf("%s contains document data (%d bytes of it)", name, len(s))
			}
		}
	}
	t.Logf("checked %d files and streams for %d secrets; %d documents shown", len(blobs), len(secrets), shown)

	for _, v := range [][]string{
		{"verify", "--out", out},
		{"verify", "--out", out, "--identity", key, "--sources"},
	} {
		res := refbatch(t, nil, v...)
		if res.code != 0 || !strings.Contains(res.stdout, "verified, no findings") {
			t.Errorf("%v: exit %d\n%s%s", v, res.code, res.stdout, res.stderr)
		}
	}
	if res := refbatch(t, nil, "show", "--out", out, "R-does-not-exist"); res.code != exitFailure {
		t.Errorf("show of an unknown id: exit %d, want 1", res.code)
	}
	checkRecipients(t, dir, out, manifest, recipient)
	checkSwap(t, out)
	// A tampered artifact makes verify exit 1 naming the file, in JSON too
	// (of the size recorded: another size is refused unread, as
	// artifact_oversized or artifact_undersized).
	arts, _ := filepath.Glob(filepath.Join(out, "artifacts", "*.age"))
	tampered, _ := os.ReadFile(arts[0])
	copy(tampered[len(tampered)/2:], "tampered")
	os.WriteFile(arts[0], tampered, 0o600)
	res := refbatch(t, nil, "verify", "--out", out, "--json")
	var vr struct {
		Findings []struct{ Kind, File string }
	}
	if err := json.Unmarshal([]byte(res.stdout), &vr); err != nil {
		t.Fatalf("verify --json: %v\n%s", err, res.stdout)
	}
	if res.code != exitFailure || len(vr.Findings) != 1 || vr.Findings[0].Kind != "artifact_hash_mismatch" || vr.Findings[0].File != arts[0] {
		t.Errorf("tampered verify: exit %d findings %+v", res.code, vr.Findings)
	}
}

// checkRecipients: the batch in out records recipient; a run with another
// key, or in plaintext, is refused before any work with exit 2 and a hint
// naming the batch's key; --add-recipient extends the set, recorded as an
// event, listed by report.json and verify.
func checkRecipients(t *testing.T, dir, out, manifest, recipient string) {
	t.Helper()
	if rep := readReport(t, out); !slices.Equal(rep.Run.Recipients, []string{recipient}) {
		t.Errorf("report.json lists recipients %v, want [%s]", rep.Run.Recipients, recipient)
	}
	kg := refbatch(t, nil, "keygen", "--out", filepath.Join(dir, "id2.txt"))
	if kg.code != 0 {
		t.Fatalf("keygen: %d %s", kg.code, kg.stderr)
	}
	other := strings.TrimSpace(kg.stdout)
	before, _ := os.ReadFile(filepath.Join(out, "report.json"))
	hint := "refbatch: hint: this batch encrypts to " + recipient + "; rerun with the same recipients, or add --add-recipient KEY to extend it deliberately"
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"another recipient", []string{"--recipient", other}, []string{other + " not recorded", recipient + " not given", hint}},
		{"an extra recipient", []string{"--recipient", recipient, "--recipient", other}, []string{other + " not recorded", hint}},
		{"plaintext", []string{"--plaintext"}, []string{"artifacts are encrypted", "refbatch: hint: this batch encrypts to " + recipient + "; rerun with the same recipients"}},
	} {
		args := append(append([]string{"run", "--out", out}, c.args...), fastFlags...)
		r := refbatch(t, nil, append(args, manifest)...)
		if r.code != exitUsage || r.stdout != "" {
			t.Errorf("%s: exit %d, stdout %q; want 2 and nothing", c.name, r.code, r.stdout)
		}
		for _, w := range c.want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("%s: stderr lacks %q:\n%s", c.name, w, r.stderr)
			}
		}
	}
	if after, _ := os.ReadFile(filepath.Join(out, "report.json")); !bytes.Equal(before, after) {
		t.Error("a refused run rewrote report.json")
	}

	args := append([]string{"run", "--out", out, "--add-recipient", other}, fastFlags...)
	if r := refbatch(t, nil, append(args, manifest)...); r.code != exitNeedsPerson {
		t.Fatalf("run --add-recipient: exit %d\n%s", r.code, r.stderr)
	}
	want := []string{recipient, other}
	slices.Sort(want)
	if rep := readReport(t, out); !slices.Equal(rep.Run.Recipients, want) {
		t.Errorf("after --add-recipient, report.json lists %v, want %v", rep.Run.Recipients, want)
	}
	j, err := journal.OpenReadOnly(filepath.Join(out, "journal.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	var kinds []journal.EventKind
	var added struct{ Added, Recipients []string }
	j.Events(func(e journal.Event) error {
		kinds = append(kinds, e.Kind)
		if e.Kind == journal.EventRecipientsAdded {
			json.Unmarshal(e.Data, &added)
		}
		return nil
	}, journal.EventRecipients, journal.EventRecipientsAdded)
	if !slices.Equal(kinds, []journal.EventKind{journal.EventRecipients, journal.EventRecipientsAdded}) ||
		!slices.Equal(added.Added, []string{other}) || !slices.Equal(added.Recipients, want) {
		t.Errorf("events %v, recipients_added %+v; want recipients then recipients_added of %s giving %v", kinds, added, other, want)
	}
	args = append([]string{"run", "--out", out, "--recipient", recipient, "--recipient", other}, fastFlags...)
	if r := refbatch(t, nil, append(args, manifest)...); r.code != exitNeedsPerson {
		t.Errorf("a run with the extended set: exit %d\n%s", r.code, r.stderr)
	}
	if r := refbatch(t, nil, "verify", "--out", out); r.code != 0 || !strings.Contains(r.stdout, "artifacts encrypted to "+strings.Join(want, ", ")+"\n") {
		t.Errorf("verify: exit %d, does not list the recipients:\n%s", r.code, r.stdout)
	}
}

// checkSwap: two artifacts swapped are one finding naming both, and the
// summary counts 1 finding.
func checkSwap(t *testing.T, out string) {
	t.Helper()
	arts, _ := filepath.Glob(filepath.Join(out, "artifacts", "*.age"))
	if len(arts) < 2 {
		t.Fatalf("%d artifacts, want 2 or more", len(arts))
	}
	x, _ := os.ReadFile(arts[0])
	y, _ := os.ReadFile(arts[1])
	os.WriteFile(arts[0], y, 0o600)
	os.WriteFile(arts[1], x, 0o600)
	defer func() {
		os.WriteFile(arts[0], x, 0o600)
		os.WriteFile(arts[1], y, 0o600)
	}()
	r := refbatch(t, nil, "verify", "--out", out)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != exitFailure || !strings.HasPrefix(lines[0], "artifacts_swapped") || !strings.Contains(lines[0], arts[0]+" and "+arts[1]) ||
		!strings.Contains(r.stdout, ": 1 finding\n") {
		t.Errorf("verify of swapped artifacts: exit %d\n%s", r.code, r.stdout)
	}
}

// custodyRows are the rows of the sample that TestEncryptedCustody's
// batch is made of (sampleRows): three documents, R-0001 again, R-0002
// with another file, and three rows admission rejects.
func custodyRows(t *testing.T, dir string) []finished.Row {
	t.Helper()
	return sampleRows(t, dir, "R-0001", "R-0002", "R-0003", "R-0011", "R-0012", "R-0015")
}
