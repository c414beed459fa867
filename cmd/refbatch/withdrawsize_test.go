package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/refbatch/refbatch/batch/review"
)

// TestWithdrawalSizeRecorded: a withdrawal of a transcription is an
// artifact version as an amendment is, so it gets what artifact sizes
// give an amendment: the journal records its size (the document's
// artifact_size, the event's new_artifact_size), the event the size of
// the amendment it keeps, the withdrawal the size of the version it
// follows, and verify passes on it. A withdrawal replaced by a bigger
// file is refused unread (artifact_oversized), both as the document's
// artifact and as a link a later transcription follows.
func TestWithdrawalSizeRecorded(t *testing.T) {
	t.Parallel()
	dir, out := inReview(t)
	ctx := context.Background()
	transcribe := func(text string) string {
		t.Helper()
		p, err := review.Transcribe(ctx, review.TranscribeOptions{Out: out, SourceID: "R-1", Box: [4]int{10, 10, 200, 60},
			Text: text, User: "alice", Host: "desk"})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	amendment := transcribe("Seen by Dr Hand")
	w, err := review.WithdrawTranscription(ctx, review.WithdrawOptions{Out: out, SourceID: "R-1", Number: 1,
		Note: "typed on the wrong page", User: "alice", Host: "desk"})
	if err != nil {
		t.Fatal(err)
	}
	size := func(p string) int64 {
		t.Helper()
		fi, err := os.Stat(filepath.Join(out, filepath.FromSlash(p)))
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	db := openDB(t, out)
	var recorded int64
	var data string
	if err := db.QueryRow(`SELECT artifact_size FROM documents WHERE source_id='R-1'`).Scan(&recorded); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`SELECT data FROM events WHERE kind='transcription_withdrawn'`).Scan(&data); err != nil {
		t.Fatal(err)
	}
	db.Close()
	var ev struct {
		Artifact        string `json:"artifact"`
		ArtifactSize    int64  `json:"artifact_size"`
		NewArtifact     string `json:"new_artifact"`
		NewArtifactSize int64  `json:"new_artifact_size"`
	}
	if err := json.Unmarshal([]byte(data), &ev); err != nil {
		t.Fatal(err)
	}
	if recorded != size(w.Artifact) || ev.NewArtifact != w.Artifact || ev.NewArtifactSize != recorded {
		t.Errorf("the withdrawal %s is %d bytes; the journal records %d, its event %s of %d", w.Artifact, size(w.Artifact), recorded, ev.NewArtifact, ev.NewArtifactSize)
	}
	if ev.Artifact != amendment || ev.ArtifactSize != size(amendment) {
		t.Errorf("the amendment kept %s is %d bytes; the event records %s of %d", amendment, size(amendment), ev.Artifact, ev.ArtifactSize)
	}
	var link struct {
		Amends     string `json:"amends"`
		AmendsSize int64  `json:"amends_size"`
	}
	b, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(w.Artifact)))
	if err != nil || json.Unmarshal(b, &link) != nil || link.Amends != amendment || link.AmendsSize != size(amendment) {
		t.Errorf("the withdrawal follows %s of %d bytes, want %s of %d (%v)", link.Amends, link.AmendsSize, amendment, size(amendment), err)
	}
	verified := func(out, says string) {
		t.Helper()
		r := refbatch(t, nil, "verify", "--out", out)
		if r.code != 0 || !strings.Contains(r.stdout, "verified, no findings") || !strings.Contains(r.stdout, says) || strings.Contains(r.stdout, "no size") {
			t.Errorf("verify: exit %d, want 0 with %q and every size recorded\n%s%s", r.code, says, r.stdout, r.stderr)
		}
	}
	oversized := func(name, grown string) {
		t.Helper()
		to := filepath.Join(dir, name)
		copyOut(t, out, to)
		file := filepath.Join(to, filepath.FromSlash(w.Artifact))
		f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(strings.Repeat(" ", 4096))
		f.Close()
		r := refbatch(t, nil, "verify", "--out", to)
		if r.code != exitFailure || !strings.Contains(r.stdout, "artifact_oversized ") || !strings.Contains(r.stdout, file) ||
			!strings.Contains(r.stdout, "the journal recorded when it was written") {
			t.Errorf("verify of %s: exit %d, want 1 with artifact_oversized naming %s\n%s%s", grown, r.code, file, r.stdout, r.stderr)
		}
		if r := refbatch(t, nil, "show", "--out", to, "R-1"); r.code != exitFailure || r.stdout != "" || !strings.Contains(r.stderr, "not the "+strconv.FormatInt(recorded, 10)+" recorded") {
			t.Errorf("show of %s: exit %d, want 1 naming the size recorded, and no text\n%s%s", grown, r.code, r.stdout, r.stderr)
		}
	}
	verified(out, "transcriptions 1 (1 withdrawn)")
	oversized("current", "the withdrawal, the document's artifact, grown")
	transcribe("Kept marmalade")
	verified(out, "transcriptions 2 (1 withdrawn)")
	oversized("link", "the withdrawal, a link of the chain, grown")
}
