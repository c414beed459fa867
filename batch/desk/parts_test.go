package desk

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/batch/review"
	"github.com/refbatch/refbatch/ocr/view"
	"github.com/refbatch/refbatch/report/outcome"
)

// TestImageCache: the cache keeps the pages asked for last, at most its
// size: a page looked at again stays, the one looked at longest ago goes.
func TestImageCache(t *testing.T) {
	t.Parallel()
	c := newImageCache(2)
	key := func(page int) imageKey { return imageKey{id: "R-1", page: page, width: 100} }
	img := func(page int) *view.Image { return &view.Image{Width: page} }
	c.put(key(0), img(0))
	c.put(key(1), img(1))
	if got, ok := c.get(key(0)); !ok || got.Width != 0 { // page 0 now the latest
		t.Fatalf("page 0: %v, %v", got, ok)
	}
	c.put(key(1), img(9)) // already there: kept as it was
	c.put(key(2), img(2)) // page 1, looked at longest ago, goes
	for page, want := range map[int]bool{0: true, 1: false, 2: true} {
		if got, ok := c.get(key(page)); ok != want || ok && got.Width != page {
			t.Errorf("page %d: %v, %v; want cached: %v", page, got, ok, want)
		}
	}
	if n := c.order.Len(); n != 2 || len(c.items) != 2 {
		t.Errorf("%d pages in order, %d cached; want 2", n, len(c.items))
	}
}

// TestDecidedOf: each outcome of a decision as the page shows it: done,
// queued again, or refused saying why, marked changed when the page is
// out of date.
func TestDecidedOf(t *testing.T) {
	t.Parallel()
	from := journal.Decision{FromState: outcome.Review, FromReason: "low_confidence"}
	with := func(a journal.Action) journal.Decision { d := from; d.Action = a; return d }
	for _, tc := range []struct {
		name    string
		d       review.Decided
		ok      bool
		changed bool
		says    string
	}{
		{"accepted", review.Decided{SourceID: "R-1", Decision: with(journal.Accept)}, true, false, "accept: was review low_confidence"},
		{"sent back", review.Decided{SourceID: "R-1", Decision: with(journal.Retry)}, true, false, "queued: the next refbatch run"},
		{"changed since shown", review.Decided{SourceID: "R-1", Err: &journal.ChangedError{SourceID: "R-1", State: outcome.Review}}, false, true, "look at it again"},
		{"no longer in review", review.Decided{SourceID: "R-1", Err: fmt.Errorf("x: %w", &journal.NotInReviewError{SourceID: "R-1", State: outcome.Done})}, false, true, "R-1"},
		{"nothing to undo", review.Decided{SourceID: "R-1", Err: &journal.NotUndoableError{SourceID: "R-1", Why: "no decision"}}, false, false, "nothing to undo"},
		{"no such document", review.Decided{SourceID: "R-9", Err: fmt.Errorf("x: %w", journal.ErrNoDocument)}, false, false, "R-9: no document has this source_id"},
		{"another error", review.Decided{SourceID: "R-1", Err: errors.New("disk on fire")}, false, false, "disk on fire"},
	} {
		got := decidedOf(tc.d)
		if got.ID != tc.d.SourceID || got.OK != tc.ok || got.Changed != tc.changed || !strings.Contains(got.Message, tc.says) {
			t.Errorf("%s: %+v; want ok %v, changed %v, saying %q", tc.name, got, tc.ok, tc.changed, tc.says)
		}
	}
}

// TestTranscribeAndWithdrawRequests: a transcription names its document,
// version and a box of four whole numbers, a withdrawal its document,
// version and transcription; anything else is a 400 saying so before the
// batch is looked at.
func TestTranscribeAndWithdrawRequests(t *testing.T) {
	t.Parallel()
	do := session(t, New(Config{Place: layout.Place{Out: t.TempDir()}, User: "alice", Host: "h"}, "127.0.0.1:8080"))
	for _, tc := range []struct{ path, body, says string }{
		{"/api/transcribe", `{"since":1,"page":0,"box":[0,0,1,1],"text":"x"}`, "names the document and its version"},
		{"/api/transcribe", `{"id":"R-1","page":0,"box":[0,0,1,1],"text":"x"}`, "names the document and its version"},
		{"/api/transcribe", `{"id":"R-1","since":1,"page":0,"box":[0,0,1],"text":"x"}`, "exactly four numbers"},
		{"/api/transcribe", `{"id":"R-1","since":1,"page":0,"box":[0,0,1,1.5],"text":"x"}`, `"1.5" is not one`},
		{"/api/transcribe", `{"id":"R-1","since":1,"box":[0,0,1,1],"colour":"red"}`, "reading the transcription"},
		{"/api/withdraw", `{"since":1,"transcription":"t"}`, "names the document, its version and the transcription"},
		{"/api/withdraw", `{"id":"R-1","transcription":"t"}`, "names the document, its version and the transcription"},
		{"/api/withdraw", `{"id":"R-1","since":1}`, "names the document, its version and the transcription"},
		{"/api/withdraw", `{"id":"R-1","since":1,"transcription":"t","why":"x"}`, "reading the withdrawal"},
	} {
		w := do("POST", tc.path, tc.body)
		var got struct{ Error string }
		json.Unmarshal(w.Body.Bytes(), &got)
		if w.Code != http.StatusBadRequest || !strings.Contains(got.Error, tc.says) {
			t.Errorf("%s %s: %d %q, want 400 saying %q", tc.path, tc.body, w.Code, got.Error, tc.says)
		}
	}
}
