package main

import (
	"slices"
	"strings"
	"testing"
)

// TestMarksTruth draws signed letters from every family of marks at 100
// DPI, and letters with a note in capitals, and checks what their truth
// promises: rows after every other, expected done (a note: done or
// review handwriting); every letter signed, its marks each with a kind,
// a family of that kind, whether it was held out, and a box on the page;
// the sign-off's printed words in the page's text; a capitals note in
// capitals, in the page's text.
func TestMarksTruth(t *testing.T) {
	t.Parallel()
	if err := checkMarkFonts(); err != nil {
		t.Skipf("handwriting fonts missing (make deps): %v", err)
	}
	base := options{Seed: 9, Docs: 1, DPIs: []int{100}, MaxBytes: DefaultMaxBytes}
	o := base
	o.Marks, o.CapsNotes, o.MarkFamilies, o.HandDPIs = 14, 2, markFamilies, []int{100}
	before, after := plan(base), plan(o)
	if len(after) != len(before)+16 {
		t.Fatalf("%d rows planned, want %d", len(after), len(before)+16)
	}
	for i, e := range before {
		if a := after[i].Spec; a.SourceID != e.Spec.SourceID || a.Stream != e.Spec.Stream {
			t.Errorf("row %d changed when the marked letters were added", i)
		}
	}
	c, err := build(o)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for i, r := range c.Rows[len(before):] {
		p := c.Truth[len(before)+i].Pages[0]
		caps := after[len(before)+i].Spec.Marks.Kind == kindCapsNote
		if want := map[bool]string{false: "done", true: "done|review"}[caps]; r.State != want {
			t.Errorf("%s expects %s, want %s", r.SourceID, r.State, want)
		}
		if p.Signature == nil || !strings.Contains(strings.Join(strings.Fields(p.Text), " "), p.Signature.Printed) {
			t.Errorf("%s: signature %+v: want one, its printed words in the page's text", r.SourceID, p.Signature)
		}
		if caps != (p.HandwritingText != "") || caps && (p.HandwritingText != strings.ToUpper(p.HandwritingText) || !strings.Contains(p.Text, p.HandwritingText)) {
			t.Errorf("%s: note %q: want a note in capitals, in the page's text, on the capitals letters only", r.SourceID, p.HandwritingText)
		}
		for _, m := range p.Marks {
			i := slices.IndexFunc(markFamilies, func(f markFamily) bool { return f.Name == m.Family })
			if i < 0 || markFamilies[i].Kind != m.Kind || markFamilies[i].Held != m.Held {
				t.Errorf("%s: mark %+v is of no family of its kind", r.SourceID, m)
			}
			if b := m.Box; b[0] >= b[2] || b[1] >= b[3] || b[2] < 0 || b[3] > 14*100 {
				t.Errorf("%s: mark box %v is not on a 100 DPI page", r.SourceID, b)
			}
			kinds[m.Kind] = true
		}
	}
	if len(kinds) != 3 {
		t.Errorf("kinds of mark drawn %v, want signatures, stamps and margin marks", kinds)
	}
}

// TestSelectFamilies: the sets and the names --mark-families takes, and a
// name of no family refused with the names it knows.
func TestSelectFamilies(t *testing.T) {
	t.Parallel()
	held, err := selectFamilies("held-out")
	if err != nil || len(held) == 0 || slices.ContainsFunc(held, func(f markFamily) bool { return !f.Held }) {
		t.Errorf("held-out: %v, %v", held, err)
	}
	cal, err := selectFamilies("calibration")
	if err != nil || len(cal)+len(held) != len(markFamilies) {
		t.Errorf("calibration: %d families, %v; want the %d others", len(cal), err, len(markFamilies)-len(held))
	}
	for _, kind := range []string{markSignature, markStamp, markMargin} {
		for _, set := range [][]markFamily{held, cal} {
			if !slices.ContainsFunc(set, func(f markFamily) bool { return f.Kind == kind }) {
				t.Errorf("a set without a %s family", kind)
			}
		}
	}
	if got, err := selectFamilies("garland, tick"); err != nil || len(got) != 2 {
		t.Errorf("two names: %v, %v", got, err)
	}
	if _, err := selectFamilies("garland,nosuch"); err == nil || !strings.Contains(err.Error(), "nosuch") || !strings.Contains(err.Error(), "scribble") {
		t.Errorf("an unknown family: %v, want an error naming it and the known ones", err)
	}
}
