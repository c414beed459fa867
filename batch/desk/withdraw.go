package desk

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/review"
)

// withdrawRequest takes back one transcription of a document in review:
// Transcription is its ID (layout.Transcription's), Since the document's
// version as shown.
type withdrawRequest struct {
	ID            string `json:"id"`
	Since         int64  `json:"since"`
	Transcription string `json:"transcription"`
	Note          string `json:"note"`
}

func (s *Server) handleWithdraw(w http.ResponseWriter, r *http.Request) {
	var req withdrawRequest
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		fail(w, http.StatusBadRequest, fmt.Errorf("reading the withdrawal: %w", err))
		return
	}
	if req.ID == "" || req.Since == 0 || req.Transcription == "" {
		fail(w, http.StatusBadRequest, errors.New("a withdrawal names the document, its version and the transcription"))
		return
	}
	_, err := review.WithdrawTranscription(r.Context(), review.WithdrawOptions{Out: s.cfg.Place.Out, Journal: s.cfg.Place.Journal,
		SourceID: req.ID, Since: req.Since, ID: req.Transcription, Note: req.Note, User: s.cfg.User, Host: s.cfg.Host, Identities: s.cfg.Identities})
	var nr *journal.NotInReviewError
	var ch *journal.ChangedError
	switch {
	case errors.As(err, &ch):
		fail(w, http.StatusConflict, fmt.Errorf("%s: look at it again before withdrawing", ch.Error()))
	case errors.As(err, &nr):
		fail(w, http.StatusConflict, nr)
	case err != nil:
		fail(w, http.StatusBadRequest, err)
	default:
		writeJSON(w, http.StatusOK, map[string]bool{"withdrawn": true})
	}
}
