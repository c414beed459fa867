package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHardAppended checks that --hard only adds: every file of the corpus
// without it is byte-identical, manifest.csv and expected.csv gain rows at
// their end only, and those rows are the hard documents, numbered on from
// the highest source number, with the outcomes hardDocs gives them.
func TestHardAppended(t *testing.T) {
	without := smallAll
	without.Hard = 0
	dir := generate(t, without)
	base, with := hashes(t, dir), hashes(t, smallAllDir)
	for p, h := range base {
		if p == "manifest.csv" || p == "expected.csv" {
			continue
		}
		if with[p] != h {
			t.Errorf("%s changed when --hard was added", p)
		}
	}
	for _, name := range []string{"manifest.csv", "expected.csv"} {
		a, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(smallAllDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(b, a) || len(b) == len(a) {
			t.Errorf("%s with --hard does not extend the one without it", name)
		}
	}

	last := 0
	for _, r := range expectations(t, dir) {
		var n int
		fmt.Sscanf(r[0], "R-%d", &n)
		last = max(last, n)
	}
	got := expectations(t, smallAllDir)[len(expectations(t, dir)):]
	if len(got) != smallAll.Hard {
		t.Fatalf("%d rows appended, want %d", len(got), smallAll.Hard)
	}
	var added []string
	for i, r := range got {
		h := hardDocs[i%len(hardDocs)]
		if want := []string{fmt.Sprintf("R-%04d", last+1+i), string(h.State), string(h.Reason)}; strings.Join(r, ",") != strings.Join(want, ",") {
			t.Errorf("appended row %d is %v, want %v", i+1, r, want)
		}
		added = append(added, "docs/"+r[0]+".pdf", "truth/"+r[0]+".json")
	}
	for p := range with {
		if _, ok := base[p]; !ok && !strings.Contains(strings.Join(added, " "), p) {
			t.Errorf("%s is new with --hard but is no hard document's", p)
		}
	}
	for _, p := range added {
		if _, ok := with[p]; !ok {
			t.Errorf("%s is not written", p)
		}
	}
}

// TestHardTruth checks that each hard document's truth records its
// recipe: the variant, and every page's kind, DPI and degradation.
func TestHardTruth(t *testing.T) {
	i := 0
	for _, e := range plan(smallAll) {
		if !e.Hard {
			continue
		}
		h := hardDocs[i%len(hardDocs)]
		i++
		t.Run(e.Spec.SourceID, func(t *testing.T) {
			td := readTruth(t, filepath.Join(smallAllDir, "truth", e.Spec.SourceID+".json"))
			if td.Variant != varHard || len(td.Pages) != len(h.Pages) {
				t.Fatalf("variant %q with %d pages, want %q with %d", td.Variant, len(td.Pages), varHard, len(h.Pages))
			}
			if h.BodyPt != 0 && td.BodyPt != h.BodyPt {
				t.Errorf("body %.1f pt, want %.1f", td.BodyPt, h.BodyPt)
			}
			for j, p := range td.Pages {
				s, hp := p.Scan, h.Pages[j]
				if s == nil || s.Degradation == nil {
					t.Fatalf("page %d has no degradation record", j+1)
				}
				if s.Kind != hp.Kind || !isHard(s.Kind) || s.DPI != h.DPI || s.JPEGQuality != hp.Quality || p.SkewDegrees != hp.Skew || p.Bitonal != hp.oneBit() {
					t.Errorf("page %d: kind %s at %d DPI, quality %d, skew %.1f, bitonal %v; the table says %+v at %d DPI",
						j+1, s.Kind, s.DPI, s.JPEGQuality, p.SkewDegrees, p.Bitonal, hp, h.DPI)
				}
				// Kind, skew and quality are recorded beside it.
				hp.Kind, hp.Skew, hp.Quality = "", 0, 0
				if *s.Degradation != hp {
					t.Errorf("page %d: degradation %+v, want %+v", j+1, *s.Degradation, hp)
				}
			}
		})
	}
	if i != smallAll.Hard {
		t.Errorf("%d hard documents planned, want %d", i, smallAll.Hard)
	}
}

// TestHardCycles checks that past the end of hardDocs the table starts
// again with fresh content and identities.
func TestHardCycles(t *testing.T) {
	n := len(hardDocs) + 2
	es := plan(options{Seed: 1, Hard: n, DPIs: []int{150}})
	if len(es) != n {
		t.Fatalf("%d rows planned, want %d", len(es), n)
	}
	ids, streams := map[string]bool{}, map[uint64]bool{}
	for i, e := range es {
		if want := fmt.Sprintf("R-%04d", i+1); e.Spec.SourceID != want {
			t.Errorf("row %d is %s, want %s", i+1, e.Spec.SourceID, want)
		}
		if ids[e.Spec.ParticipantID] || streams[e.Spec.Stream] {
			t.Errorf("%s repeats a participant ID or a content stream", e.Spec.SourceID)
		}
		ids[e.Spec.ParticipantID], streams[e.Spec.Stream] = true, true
		if got, want := e.Spec.Scan.Kinds[0], hardDocs[i%len(hardDocs)].Pages[0].Kind; got != want {
			t.Errorf("%s is %s, want %s", e.Spec.SourceID, got, want)
		}
	}
}
