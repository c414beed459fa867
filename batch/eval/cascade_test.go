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
	if got.MeanCER > got.FullMeanCER {
		t.Errorf("cascade mean CER %.4f over no cascade's %.4f", got.MeanCER, got.FullMeanCER)
	}
	if _, ok := SuggestCascade(full[:1], nil); ok {
		t.Error("a suggestion from no pairs")
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
