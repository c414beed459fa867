package eval

import (
	"strings"
	"testing"
)

// probeDoc is a document of one page per entry: its CER and, for the
// first resolution's reading, its signals.
func probeDoc(id string, pages ...PageScore) DocScore {
	return DocScore{SourceID: id, Read: true, Pages: pages}
}

func probed(cer float64, conf float64, height int) PageScore {
	return PageScore{CER: ErrorRate{Rate: cer}, Read: &PageRead{DPI: 200, Signals: &PageSignals{CharConf: conf, CredibleInk: 1, WordHeight: height}}}
}

// TestSuggestCascade: the pages whose first reading is much worse are read
// again, by the signal that tells them; the clean pages are not.
func TestSuggestCascade(t *testing.T) {
	full := []DocScore{probeDoc("a", probed(0.01, 96, 40), probed(0.01, 96, 40)), probeDoc("b", probed(0.02, 90, 30), probed(0.01, 95, 40))}
	first := []DocScore{
		probeDoc("a", probed(0.01, 96, 26), probed(0.008, 95, 26)),
		// small print: much worse at the first resolution, confident
		// all the same; and a page of low confidence, worse too.
		probeDoc("b", probed(0.12, 93, 12), probed(0.09, 80, 26)),
	}
	got, ok := SuggestCascade(full, first)
	if !ok {
		t.Fatal("no suggestion")
	}
	t.Logf("%+v", got)
	if got.Pages != 4 || got.Needed != 2 || got.Missed != 0 || got.Asked != 2 {
		t.Errorf("pages %d needed %d missed %d asked %d; want 4, 2, 0, 2", got.Pages, got.Needed, got.Missed, got.Asked)
	}
	if got.MinWordHeight <= 12 || got.MinWordHeight > 26 || got.MinCharConf <= 80 || got.MinCharConf > 95 {
		t.Errorf("thresholds %+v do not separate the pages", got)
	}
	if !got.Cascade.noWorse(got.Full) {
		t.Errorf("cascade figures %+v worse than no cascade's %+v", got.Cascade, got.Full)
	}
	if _, ok := SuggestCascade(full[:1], nil); ok {
		t.Error("a suggestion from no pairs")
	}
}

// TestSuggestCascadeHoldsEveryFigure: the probe counts the pages the
// text figures count, and holds each figure no worse: a page that reads
// its words worse at the first resolution, its characters as well, is
// read again; so is every page of a document whose participant ID only
// the full resolution finds; doubted and coverage documents are left out.
func TestSuggestCascadeHoldsEveryFigure(t *testing.T) {
	page := func(cd, wd int, conf float64, height int) PageScore {
		return PageScore{CER: ErrorRate{Distance: cd, N: 500, Rate: float64(cd) / 500}, WER: ErrorRate{Distance: wd, N: 80, Rate: float64(wd) / 80},
			Read: &PageRead{DPI: 200, TextSource: "ocr", Signals: &PageSignals{CharConf: conf, CredibleInk: 2, WordHeight: height}}}
	}
	yes, no := true, false
	full := []DocScore{
		probeDoc("clean", page(2, 1, 96, 33), page(2, 1, 96, 33)),
		probeDoc("words", page(3, 1, 95, 33)),
		{SourceID: "id", Read: true, IDFound: &yes, Pages: []PageScore{page(5, 2, 96, 33)}},
		{SourceID: "doubted", Read: true, Doubted: true, Pages: []PageScore{page(90, 40, 60, 33)}},
		{SourceID: "coverage", Read: true, Coverage: true, Pages: []PageScore{page(9, 3, 94, 33)}},
	}
	first := []DocScore{
		// One character better at the first resolution, the other a
		// character worse: the mean holds.
		probeDoc("clean", page(1, 1, 97, 24), page(3, 1, 97, 24)),
		// The same characters, two words more wrong, by a page that is
		// a little less confident.
		probeDoc("words", page(3, 3, 93, 24)),
		{SourceID: "id", Read: true, IDFound: &no, Pages: []PageScore{page(5, 2, 94, 24)}},
		{SourceID: "doubted", Read: true, Doubted: true, Pages: []PageScore{page(99, 50, 50, 12)}},
		{SourceID: "coverage", Read: true, Coverage: true, Pages: []PageScore{page(30, 9, 94, 12)}},
	}
	got, ok := SuggestCascade(full, first)
	if !ok {
		t.Fatal("no suggestion")
	}
	t.Logf("%+v", got)
	if got.Pages != 4 || got.MustAsk != 1 {
		t.Errorf("pages %d must ask %d; want 4 (no doubted, no coverage page) and 1", got.Pages, got.MustAsk)
	}
	if got.Asked != 2 || got.MinCharConf <= 94 || got.MinCharConf > 97 {
		t.Errorf("asked %d under char conf %v; want 2 (the worse words, the document of the ID), over 94 and at most 97", got.Asked, got.MinCharConf)
	}
	if !got.Cascade.noWorse(got.Full) || got.First.noWorse(got.Full) {
		t.Errorf("figures: cascade %+v, all at first %+v, all at full %+v", got.Cascade, got.First, got.Full)
	}
}

// TestScoreCascade counts the pages read twice and prints them.
func TestScoreCascade(t *testing.T) {
	once := PageScore{CER: ErrorRate{Rate: 0.01}, Read: &PageRead{DPI: 200, FirstDPI: 200, RenderNS: 10, RecogniseNS: 90}}
	twice := PageScore{CER: ErrorRate{Rate: 0.03}, Read: &PageRead{DPI: 300, FirstDPI: 200, SecondPass: true, CascadeReason: "word_height", RenderNS: 50, RecogniseNS: 250}}
	layer := PageScore{Read: &PageRead{DPI: 300, RenderNS: 20, RecogniseNS: 80}}
	c := scoreCascade([]DocScore{probeDoc("a", once, twice, layer)})
	if c == nil || c.Pages != 3 || c.FirstRead != 2 || c.ReadTwice != 1 || c.Reasons["word_height"] != 1 || c.TwiceNS != 300 || c.EngineNS != 500 {
		t.Fatalf("got %+v", c)
	}
	if scoreCascade([]DocScore{probeDoc("a", layer)}) != nil {
		t.Error("figures for a batch without the cascade")
	}
	var b strings.Builder
	(&Report{Result: Result{Cascade: c}}).writeCascade(&b)
	if !strings.Contains(b.String(), "1 of them read again (50.0%") || !strings.Contains(b.String(), "60.0% of the engines' time") {
		t.Errorf("printed %q", b.String())
	}
}
