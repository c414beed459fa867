package batch

import (
	"context"
	"testing"

	"github.com/refbatch/refbatch/ocr"
)

// TestArtifactRecordsCascade: every page of an artifact says how it was
// read: the resolution of its first reading and whether it was read again
// (at 100 dpi every page's print is small, so each is), or, under
// --no-cascade, neither; the run's settings record the cascade.
func TestArtifactRecordsCascade(t *testing.T) {
	doc := goodSamples(t)[0]
	for _, noCascade := range []bool{false, true} {
		out := t.TempDir()
		o := testOptions(t, writeManifest(t, t.TempDir(), [][4]string{{doc.sourceID, doc.path, doc.participantID, doc.date}}), out, "")
		o.DPI, o.FirstDPI, o.NoCascade = 200, 100, noCascade
		res, err := Run(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := res.Report.Run.Settings["cascade"], map[bool]string{false: "true", true: "false"}[noCascade]; got != want || res.Report.Run.Settings["first_dpi"] != "100" {
			t.Errorf("settings record cascade %q, first_dpi %q; want %q, 100", got, res.Report.Run.Settings["first_dpi"], want)
		}
		var pages []ocr.PageResult
		err = ReadArtifacts(Place{Out: out}, nil, func(_ string, a *Artifact) error {
			pages = append(pages, a.Pages...)
			return nil
		})
		if err != nil || len(pages) == 0 {
			t.Fatalf("reading the artifact: %v (%d pages)", err, len(pages))
		}
		for _, p := range pages {
			t.Logf("no cascade %t: page %d at %d dpi, first %d, second pass %t (%s)", noCascade, p.Index, p.DPI, p.FirstDPI, p.SecondPass, p.CascadeReason)
			switch {
			case noCascade && (p.FirstDPI != 0 || p.SecondPass || p.DPI != 200):
				t.Errorf("page %d under --no-cascade: first %d, second pass %t, dpi %d", p.Index, p.FirstDPI, p.SecondPass, p.DPI)
			case !noCascade && p.Blank:
			case !noCascade && (p.FirstDPI != 100 || !p.SecondPass || p.CascadeReason == ""):
				t.Errorf("page %d: first %d, second pass %t (%q); want 100, read again for a reason", p.Index, p.FirstDPI, p.SecondPass, p.CascadeReason)
			}
		}
	}
}
