package batch

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/refbatch/refbatch/manifest"
	"github.com/refbatch/refbatch/ocr"
)

// This file words what the text says where the manifest's participant ID
// or referral date is not found, for the journal and the report: whether
// the letter prints other IDs of the manifest ID's shape (a wrong ID in
// the manifest, or a misread one) or none at all (a letter that prints no
// ID). It counts them and never quotes one: the journal and the reports
// keep no participant ID and no text. The desk and `refbatch review
// --identity`, which read the artifact, show the values themselves.

// idDetail is the detail of an id_not_found verdict.
func idDetail(pages []ocr.PageResult, id string) string {
	shape := manifest.Shape(id)
	n := len(shapedIn(pages, id))
	if n == 0 {
		return fmt.Sprintf("the letter prints no ID shaped like the manifest's (%s): it has none, or it was not read; check the paper file", shape)
	}
	return fmt.Sprintf("the letter prints %d other ID%s shaped like the manifest's (%s), not the manifest's: the manifest's ID may be wrong, or one was misread; compare at the desk (or refbatch review --identity)",
		n, map[bool]string{true: "", false: "s"}[n == 1], shape)
}

// dateDetail is the detail of a date_not_found verdict.
func dateDetail(pages []ocr.PageResult) string {
	n := len(datesIn(pages))
	if n == 0 {
		return "the letter prints no date refbatch can read: it has none, or it was not read; check the paper file"
	}
	return fmt.Sprintf("the letter prints %d other date%s, not the manifest's referral date: the manifest's date may be wrong, or one was misread; compare at the desk (or refbatch review --identity)",
		n, map[bool]string{true: "", false: "s"}[n == 1])
}

// shapedIn are the strings of the pages shaped like id, each once.
func shapedIn(pages []ocr.PageResult, id string) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range pages {
		for _, s := range manifest.ShapedLike(dashes(p.Text), id) {
			if k := strings.ToUpper(s); !seen[k] {
				seen[k] = true
				out = append(out, s)
			}
		}
	}
	return out
}

// datesIn are the dates the pages print, each once.
func datesIn(pages []ocr.PageResult) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range pages {
		for _, d := range manifest.Dates(dashes(p.Text)) {
			if !seen[d] {
				seen[d] = true
				out = append(out, d)
			}
		}
	}
	return out
}

// dashes reads every dash-like character of s as '-', as the field
// checks do.
func dashes(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Pd, r) || r == '\u2212' {
			return '-'
		}
		return r
	}, s)
}
