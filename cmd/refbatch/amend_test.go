package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// dirSize is the bytes of the files in dir.
func dirSize(t *testing.T, dir string) int64 {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, e := range es {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
	}
	return n
}

// TestTranscriptionsCostWhatTheyAdd: 64 transcriptions of 16 KiB on one
// document grow the artifacts by under 2 MiB (each was a copy of the
// whole artifact: 33 MiB for a larger one), verify checks the chain and
// counts them, and show has all 64. A leftover of a desk stopped between
// publishing and recording, under the name the next transcription would
// have had in an earlier build, blocks nothing, and verify says what it
// is and what to do.
func TestTranscriptionsCostWhatTheyAdd(t *testing.T) {
	t.Parallel()
	_, out := inReview(t)
	arts := filepath.Join(out, "artifacts")
	base := strings.TrimSuffix(filepath.Base(artifactOf(t, out, "R-1")), ".json")
	// What a desk killed after publishing its first transcription left.
	if err := os.WriteFile(filepath.Join(arts, base+"_t1.json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	before := dirSize(t, arts)
	d := startDesk(t, out)
	c, csrf := d.open(t, d.Code)
	text := strings.Repeat("Seen by Dr Hand, urgent. ", 16<<10/25)[:16<<10-10]
	for i := range 64 {
		_, body := deskGet(t, c, d, "/api/doc?id=R-1")
		var doc struct {
			Version int64 `json:"version"`
		}
		json.Unmarshal([]byte(body), &doc)
		req := fmt.Sprintf(`{"id":"R-1","since":%d,"page":0,"box":[10,10,200,60],"text":"%03d %s"}`, doc.Version, i, text)
		if code, body := deskPost(t, c, d, csrf, "/api/transcribe", req); code != http.StatusOK {
			t.Fatalf("transcription %d: %d %s", i+1, code, body)
		}
	}
	grown := dirSize(t, arts) - before
	t.Logf("64 transcriptions of 16 KiB: artifacts grew by %d bytes (%.2f MiB)", grown, float64(grown)/(1<<20))
	if grown >= 2<<20 {
		t.Errorf("64 transcriptions of 16 KiB grew the artifacts by %d bytes, want under 2 MiB", grown)
	}
	r := refbatch(t, nil, "verify", "--out", out)
	if r.code != exitFailure || !strings.Contains(r.stdout, "transcriptions 64") || !strings.Contains(r.stdout, ": 1 finding") ||
		!strings.Contains(r.stdout, "unknown_file") || !strings.Contains(r.stdout, "desk was stopped before recording") {
		t.Errorf("verify: exit %d, want 1, the 64 transcriptions counted and one finding, the leftover, with advice\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = refbatch(t, nil, "show", "--out", out, "R-1")
	if r.code != 0 || strings.Count(r.stdout, "Seen by Dr Hand") < 64*600 || !strings.Contains(r.stdout, "063 Seen") || !strings.Contains(r.stdout, "000 Seen") {
		t.Errorf("show: exit %d, want all 64 transcriptions\n%s", r.code, r.stderr)
	}
}
