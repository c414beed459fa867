package batch

import (
	"context"
	"fmt"
	"testing"

	"github.com/refbatch/refbatch/batch/audit"
	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/ocr"
)

// TestArtifactRecordsCascade: every page of an artifact says how it was
// read: the resolution of its first reading and whether it was read again
// (at 100 dpi every page's print is small, so each is) under --cascade,
// or, by default (the cascade off), neither; the run's settings record
// the cascade.
func TestArtifactRecordsCascade(t *testing.T) {
	doc := goodSamples(t)[0]
	for _, cascade := range []bool{true, false} {
		out := t.TempDir()
		o := testOptions(t, writeManifest(t, t.TempDir(), [][4]string{{doc.sourceID, doc.path, doc.participantID, doc.date}}), out, "")
		o.DPI, o.FirstDPI, o.Cascade = 200, 100, cascade
		res, err := Run(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := res.Report.Run.Settings["cascade"], fmt.Sprint(cascade); got != want || res.Report.Run.Settings["first_dpi"] != "100" {
			t.Errorf("settings record cascade %q, first_dpi %q; want %q, 100", got, res.Report.Run.Settings["first_dpi"], want)
		}
		var pages []ocr.PageResult
		err = audit.ReadArtifacts(layout.Place{Out: out}, nil, func(_ string, a *layout.Artifact) error {
			pages = append(pages, a.Pages...)
			return nil
		})
		if err != nil || len(pages) == 0 {
			t.Fatalf("reading the artifact: %v (%d pages)", err, len(pages))
		}
		for _, p := range pages {
			t.Logf("cascade %t: page %d at %d dpi, first %d, second pass %t (%s)", cascade, p.Index, p.DPI, p.FirstDPI, p.SecondPass, p.CascadeReason)
			noCascade := !cascade
			switch {
			case noCascade && (p.FirstDPI != 0 || p.SecondPass || p.DPI != 200):
				t.Errorf("page %d without the cascade: first %d, second pass %t, dpi %d", p.Index, p.FirstDPI, p.SecondPass, p.DPI)
			case !noCascade && p.Blank:
			case !noCascade && (p.FirstDPI != 100 || !p.SecondPass || p.CascadeReason == ""):
				t.Errorf("page %d: first %d, second pass %t (%q); want 100, read again for a reason", p.Index, p.FirstDPI, p.SecondPass, p.CascadeReason)
			}
		}
	}
}
