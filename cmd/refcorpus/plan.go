package main

import (
	"fmt"

	"github.com/refbatch/refbatch/report/outcome"
)

// basePlan plans every row but the hard documents, drawing identities
// from stream 0 of the seed. It returns the highest source number used.
func basePlan(o options, used map[string]bool) ([]entry, int) {
	r := rng(o.Seed, 0)
	n := 0
	next := func(pages int) spec {
		n++
		return spec{
			SourceID:      fmt.Sprintf("R-%04d", n),
			ParticipantID: participantID(r, used),
			ReferralDate:  referralDate(r),
			Consent:       true,
			Pages:         pages,
			Stream:        uint64(n),
		}
	}
	var es []entry
	d := newDeck(o.Seed)
	slot := 0
	for range o.Docs {
		if !o.Degrade {
			es = append(es, entry{Spec: next(1 + r.IntN(3)), Render: true})
			continue
		}
		pages := pick(r, pageCounts)
		blank := -1
		if pages < 4 && r.IntN(8) == 0 {
			blank = 1 + r.IntN(pages) // never first: page 1 carries the identity
		}
		total := pages
		if blank >= 0 {
			total++
		}
		sp := &scanPlan{Blank: blank}
		for range total {
			sp.Kinds = append(sp.Kinds, d.kind(slot))
			sp.Turns = append(sp.Turns, d.turn(slot))
			slot++
		}
		s := next(pages)
		s.Scan = sp
		es = append(es, entry{Spec: s, Render: true})
	}
	if o.BadAll {
		es = append(es, oddities(next)...)
	}
	if !o.Bad && !o.BadAll {
		return es, n
	}
	// The bad documents that are real PDFs have one or two pages: they are
	// never OCRed, so more pages would only cost space.
	for _, b := range []struct {
		reason outcome.Reason
		render bool
	}{
		{outcome.EmptyFile, false},
		{outcome.NotPDF, false},
		{outcome.MalformedPDF, true},
		{outcome.MissingFile, false},
		{outcome.NoConsent, true},
		{outcome.HashMismatch, true},
		{outcome.PathOutsideRoot, false},
		{outcome.MissingField, true},
		{outcome.BadDate, true},
	} {
		pages := 1
		if b.reason == outcome.MalformedPDF {
			pages = 2 // so the cut falls inside the document, not after it
		}
		e := entry{Spec: next(pages), Render: b.render, Reason: string(b.reason)}
		e.Spec.Consent = b.reason != outcome.NoConsent
		es = append(es, e)
	}
	if o.BadAll {
		es = append(es, badAllInputs(next)...)
	}
	es = append(es, entry{Spec: es[0].Spec, Dup: true})
	// A rescan of the second document: same identity, other bytes.
	rescan := es[1].Spec
	rescan.Pages, rescan.Stream, rescan.Scan = 1, extraStream+2, nil
	conflict := entry{Spec: rescan, Render: true, Reason: string(outcome.Conflict)}
	if o.BadAll {
		conflict.Notes = "Second scan, pages reordered, replaces the first?"
		// The third document again, its bytes copied to another folder.
		es = append(es, entry{Spec: es[2].Spec, Dup: true, Variant: varCopy, Notes: "Same scan, copied to the copies folder"})
	}
	es = append(es, conflict)
	return es, n
}

// oddities plans the readable oddities of --bad-all, drawing each
// identity from next.
func oddities(next func(pages int) spec) []entry {
	var es []entry
	for _, v := range []struct {
		variant string
		pages   int
		plan    scanPlan
		notes   string
	}{
		{varBrokenXref, 2, scanPlan{Kinds: []string{kindBitonal, kindBitonal}}, `Copied from the old archive, offsets "repaired" by hand`},
		{varBadStartxref, 1, scanPlan{Kinds: []string{kindGrey}}, ""},
		{varTextLayer, 2, scanPlan{Kinds: []string{"text", "text"}, Upright: true, TextLayer: "visible", DPI: 300}, "Born-digital letter, exported from the clinic's system"},
		{varOCRLayer, 2, scanPlan{Kinds: []string{kindCCITT, kindCCITT}, Upright: true, TextLayer: "invisible", DPI: 300}, "Scanner's own OCR, text layer kept"},
		{varCommaPath, 1, scanPlan{Kinds: []string{kindJPEG}}, `Rescanned, filed as "R-copy", name has a comma`},
		{varBlankDoc, 2, scanPlan{Kinds: []string{kindBitonal, kindGrey}, AllBlank: true}, `Two sheets, both "blank" on inspection`},
	} {
		s := next(v.pages)
		p := v.plan
		p.Blank = -1
		s.Scan = &p
		e := entry{Spec: s, Render: true, Variant: v.variant, Notes: v.notes}
		if v.variant == varBlankDoc {
			e.State, e.Reason = string(outcome.Review), string(outcome.EmptyText)
		}
		es = append(es, e)
	}
	return es
}

// badAllInputs plans the bad inputs only --bad-all writes, drawing each
// identity from next.
func badAllInputs(next func(pages int) spec) []entry {
	var es []entry
	for _, b := range []struct {
		variant string
		reason  outcome.Reason
		plan    *scanPlan
		notes   string
	}{
		{varELF, outcome.NotPDF, nil, `Uploaded by mistake: the "setup" program, not a scan`},
		{varPNG, outcome.NotPDF, &scanPlan{Kinds: []string{kindGrey}, DPI: 72, KeepImages: true}, "Photo of the form, saved as PDF"},
		{varEncrypted, outcome.Encrypted, &scanPlan{Kinds: []string{kindBitonal}}, "Protected by the clinic, no password given"},
		{varEncryptedPW, outcome.Encrypted, &scanPlan{Kinds: []string{kindBitonal}}, `Password "sent separately"`},
		{varPageBomb, outcome.TooManyPages, nil, ""},
		{varGiantPage, outcome.PageTooLarge, nil, ""},
		{varOverCap, outcome.TooLarge, &scanPlan{Kinds: []string{kindRaw}, DPI: 150}, "Scanner saved it uncompressed"},
		{varShortRecord, outcome.MissingField, nil, ""},
		{varClimbing, outcome.PathOutsideRoot, nil, ""},
	} {
		s := next(1)
		if b.plan != nil {
			p := *b.plan
			p.Blank = -1
			s.Scan = &p
		}
		es = append(es, entry{Spec: s, Render: b.plan != nil, Reason: string(b.reason), Variant: b.variant, Notes: b.notes})
	}
	return es
}
