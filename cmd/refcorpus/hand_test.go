package main

import (
	"slices"
	"strings"
	"testing"
)

// TestHandFontMissing checks that a handwriting whose font is nowhere
// stops refcorpus with the package to install.
func TestHandFontMissing(t *testing.T) {
	t.Parallel()
	_, err := handFont(hand{Name: "nobody", Package: "fonts-nobody", Family: "No Such Family Refcorpus", Path: "/nonexistent/nobody.ttf"})
	if err == nil || !strings.Contains(err.Error(), "fonts-nobody") {
		t.Fatalf("handFont of a missing font: %v, want an error naming fonts-nobody", err)
	}
}

// TestHandwritingTruth draws two handwritten notes, a signed document and
// a column layout at 100 DPI and checks what their truth promises: the
// note's text apart and in the page's text, a box on the page, a
// signature with no text of its own, and columns in reading order. The
// rows come after every other, expecting done or review handwriting for
// a note and done for the others.
func TestHandwritingTruth(t *testing.T) {
	t.Parallel()
	if err := checkHands(); err != nil {
		t.Skipf("handwriting fonts missing (make deps): %v", err)
	}
	base := options{Seed: 7, Docs: 1, DPIs: []int{100}, MaxBytes: DefaultMaxBytes}
	o := base
	o.Handwriting, o.Signatures, o.Columns, o.HandDPIs = 2, 1, 3, []int{100}
	before, after := plan(base), plan(o)
	if len(after) != len(before)+6 {
		t.Fatalf("%d rows planned, want %d", len(after), len(before)+6)
	}
	for i, e := range before {
		if a := after[i].Spec; a.SourceID != e.Spec.SourceID || a.ParticipantID != e.Spec.ParticipantID || a.Stream != e.Spec.Stream {
			t.Errorf("row %d changed when the handwritten documents were added", i)
		}
	}
	c, err := build(o)
	if err != nil {
		t.Fatal(err)
	}
	rows, truth := c.Rows[len(before):], c.Truth[len(before):]
	want := []string{"done|review", "done|review", "done", "done", "done", "done"}
	var layouts []string
	for i, r := range rows {
		if r.State != want[i] {
			t.Errorf("%s expects %s %s, want %s", r.SourceID, r.State, r.Reason, want[i])
		}
		if r.State == "done|review" && r.Reason != "|"+reasonHandwriting {
			t.Errorf("%s expects reason %q, want |%s", r.SourceID, r.Reason, reasonHandwriting)
		}
		p := truth[i].Pages[len(truth[i].Pages)-1]
		switch h := after[len(before)+i].Spec.Hand; h.Kind {
		case kindHandNote:
			note := p.HandwritingText
			if p.Handwriting == nil || note == "" || !strings.Contains(p.Text, note) {
				t.Errorf("%s: handwriting_text %q, handwriting %+v: want the note, also in the page's text %q", r.SourceID, note, p.Handwriting, p.Text)
				continue
			}
			if !slices.ContainsFunc(handNotes, func(n []string) bool { return strings.EqualFold(strings.Join(n, "\n"), note) }) {
				t.Errorf("%s: note %q is not from the bank", r.SourceID, note)
			}
			b := p.Handwriting.Box
			if b[0] >= b[2] || b[1] >= b[3] || b[0] < 0 || b[1] < 0 || b[3] > 12*100 {
				t.Errorf("%s: note box %v is not on a 100 DPI page", r.SourceID, b)
			}
		case kindSignature:
			if p.Signature == nil || p.HandwritingText != "" || p.Handwriting != nil {
				t.Errorf("%s: signature %+v, handwriting_text %q: want a signature and no note", r.SourceID, p.Signature, p.HandwritingText)
			} else if !strings.Contains(p.Text, p.Signature.Printed) {
				t.Errorf("%s: the signature's printed words %q are not in the page's text", r.SourceID, p.Signature.Printed)
			}
		case kindColumns:
			layouts = append(layouts, h.Layout)
			n := 0
			for _, b := range p.ColumnBlocks {
				if b.Kind == "column" {
					n++
				}
			}
			bg, plan := strings.Index(p.Text, "Background"), strings.Index(p.Text, "Current plan")
			if !p.Columns || n != 2 || bg < 0 || plan < bg {
				t.Errorf("%s: columns %v, %d column blocks, Background at %d, Current plan at %d: want two columns in reading order", r.SourceID, p.Columns, n, bg, plan)
			}
			if h.Layout == "above_table" && !strings.Contains(p.Text, "\nMedicine Dose Frequency\n") {
				t.Errorf("%s: the table's header row is not a line of the page's text", r.SourceID)
			}
		}
	}
	slices.Sort(layouts)
	if !slices.Equal(layouts, []string{"above_full", "above_table", "unequal_below"}) {
		t.Errorf("column layouts %v, want each of the three once", layouts)
	}
}
