package eval

import (
	"math"
	"runtime"
	"strings"
	"testing"
)

func TestDistance(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		want int
	}{
		{"both empty", "", "", 0},
		{"empty to word", "", "abc", 3},
		{"word to empty", "abc", "", 3},
		{"equal", "referral", "referral", 0},
		{"one insertion", "refrral", "referral", 1},
		{"one deletion", "referrral", "referral", 1},
		{"one substitution", "referra1", "referral", 1},
		{"insertion at the start", "eferral", "referral", 1},
		{"deletion at the end", "referrals", "referral", 1},
		{"transposition is two edits", "rfeerral", "referral", 2},
		{"kitten to sitting", "kitten", "sitting", 3},
		{"flaw to lawn", "flaw", "lawn", 2},
		{"nothing in common", "abc", "xyz", 3},
		{"repeated runs", "aaaa", "aa", 2},
		{"case matters", "P-089111", "p-089111", 1},
		{"accented letter substituted", "café", "cafe", 1},
		{"umlaut is one code point", "Müller", "Muller", 1},
		// A decomposed é (e + U+0301) is two code points: the e matches,
		// the combining accent is an insertion.
		{"combining mark inserted", "cafe\u0301", "cafe", 1},
		{"precomposed against decomposed", "caf\u00e9", "cafe\u0301", 2},
		{"emoji substituted", "ok 👍", "ok 👎", 1},
		{"emoji with skin tone is two code points", "👍🏽", "👍", 1},
		{"family emoji with joiners", "👨\u200d👩\u200d👧", "", 5},
		{"CJK", "参照", "参考", 1},
		{"one emoji against one letter", "😀", "a", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b := []rune(tc.a), []rune(tc.b)
			if got := Distance(a, b); got != tc.want {
				t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
			}
			if got := Distance(b, a); got != tc.want {
				t.Errorf("Distance(%q, %q) = %d, want %d (not symmetric)", tc.b, tc.a, got, tc.want)
			}
			if got := naive(a, b); got != tc.want {
				t.Errorf("the full-table reference gives %d, the case says %d", got, tc.want)
			}
		})
	}
}

func TestDistanceWords(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		want int
	}{
		{"equal", "the quick fox", "the quick fox", 0},
		{"word inserted", "the quick brown fox", "the quick fox", 1},
		{"word deleted", "the fox", "the quick fox", 1},
		{"word substituted", "the quick f0x", "the quick fox", 1},
		{"empty hypothesis", "", "the quick fox", 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Distance(strings.Fields(tc.a), strings.Fields(tc.b)); got != tc.want {
				t.Errorf("got %d, want %d", got, tc.want)
			}
		})
	}
}

// TestDistanceAgainstFullTable compares the one-row routine with the
// textbook full table on pseudo-random strings over a small alphabet, where
// edits overlap often.
func TestDistanceAgainstFullTable(t *testing.T) {
	alphabet := []rune("ab é👍")
	seed := uint32(1)
	next := func() uint32 { seed = seed*1664525 + 1013904223; return seed >> 8 }
	word := func() []rune {
		w := make([]rune, next()%12)
		for i := range w {
			w[i] = alphabet[next()%uint32(len(alphabet))]
		}
		return w
	}
	for i := 0; i < 2000; i++ {
		a, b := word(), word()
		if got, want := Distance(a, b), naive(a, b); got != want {
			t.Fatalf("Distance(%q, %q) = %d, the full table says %d", string(a), string(b), got, want)
		}
	}
}

// naive is the full (n+1)×(m+1) Wagner–Fischer table, as a reference.
func naive(a, b []rune) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+c)
		}
	}
	return d[len(a)][len(b)]
}

// TestDistanceMemory checks that the table is one row over the shorter
// input: a 28,000-character page against a 10-character one allocates 11
// ints, not 28,001.
func TestDistanceMemory(t *testing.T) {
	long := []rune(strings.Repeat("referral text ", 2000))
	short := []rune("##########")
	if allocs := testing.AllocsPerRun(3, func() { Distance(long, short) }); allocs > 1 {
		t.Errorf("%v allocations, want one row", allocs)
	}
	// TotalAlloc counts every goroutine's allocations, the runtime's and
	// the test framework's too: the least of a few tries is Distance's.
	var got int
	least := uint64(math.MaxUint64)
	for range 5 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		got = Distance(long, short)
		runtime.ReadMemStats(&after)
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	if least > 1024 {
		t.Errorf("%d bytes allocated, want a row as long as the shorter input", least)
	}
	if got != len(long) {
		t.Errorf("distance %d, want %d", got, len(long))
	}
}

func TestCER(t *testing.T) {
	tests := []struct {
		name       string
		ocr, truth string
		distance   int
		n          int
		rate       float64
	}{
		{"perfect", "Referral Form", "Referral Form", 0, 13, 0},
		{"whitespace and line breaks are layout", "  Referral\n\n Form \f", "Referral Form", 0, 13, 0},
		{"tabs and non-breaking spaces collapse", "Referral\t\u00a0Form", "Referral Form", 0, 13, 0},
		{"one wrong character", "Referral F0rm", "Referral Form", 1, 13, 1.0 / 13},
		{"missing word", "Referral", "Referral Form", 5, 13, 5.0 / 13},
		{"empty OCR of a page with text", "", "Form", 4, 4, 1},
		{"blank page read as blank", " \n ", "", 0, 0, 0},
		{"blank page read as noise", "~ .", "", 3, 0, 1},
		{"longer than the truth", "Form Form Form", "Form", 10, 4, 2.5},
		{"combining accent counts", "Cafe\u0301", "Café", 2, 4, 0.5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := CER(tc.ocr, tc.truth)
			if got.Distance != tc.distance || got.N != tc.n || math.Abs(got.Rate-tc.rate) > 1e-12 {
				t.Errorf("CER = %+v, want distance %d n %d rate %v", got, tc.distance, tc.n, tc.rate)
			}
		})
	}
}

func TestWER(t *testing.T) {
	tests := []struct {
		name       string
		ocr, truth string
		want       ErrorRate
	}{
		{"perfect across line breaks", "Participant ID:\nP-089111", "Participant ID: P-089111", ErrorRate{0, 3, 0}},
		{"one word wrong", "Participant lD: P-089111", "Participant ID: P-089111", ErrorRate{1, 3, 1.0 / 3}},
		{"split word is two edits", "Partici pant ID: P-089111", "Participant ID: P-089111", ErrorRate{2, 3, 2.0 / 3}},
		{"both empty", "", "", ErrorRate{0, 0, 0}},
		{"words on a blank page", "noise", "", ErrorRate{1, 0, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := WER(tc.ocr, tc.truth); got != tc.want {
				t.Errorf("WER = %+v, want %+v", got, tc.want)
			}
		})
	}
}
