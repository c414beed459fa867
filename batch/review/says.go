package review

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/refbatch/refbatch/manifest"
	"github.com/refbatch/refbatch/report/outcome"
)

// This file is what the desk (and `refbatch review --identity`) shows of
// a document in review because the manifest's participant ID or referral
// date is not in its text: what the text holds instead, so that a person
// sees at once "the letter says P-701538, the manifest P-000000" or "the
// letter prints no ID". It reads the decrypted text: what it finds is for
// the person deciding, never for a log or the journal.

// Said is one value the text holds where the manifest's field is not
// found: an ID shaped like the manifest's, or a date.
type Said struct {
	Field string `json:"field"` // manifest.ColParticipantID or manifest.ColReferralDate
	Text  string `json:"text"`
	Page  int    `json:"page"` // from 1
}

// readSaid fills d.Said and words d.Detail from the text, for a document
// in review id_not_found or date_not_found whose text and manifest field
// were read; it leaves them as they are otherwise.
func (d *DeskDoc) readSaid() {
	field := ""
	switch d.Reason {
	case outcome.IDNotFound:
		field = manifest.ColParticipantID
	case outcome.DateNotFound:
		field = manifest.ColReferralDate
	default:
		return
	}
	want := ""
	for _, f := range d.Fields {
		if f.Name == field {
			want = f.Value
		}
	}
	if d.Text == nil || want == "" {
		return
	}
	seen := map[string]bool{}
	for _, p := range d.Text {
		text := dashes(p.Text)
		found := manifest.Dates(text)
		if field == manifest.ColParticipantID {
			found = manifest.ShapedLike(text, want)
		}
		for _, s := range found {
			if k := strings.ToUpper(s); !seen[k] {
				seen[k] = true
				d.Said = append(d.Said, Said{Field: field, Text: s, Page: p.Index + 1})
			}
		}
	}
	d.Detail = saidDetail(field, want, d.Said)
}

// saidDetail words what the text holds against the manifest's value.
func saidDetail(field, want string, said []Said) string {
	what, shape := "ID", fmt.Sprintf(" shaped like the manifest's (%s)", manifest.Shape(want))
	if field == manifest.ColReferralDate {
		what, shape = "date", ""
	}
	if len(said) == 0 {
		return fmt.Sprintf("the letter prints no %s%s; the manifest says %s: check the paper file", what, shape, want)
	}
	var parts []string
	for _, s := range said {
		parts = append(parts, fmt.Sprintf("%s (page %d)", s.Text, s.Page))
	}
	return fmt.Sprintf("the letter says %s, the manifest %s", strings.Join(parts, ", "), want)
}

// dashes reads every dash-like character of s as '-', as validation does.
func dashes(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Pd, r) || r == '\u2212' {
			return '-'
		}
		return r
	}, s)
}
