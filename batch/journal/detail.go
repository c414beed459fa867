package journal

import (
	"encoding/json"
	"slices"

	"github.com/refbatch/refbatch/report/outcome"
)

// This file reads back what exactly a review verdict found (a verdict's
// detail): the pages of a handwritten note not transcribed. It travels
// in the verdict's own event (attempt_finished, revalidated, amended), as
// a rejection's detail travels in its row_rejected event, so the
// documents table needs no column for it.

// VerdictDetail is the data a verdict event carries when its verdict
// says more than its reason: the reason it was for, the detail and the
// pages (from 1) the detail names. It never holds document text or an ID.
type VerdictDetail struct {
	Reason outcome.Reason `json:"reason"`
	Detail string         `json:"detail"`
	Pages  []int          `json:"pages,omitempty"`
}

// verdictKinds are the events that record a document's verdict and may
// carry its detail.
var verdictKinds = []any{EventAttemptFinished, EventRevalidated, EventAmended}

// reviewDetails are the details of the documents in review, by document
// ID: each document's latest verdict event's, kept only when it was for
// the reason the document is in review for now (a later verdict without
// a detail, or with another reason, leaves none). Documents in review are
// few, so the map is small.
func reviewDetails(q queryer) (map[int64]VerdictDetail, error) {
	rows, err := q.Query(`SELECT e.document_id, d.reason, e.data FROM events e JOIN documents d ON d.id = e.document_id
		WHERE d.state=? AND e.kind IN (?,?,?) ORDER BY e.id`, append([]any{outcome.Review}, verdictKinds...)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]VerdictDetail{}
	for rows.Next() {
		var id int64
		var reason, data string
		if err := rows.Scan(&id, &reason, &data); err != nil {
			return nil, err
		}
		var d VerdictDetail
		if json.Unmarshal([]byte(data), &d) != nil || d.Detail == "" || string(d.Reason) != reason {
			delete(out, id)
			continue
		}
		out[id] = VerdictDetail{Reason: d.Reason, Detail: d.Detail, Pages: d.Pages}
	}
	return out, rows.Err()
}

// handwritingPages counts, per page (from 1), the documents of manifest's
// rows in review handwriting with a note not transcribed on that page:
// what the rows_need_person notice may say of them, page numbers and
// nothing of the documents. nil when there are none.
func handwritingPages(q queryer, manifest string) (map[int]int, error) {
	details, err := reviewDetails(q)
	if err != nil || len(details) == 0 {
		return nil, err
	}
	rows, err := q.Query(`SELECT DISTINCT r.document_id FROM rows r JOIN documents d ON d.id = r.document_id
		WHERE r.manifest=? AND r.kind=? AND d.state=? AND d.reason=?`, manifest, kindDoc, outcome.Review, outcome.Handwriting)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out map[int]int
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		for _, p := range slices.Compact(slices.Sorted(slices.Values(details[id].Pages))) {
			if out == nil {
				out = map[int]int{}
			}
			out[p]++
		}
	}
	return out, rows.Err()
}
