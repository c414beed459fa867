package main

import (
	"bytes"
	"fmt"
	"image"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// smallCov is smallAll with one cycle of the coverage deck appended; it
// is generated once, into smallCovDir, by TestMain.
var smallCov = func() options {
	o := smallAll
	o.Coverage = len(coverageKinds)
	return o
}()

// TestCoverageAppended checks that --coverage only adds: every file of
// the corpus without it is byte-identical, manifest.csv and expected.csv
// gain rows at their end only, and those rows are the coverage documents,
// numbered on after the hard ones, with the outcomes their kinds expect.
func TestCoverageAppended(t *testing.T) {
	base, with := hashes(t, smallAllDir), hashes(t, smallCovDir)
	for p, h := range base {
		if p == "manifest.csv" || p == "expected.csv" {
			continue
		}
		if with[p] != h {
			t.Errorf("%s changed when --coverage was added", p)
		}
	}
	for _, name := range []string{"manifest.csv", "expected.csv"} {
		a, err := os.ReadFile(filepath.Join(smallAllDir, name))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(smallCovDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(b, a) || len(b) == len(a) {
			t.Errorf("%s with --coverage does not extend the one without it", name)
		}
	}

	before := expectations(t, smallAllDir)
	last := 0
	for _, r := range before {
		var n int
		fmt.Sscanf(r[0], "R-%d", &n)
		last = max(last, n)
	}
	got := expectations(t, smallCovDir)[len(before):]
	if len(got) != smallCov.Coverage {
		t.Fatalf("%d rows appended, want %d", len(got), smallCov.Coverage)
	}
	var covs []entry
	for _, e := range plan(smallCov) {
		if e.Coverage {
			covs = append(covs, e)
		}
	}
	added := map[string]bool{}
	for i, r := range got {
		state, reason := coverageOutcome(*covs[i].Spec.Cover)
		if want := []string{fmt.Sprintf("R-%04d", last+1+i), state, reason}; !slices.Equal(r, want) {
			t.Errorf("appended row %d is %v, want %v", i+1, r, want)
		}
		added["docs/"+r[0]+".pdf"], added["truth/"+r[0]+".json"] = true, true
	}
	for p := range with {
		if _, ok := base[p]; !ok && !added[p] {
			t.Errorf("%s is new with --coverage but is no coverage document's", p)
		}
	}
	for p := range added {
		if _, ok := with[p]; !ok {
			t.Errorf("%s is not written", p)
		}
	}
}

// TestCoverageTruth checks each coverage document's truth: its recipe on
// every page, the faint print as consecutive lines of the page's text, a
// column section in column order, stamps that cross lines, and no faint
// print on the clean kinds. One cycle of the deck holds every kind.
func TestCoverageTruth(t *testing.T) {
	kinds := map[string]int{}
	for _, e := range plan(smallCov) {
		if !e.Coverage {
			continue
		}
		c := *e.Spec.Cover
		kinds[c.Kind]++
		t.Run(e.Spec.SourceID+"-"+c.Kind, func(t *testing.T) {
			td := readTruth(t, filepath.Join(smallCovDir, "truth", e.Spec.SourceID+".json"))
			if td.Variant != varCoverage || len(td.Pages) != c.Pages || td.DPI != c.DPI {
				t.Fatalf("variant %q, %d pages at %d DPI; planned %d pages at %d", td.Variant, len(td.Pages), td.DPI, c.Pages, c.DPI)
			}
			for i, p := range td.Pages {
				s := p.Scan
				if s == nil || s.Coverage == nil || s.Coverage.Kind != c.Kind || s.DPI != c.DPI || p.Bitonal {
					t.Fatalf("page %d: scan record %+v", i+1, s)
				}
				m := s.Coverage
				if (c.Colour != nil) != (s.Colour == "rgb") || (c.Colour != nil) != (m.PaperColour != "") {
					t.Errorf("page %d: colour %s, paper %q; planned %v", i+1, s.Colour, m.PaperColour, c.Colour)
				}
				on := i == c.On
				if got, want := p.FaintText != "", on && c.faint(); got != want {
					t.Errorf("page %d: faint text %v, want %v", i+1, got, want)
				}
				if (m.Faint != nil) != (on && c.faint()) || p.Columns != (on && c.Kind == covColumns) || (m.Stamps > 0) != (on && c.Kind == covStamps) {
					t.Errorf("page %d: recipe %+v, columns %v; planned %+v", i+1, *m, p.Columns, c)
				}
				if !on {
					continue
				}
				lines := strings.Split(p.Text, "\n")
				switch {
				case c.faint():
					f := strings.Split(p.FaintText, "\n")
					at := slices.Index(lines, f[0])
					if at < 0 || at+len(f) >= len(lines) || !slices.Equal(lines[at:at+len(f)], f) {
						t.Errorf("faint text is not consecutive lines of the page's text, before its page number")
					}
					if c.Faint.Where == whereNote && !strings.HasPrefix(f[0], noteOpening) {
						t.Errorf("the note starts %q", f[0])
					}
					if c.Faint.Where == whereFooter && (len(f) < 3 || len(f) > 5) {
						t.Errorf("a footer of %d lines of small print", len(f))
					}
					if *m.Faint != *c.Faint {
						t.Errorf("faint recipe %+v, planned %+v", *m.Faint, *c.Faint)
					}
				case c.Kind == covColumns:
					i, j := slices.Index(lines, "Background"), slices.Index(lines, "Current plan")
					if i < 1 || lines[i-1] != "Clinical summary" || j < i+2 || j == len(lines)-2 || m.GutterIn < 0.25 || m.GutterIn > 0.5 {
						t.Errorf("column section not in column order, or gutter %.2f in: %q", m.GutterIn, lines)
					}
				case c.Kind == covStamps:
					if m.Stamps != c.Stamps || m.CrossedLines < 2 || strings.Count(s.Stamp, " ") < 3*c.Stamps-1 {
						t.Errorf("%d stamps crossing %d lines, words %q", m.Stamps, m.CrossedLines, s.Stamp)
					}
				default:
					if !strings.Contains(p.Text, noteOpening) && c.Layout == covFaintNote {
						t.Errorf("no note in dark print")
					}
				}
			}
		})
	}
	for _, k := range coverageKinds {
		if kinds[k] == 0 {
			t.Errorf("no %s document in one cycle of the deck", k)
		}
	}
}

// TestCoverageDeal checks that the deck deals every kind equally often
// and spreads the faint print's levels over their ranges.
func TestCoverageDeal(t *testing.T) {
	o := options{Seed: 4, DPIs: []int{150, 200, 300}, Coverage: 5 * len(coverageKinds), FaintInk: [2]int{120, 170}}
	kinds, dpis, strata, pts, blurs, later := map[string]int{}, map[int]int{}, map[int]int{}, map[float64]int{}, map[string]int{}, map[bool]int{}
	for _, e := range plan(o) {
		c := e.Spec.Cover
		kinds[c.Kind]++
		dpis[c.DPI]++
		if f := c.Faint; f != nil {
			if int(f.Ink) < 120 || int(f.Ink) > 170 {
				t.Errorf("%s: faint ink %d outside 120-170", e.Spec.SourceID, f.Ink)
			}
			strata[(int(f.Ink)-120)*5/51]++
			pts[f.Pt]++
			blurs[f.Blur]++
			later[c.On > 0]++
		}
	}
	perCycle := map[string]int{}
	for _, k := range coverageKinds {
		perCycle[k]++
	}
	for k, n := range perCycle {
		if kinds[k] != 5*n {
			t.Errorf("kind %s dealt %d times in 5 cycles, want %d", k, kinds[k], 5*n)
		}
	}
	if len(dpis) != 3 || len(strata) != 5 || len(pts) != 3 || len(blurs) != 2 || len(later) != 2 {
		t.Errorf("levels dealt: DPI %v, ink strata %v, sizes %v, blur %v, later page %v", dpis, strata, pts, blurs, later)
	}
}

// TestCoverageLayoutFits renders many coverage documents at a low DPI: no
// content, paper and type size may leave the note, footer or columns no
// room.
func TestCoverageLayoutFits(t *testing.T) {
	if _, err := build(options{Seed: 9, Coverage: 3 * len(coverageKinds), DPIs: []int{72}, MaxBytes: DefaultMaxBytes}); err != nil {
		t.Fatal(err)
	}
}

// TestScanCoverPage checks the tones a coverage page is stored in: faint
// print no darker than its grey level (lighter still when soft), on paper
// of the look's grey or colour, and the dark print at the ink's level.
func TestScanCoverPage(t *testing.T) {
	blank := func() *image.Gray {
		g := image.NewGray(image.Rect(0, 0, 40, 20))
		fill(g, 255)
		return g
	}
	bar := func(x0 int) *image.Gray {
		g := blank()
		for y := 5; y < 15; y++ {
			for x := x0; x < x0+2; x++ {
				g.Pix[y*g.Stride+x] = 0
			}
		}
		return g
	}
	look := coverLook{Paper: 245, Ink: 20, PaperRGB: [3]uint8{214, 228, 244}, InkRGB: [3]uint8{30, 30, 40}}
	tests := []struct {
		name     string
		faint    faintPrint
		colour   bool
		faintMin uint8 // the darkest faint pixel, at least
		faintMax uint8 // and at most
		paper    [3]uint8
		inkTop   uint8 // the dark bar's darkest channel, at most
	}{
		{name: "grey, sharp", faint: faintPrint{Ink: 150}, faintMin: 150, faintMax: 150, paper: [3]uint8{245, 245, 245}, inkTop: 20},
		{name: "grey, soft", faint: faintPrint{Ink: 150, Blur: "slight", BlurRadius: 1, BlurPasses: 1}, faintMin: 170, faintMax: 215, paper: [3]uint8{245, 245, 245}, inkTop: 20},
		{name: "coloured, sharp", faint: faintPrint{Ink: 170}, colour: true, faintMin: 170, faintMax: 170, paper: [3]uint8{214, 228, 244}, inkTop: 40},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := coverDoc{DPI: 150, Faint: &tc.faint}
			if tc.colour {
				c.Colour = &paperColours[0]
			}
			f := tc.faint
			img := scanCoverPage(nil, coverPlanes{ink: bar(4), faint: bar(24)}, c, look, 0)
			at := func(x, y int) [3]uint8 {
				switch g := img.(type) {
				case *image.Gray:
					v := g.Pix[y*g.Stride+x]
					return [3]uint8{v, v, v}
				case *image.RGBA:
					o := g.PixOffset(x, y)
					return [3]uint8{g.Pix[o], g.Pix[o+1], g.Pix[o+2]}
				}
				t.Fatalf("image %T", img)
				return [3]uint8{}
			}
			if _, rgb := img.(*image.RGBA); rgb != tc.colour {
				t.Fatalf("image %T, colour %v", img, tc.colour)
			}
			if p := at(15, 2); p != tc.paper {
				t.Errorf("paper %v, want %v", p, tc.paper)
			}
			if p := at(4, 10); max(p[0], p[1], p[2]) > tc.inkTop {
				t.Errorf("dark print %v, want every channel at most %d", p, tc.inkTop)
			}
			darkest := uint8(255)
			for x := 20; x < 30; x++ {
				darkest = min(darkest, at(x, 10)[0])
			}
			if darkest < tc.faintMin || darkest > tc.faintMax {
				t.Errorf("faint print %s: darkest %d, want %d to %d", f.Blur, darkest, tc.faintMin, tc.faintMax)
			}
		})
	}
}
