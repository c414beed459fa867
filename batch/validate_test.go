package batch

import (
	"slices"
	"strings"
	"testing"

	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/ocr"
	"github.com/refbatch/refbatch/report/outcome"
)

func textPage(text string, confs ...float64) ocr.PageResult {
	p := ocr.PageResult{Text: text}
	for i, c := range confs {
		p.Words = append(p.Words, ocr.Word{Text: "word" + string(rune('a'+i)), Conf: c})
	}
	return p
}

// unread marks share of a page's print as left unread.
func unread(p ocr.PageResult, share float64) ocr.PageResult {
	p.UncoveredShare = share
	return p
}

// pageWords builds a page from (word, confidence) pairs.
func pageWords(text string, pairs ...any) ocr.PageResult {
	p := ocr.PageResult{Text: text}
	for i := 0; i < len(pairs); i += 2 {
		p.Words = append(p.Words, ocr.Word{Text: pairs[i].(string), Conf: float64(pairs[i+1].(int))})
	}
	return p
}

func TestValidate(t *testing.T) {
	o := Options{}.withDefaults()
	const date = "2024-03-07"
	tests := []struct {
		name   string
		pages  []ocr.PageResult
		id     string
		date   string
		state  outcome.State
		reason outcome.Reason
		band   outcome.Band
	}{
		{"good text with the ID", []ocr.PageResult{textPage("Participant ID: P-123456", 95, 96, 95)}, "P-123456", "", "done", "", "high"},
		{"ID split by OCR whitespace", []ocr.PageResult{textPage("Participant ID: P- 123456", 95, 95, 95)}, "P-123456", "", "done", "", "high"},
		{"em dash read for the hyphen", []ocr.PageResult{textPage("Participant ID: P—123456", 95, 95, 95)}, "P-123456", "", "done", "", "high"},
		{"ID on a later page", []ocr.PageResult{textPage("cover", 95), textPage("id p-123456", 95, 95)}, "P-123456", "", "done", "", "high"},
		{"medium band still done", []ocr.PageResult{textPage("P-123456", 85, 85, 85)}, "P-123456", "", "done", "", "medium"},
		{"no words at all", []ocr.PageResult{textPage(""), textPage("  ")}, "P-1", "", "review", "empty_text", "low"},
		{"noise in a picture is no text", []ocr.PageResult{pageWords("ih By ye", "ih", 65, "By", 64, "ye", 61, "qzx", 20)}, "P-1", "", "review", "empty_text", "low"},
		{"low confidence wins over a missing ID", []ocr.PageResult{textPage("garbage", 20, 30, 70, 70, 70)}, "P-1", "", "review", "low_confidence", "low"},
		{"ID not found", []ocr.PageResult{textPage("Participant ID: P-123457", 95, 95, 95)}, "P-123456", "", "review", "id_not_found", "high"},
		{"junk weighs by its characters", []ocr.PageResult{pageWords("7: Kodak Capture - Desktop Test",
			"7:", 0, "Kodak", 96, "Capture", 94, "-", 0, "Desktop", 88, "Test", 95)}, "", "", "done", "", "medium"},
		{"O for 0 is not forgiven", []ocr.PageResult{textPage("P-12345O", 95, 95, 95)}, "P-123450", "", "review", "id_not_found", "high"},

		{"ID and date found", []ocr.PageResult{textPage("Participant ID: P-123456\nReferral date: 2024-03-07", 95, 95, 95)}, "P-123456", date, "done", "", "high"},
		{"date in another form on a later page", []ocr.PageResult{textPage("Participant ID: P-123456", 95, 95, 95), textPage("Seen on 7th March 2024.", 95)}, "P-123456", date, "done", "", "high"},
		{"date missing", []ocr.PageResult{textPage("Participant ID: P-123456", 95, 95, 95)}, "P-123456", date, "review", "date_not_found", "high"},
		{"wrong day", []ocr.PageResult{textPage("Participant ID: P-123456 Referral date: 2024-03-08", 95, 95, 95)}, "P-123456", date, "review", "date_not_found", "high"},
		{"date found but ID missing", []ocr.PageResult{textPage("Referral date: 2024-03-07", 95, 95, 95)}, "P-123456", date, "review", "id_not_found", "high"},
		{"date checked without an ID", []ocr.PageResult{textPage("Referral date: 2024-03-17", 95, 95, 95)}, "", date, "review", "date_not_found", "high"},
		{"no ID and no date: checks off", []ocr.PageResult{textPage("nothing to match here", 95, 95, 95)}, "", "", "done", "", "high"},
		{"low confidence wins over a missing date", []ocr.PageResult{textPage("garbage", 20, 30, 70, 70, 70)}, "", date, "review", "low_confidence", "low"},

		{"print left unread: never high", []ocr.PageResult{unread(textPage("Participant ID: P-123456", 95, 96, 95), 0.5)}, "P-123456", "", "review", "incomplete_text", "medium"},
		{"unread print on a later page", []ocr.PageResult{textPage("Participant ID: P-123456", 95, 95, 95), unread(textPage("more", 95, 95, 95), 0.4)}, "P-123456", "", "review", "incomplete_text", "medium"},
		{"a trace left unread is done", []ocr.PageResult{unread(textPage("Participant ID: P-123456", 95, 96, 95), 0.02)}, "P-123456", "", "done", "", "high"},
		{"more unread than the high band allows", []ocr.PageResult{unread(textPage("Participant ID: P-123456", 95, 96, 95), 0.05)}, "P-123456", "", "done", "", "medium"},
		{"unread print wins over a missing ID", []ocr.PageResult{unread(textPage("Participant ID: P-123457", 95, 95, 95), 0.5)}, "P-123456", "", "review", "incomplete_text", "medium"},
		{"low confidence wins over unread print", []ocr.PageResult{unread(textPage("garbage", 20, 30, 70, 70, 70), 0.5)}, "", "", "review", "low_confidence", "low"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := validate(tc.pages, tc.id, tc.date, o)
			if v.state != tc.state || v.reason != tc.reason || v.band != tc.band {
				t.Errorf("got %s/%s band %s, want %s/%s band %s", v.state, v.reason, v.band, tc.state, tc.reason, tc.band)
			}
		})
	}
	// --no-coverage: the measurement is not taken, nor acted on.
	off := o
	off.NoCoverage = true
	if v := validate([]ocr.PageResult{unread(textPage("Participant ID: P-123456", 95, 96, 95), 0.5)}, "P-123456", "", off); v.state != "done" {
		t.Errorf("with coverage off: %s/%s, want done", v.state, v.reason)
	}
}

func TestContainsDate(t *testing.T) {
	tests := []struct {
		name string
		date string
		text string
		want bool
	}{
		// Every accepted form of 2024-03-07.
		{"ISO", "2024-03-07", "Referral date: 2024-03-07", true},
		{"ISO with an en dash", "2024-03-07", "2024–03–07", true},
		{"ISO with a minus sign", "2024-03-07", "2024\u221203\u221207", true},
		{"ISO split by OCR whitespace", "2024-03-07", "2024- 03 -07", true},
		{"day first slashes padded", "2024-03-07", "07/03/2024", true},
		{"day first slashes unpadded", "2024-03-07", "7/3/2024", true},
		{"day first mixed padding", "2024-03-07", "7/03/2024", true},
		{"month first slashes padded", "2024-03-07", "03/07/2024", true},
		{"month first slashes unpadded", "2024-03-07", "3/7/2024", true},
		{"day first dots", "2024-03-07", "07.03.2024", true},
		{"month first dots", "2024-03-07", "3.7.2024", true},
		{"day first dashes", "2024-03-07", "07-03-2024", true},
		{"month first em dashes", "2024-03-07", "3—7—2024", true},
		{"day month name year", "2024-03-07", "7 March 2024", true},
		{"padded day month name year", "2024-03-07", "07 March 2024", true},
		{"day abbreviation year", "2024-03-07", "7 Mar 2024", true},
		{"abbreviation with a period", "2024-03-07", "7 Mar. 2024", true},
		{"ordinal day first", "2024-03-07", "7th March 2024", true},
		{"ordinal split by whitespace", "2024-03-07", "7 th March 2024", true},
		{"month name day comma year", "2024-03-07", "March 7, 2024", true},
		{"month name day year no comma", "2024-03-07", "March 7 2024", true},
		{"abbreviation day comma year", "2024-03-07", "Mar 7, 2024", true},
		{"month first ordinal", "2024-03-07", "March 7th, 2024", true},
		{"upper case", "2024-03-07", "7 MARCH 2024", true},
		{"lower case", "2024-03-07", "march 7, 2024", true},
		{"no whitespace at all", "2024-03-07", "7March2024", true},
		{"line break inside", "2024-03-07", "7 March\n2024", true},
		{"May is its own abbreviation", "2023-05-01", "1st May 2023", true},
		{"two digit day", "2023-12-25", "25/12/2023", true},
		{"two digit day month first", "2023-12-25", "December 25, 2023", true},

		// Boundaries: the date may not continue a number or a word.
		{"ISO inside a longer number", "2024-03-07", "12024-03-079", false},
		{"ISO followed by a digit", "2024-03-07", "2024-03-071", false},
		{"ISO preceded by a digit", "2024-03-07", "12024-03-07", false},
		{"ISO between punctuation", "2024-03-07", "(2024-03-07).", true},
		{"ISO followed by a time", "2024-03-07", "2024-03-07 10:30", true},
		{"ISO glued to a label", "2024-03-07", "Date:2024-03-07", true},
		{"day inside a larger day", "2024-03-07", "17/3/2024", false},
		{"year continues", "2024-03-07", "7/3/20245", false},
		{"day inside a larger day with name", "2024-03-07", "17 March 2024", false},
		{"month inside a larger month", "2024-01-07", "11/7/2024", false},
		{"month not a prefix of a larger month", "2024-01-07", "7/11/2024", false},
		{"abbreviation inside a word", "2024-03-07", "Samar 7, 2024", false},
		{"whitespace is a boundary", "2024-03-07", "Ref 1 7/3/2024", true},

		// Wrong dates and near misses.
		{"wrong day", "2024-03-07", "2024-03-08", false},
		{"wrong month", "2024-03-07", "2024-04-07", false},
		{"wrong year", "2024-03-07", "07/03/2023", false},
		{"day and month both wrong", "2024-03-07", "8 April 2024", false},
		{"O for 0", "2024-03-07", "2024-O3-07", false},
		{"l for 1", "2024-01-07", "2024-0l-07", false},
		{"two digit year", "2024-03-07", "07/03/24", false},
		{"mixed separators", "2024-03-07", "07/03.2024", false},
		{"year first with slashes", "2024-03-07", "2024/03/07", false},
		{"misspelt month", "2024-03-07", "7 Marhc 2024", false},
		{"other month name", "2024-03-07", "7 May 2024", false},
		{"month name without year", "2024-03-07", "7 March", false},
		{"unpadded ISO", "2024-03-07", "2024-3-7", false},

		// Empty and invalid input.
		{"empty text", "2024-03-07", "", false},
		{"empty date", "", "2024-03-07", false},
		{"invalid date", "2024-02-30", "30/02/2024", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := containsDate([]ocr.PageResult{{Text: tc.text}}, tc.date); got != tc.want {
				t.Errorf("containsDate(%q in %q) = %v, want %v", tc.date, tc.text, got, tc.want)
			}
		})
	}
	if containsDate(nil, "2024-03-07") {
		t.Error("containsDate with no pages = true, want false")
	}
	if !containsDate([]ocr.PageResult{{Text: "cover"}, {Text: "seen 07.03.2024"}}, "2024-03-07") {
		t.Error("containsDate missed the date on the second page")
	}
}

func TestSafeName(t *testing.T) {
	tests := []struct{ id, want string }{
		{"R-0001", "R-0001"},
		{"a.b_c", "a.b_c"},
	}
	for _, tc := range tests {
		if got := layout.SafeName(tc.id); got != tc.want {
			t.Errorf("safeName(%q) = %q, want %q", tc.id, got, tc.want)
		}
	}
	hostile := []string{"../etc/passwd", ".hidden", "a/b", "a b", "é", "", strings.Repeat("x", 200)}
	seen := map[string]string{}
	for _, id := range hostile {
		got := layout.SafeName(id)
		if strings.ContainsAny(got, "/ ") || strings.HasPrefix(got, ".") || got == "" || len(got) > 80 {
			t.Errorf("safeName(%q) = %q is not a safe file name", id, got)
		}
		if other, ok := seen[got]; ok {
			t.Errorf("safeName(%q) and safeName(%q) collide: %q", id, other, got)
		}
		seen[got] = id
	}
}

// TestValidationPolicy pins the validation rule's name in the policy hash
// for every combination of switches, so that PolicyVersion changes only
// when the rule does (revision 5: date_not_found; 6: handwriting).
func TestValidationPolicy(t *testing.T) {
	for _, tt := range []struct {
		noIDCheck, noCoverage bool
		want                  string
	}{
		{false, false, "empty_text,low_confidence,handwriting,incomplete_text,id_not_found,date_not_found/6"},
		{true, false, "empty_text,low_confidence,handwriting,incomplete_text/6"},
		{false, true, "empty_text,low_confidence,id_not_found,date_not_found/5"},
		{true, true, "empty_text,low_confidence/2"},
	} {
		var o layout.Settings
		o.NoIDCheck, o.NoCoverage = tt.noIDCheck, tt.noCoverage
		if got := o.Validation(); got != tt.want {
			t.Errorf("no-id-check %v, no-coverage %v: %q, want %q", tt.noIDCheck, tt.noCoverage, got, tt.want)
		}
	}
}

// TestHandwritingDetail: a document in review handwriting names the pages
// of its unread notes, each once, and a note read credibly is not named.
func TestHandwritingDetail(t *testing.T) {
	o := Options{}.withDefaults()
	note := func(read ...bool) ocr.PageResult {
		p := textPage("Participant ID: P-123456", 95, 95, 95)
		for _, r := range read {
			p.HandwritingRegions = append(p.HandwritingRegions, ocr.HandwritingRegion{Read: r})
		}
		return p
	}
	tests := []struct {
		name   string
		pages  []ocr.PageResult
		detail string
		pages1 []int
	}{
		{"one page", []ocr.PageResult{note(), note(), note(false)}, "a handwritten note on page 3 was not transcribed: read it in the scan", []int{3}},
		{"two pages, two regions on one", []ocr.PageResult{note(), note(false, false), note(true), note(true, false)},
			"handwritten notes on pages 2 and 4 were not transcribed: read them in the scan", []int{2, 4}},
		{"three pages", []ocr.PageResult{note(false), note(false), note(false)},
			"handwritten notes on pages 1, 2 and 3 were not transcribed: read them in the scan", []int{1, 2, 3}},
		{"read credibly", []ocr.PageResult{note(true)}, "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := validate(tc.pages, "P-123456", "", o)
			if v.detail != tc.detail || !slices.Equal(v.pages, tc.pages1) {
				t.Errorf("%s/%s: detail %q pages %v, want %q %v", v.state, v.reason, v.detail, v.pages, tc.detail, tc.pages1)
			}
			if want := outcome.Handwriting; tc.detail != "" && (v.reason != want || v.band == outcome.BandHigh) {
				t.Errorf("%s/%s band %s, want review %s, not high", v.state, v.reason, v.band, want)
			}
		})
	}
}

// TestValidateEdges: a word counts as credible at exactly the credible
// confidence and with exactly three letters or digits; a date ends where
// a letter meets its digits; a document with no characters has a
// confidence of 0, never NaN; and a coverage threshold
// set under the high band's allowance still takes incomplete text out of
// the high band.
func TestValidateEdges(t *testing.T) {
	o := Options{}.withDefaults()
	words := func(text string) ocr.PageResult { return pageWords("x", text, 0, text, 0, text, 0) }
	at := func(p ocr.PageResult, conf float64) ocr.PageResult {
		for i := range p.Words {
			p.Words[i].Conf = conf
		}
		return p
	}
	for _, tc := range []struct {
		name string
		page ocr.PageResult
	}{
		{"words at exactly the credible confidence", at(words("abcd"), credibleWordConf)},
		{"words of exactly three letters", at(words("abc"), 95)},
	} {
		if v := validate([]ocr.PageResult{tc.page}, "", "", o); v.reason == outcome.EmptyText {
			t.Errorf("%s: %s/%s, want them credible", tc.name, v.state, v.reason)
		}
	}
	// A digit next to a letter ends a date: only a run of digits, or of
	// letters, continues it.
	for text, want := range map[string]bool{"seen 7/3/2024a": true, "seen 7/3/20245": false, "seen x7/3/2024": true} {
		if got := containsDate([]ocr.PageResult{{Text: text}}, "2024-03-07"); got != want {
			t.Errorf("2024-03-07 in %q: %v, want %v", text, got, want)
		}
	}
	if v := validate([]ocr.PageResult{textPage("")}, "", "", o); v.meanConf != 0 {
		t.Errorf("no characters: mean confidence %v, want 0", v.meanConf)
	}
	strict := o
	strict.CoverageThreshold = highBandUnread / 2
	page := unread(textPage("Participant ID: P-123456", 95, 96, 95), highBandUnread*3/4)
	if v := validate([]ocr.PageResult{page}, "P-123456", "", strict); v.reason != outcome.IncompleteText || v.band != outcome.BandMedium {
		t.Errorf("unread print over a strict threshold: %s/%s band %s, want review/%s band %s",
			v.state, v.reason, v.band, outcome.IncompleteText, outcome.BandMedium)
	}
}
