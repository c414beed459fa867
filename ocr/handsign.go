package ocr

import (
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// Where a signature sits: the print of a sign-off round it (see kindOf).

// signOffWord matches the printed words of a sign-off: a valediction's
// and a label's, the last word of "Yours sincerely".
var signOffWord = regexp.MustCompile(`(?i)^(sincerely|faithfully|truly|regards|wishes|thanks|signed|signature|sign|signatory|cordially)[,.:;]?$`)

// nameWord matches a title or role that starts or ends a printed name.
var nameWord = regexp.MustCompile(`(?i)^(dr|dr\.|prof|prof\.|professor|mr|mrs|ms|miss|mx|sister|nurse|consultant|gp|registrar|physician|surgeon|practitioner|doctor)[,.:]?$`)

// printLines is the page's lines of credible print, found once.
func (look *handLook) printLines(words []Word) []printLine {
	if look.printed == nil {
		look.printed = printLines(words, look.wdpi*float64(look.f))
	}
	return look.printed
}

// lastBelow reports whether box b is where a letter is signed when
// nothing printed says so: below every line of the body's print (lines
// of five words or more), above the footer (the lowest print on the
// page, when it is in the bottom sixth), and the lowest writing between
// them (others: the page's other regions).
func lastBelow(b [4]int, others [][4]int, lines []printLine, pageH int) bool {
	foot := pageH
	for _, l := range lines {
		if 6*l.box[1] >= 5*pageH {
			foot = min(foot, l.box[1])
		}
	}
	for _, l := range lines {
		if len(l.words) >= 5 && l.box[3] > b[1] && l.box[1] < foot {
			return false // body print beside or below it
		}
	}
	if b[3] > foot {
		return false // in the bottom margin
	}
	for _, o := range others {
		if o[1] >= b[3] && o[3] <= foot {
			return false // more writing below it
		}
	}
	return true
}

// unreadNear reports whether there is unread writing of ink (its class,
// see inks) within one and a half times box b's height above or
// below it, apart from b and the boxes of others, every other region, a
// stamp's too (page pixels): the rest
// of a note whose other rows were partly read. A signature has print
// above and below it, read; a note is written in one ink, so print left
// unread under a blue signature is not the rest of a note, and neither
// is a word of a line of print the page read credibly but for it (see
// inPrint).
func (look *handLook) unreadNear(b [4]int, ink int, others [][4]int, lines []printLine, cover []byte) bool {
	f := look.f
	h := (b[3] - b[1]) * 3 / 2
	in := func(c [4]int, o [4]int) bool {
		return c[0] >= o[0]/f && c[2] <= o[2]/f+1 && c[1] >= o[1]/f && c[3] <= o[3]/f+1
	}
	for _, l := range look.lines {
		if l.ink != ink {
			continue
		}
		for k, c := range l.comps {
			if c[2] <= b[0]/f || c[0] >= b[2]/f || c[3] <= (b[1]-h)/f || c[1] >= (b[3]+h)/f || in(c, b) {
				continue
			}
			if slices.ContainsFunc(others, func(o [4]int) bool { return in(c, o) }) {
				continue
			}
			if h := float64(c[3] - c[1]); 2*h < look.printH {
				continue // a dot, a dash, a flourish's tail: no writing's row
			} else if c[2]-c[0] >= flatStroke*(c[3]-c[1]) {
				continue // a rule, an underline, a flourish: a line, no word
			} else if h <= handHeight*look.printH && float64(c[2]-c[0]) <= 2*printCap*look.printH {
				continue // print's glyph: a printed name a signature left unread
			}
			if 2*look.coveredInk(c, cover) < l.inks[k] && !inPrint(c, f, lines) {
				return true
			}
		}
	}
	return false
}

// inPrint reports whether piece c of the reduced page (by f) lies in a
// line of print of lines read credibly but for a word or so: three
// words or more, three in four of them credible. The letters of a word
// there read under the cut (an ascender is taller than print's median
// glyph) are print, not the rest of a note: a hand's rows are taller
// than print's, and a row of a note read in part has few credible
// words.
func inPrint(c [4]int, f int, lines []printLine) bool {
	x, y := (c[0]+c[2])*f/2, (c[1]+c[3])*f/2
	for _, l := range lines {
		if x < l.box[0] || x >= l.box[2] || y < l.box[1] || y >= l.box[3] || len(l.words) < 3 {
			continue
		}
		credible := 0
		for _, w := range l.words {
			if w.Conf >= handConf {
				credible++
			}
		}
		if 4*credible >= 3*len(l.words) {
			return true
		}
	}
	return false
}

// printLine is a line of print: its words and their box.
type printLine struct {
	box   [4]int
	words []Word
}

// printLines groups the words read, at any confidence, into lines: words
// that overlap by half their height and stand less than an inch apart.
// Words more than printTall times the median credible word's height (a
// note's words read, a signature read as a word, a stamp's letters) are
// not the print a sign-off is set in.
func printLines(words []Word, dpi float64) []printLine {
	var hs []float64
	for _, w := range words {
		if w.Conf >= handConf && w.Box[3] > w.Box[1] {
			hs = append(hs, float64(w.Box[3]-w.Box[1]))
		}
	}
	limit := printTall * median(hs)
	var out []printLine
	for _, w := range words {
		b := w.Box
		if b[2] <= b[0] || AlnumCount(w.Text) == 0 || float64(b[3]-b[1]) > limit {
			continue
		}
		k := slices.IndexFunc(out, func(l printLine) bool {
			ov := min(l.box[3], b[3]) - max(l.box[1], b[1])
			return 2*ov >= min(l.box[3]-l.box[1], b[3]-b[1]) && b[0]-l.box[2] < int(dpi) && l.box[0]-b[2] < int(dpi)
		})
		if k < 0 {
			out = append(out, printLine{box: b, words: []Word{w}})
			continue
		}
		l := &out[k]
		l.box = union4(l.box, b)
		l.words = append(l.words, w)
	}
	return out
}

// signs reports whether line l is a sign-off's (a valediction, a
// "Signed:" label, read credibly), whether it is a printed name (one to
// four credible words, each a capitalised word or an initial, or a title
// or role among them) and whether it is short (one to four words read at
// any confidence: a name or a label a signature across it left unread).
func (l printLine) signs() (signOff, name, short bool) {
	short = len(l.words) <= 4
	name = short
	for _, w := range l.words {
		if w.Conf < handConf {
			name = false
			continue
		}
		if signOffWord.MatchString(w.Text) {
			signOff = true
		}
		if !nameLike(w.Text) {
			name = false
		}
	}
	return signOff, name, short
}

// nameLike reports whether a word may stand in a printed name: a title
// or role, or a capitalised word or initial with no digit.
func nameLike(text string) bool {
	if nameWord.MatchString(text) {
		return true
	}
	r := []rune(text)
	return unicode.IsUpper(r[0]) && !strings.ContainsAny(text, "0123456789")
}

// underWriting reports whether line l is print a region b of writing
// stands over: in b's lower half, b twice its height or more, and in
// lower case in part (a name is; a hand's capitals read are not).
func (l printLine) underWriting(b [4]int) bool {
	lb := l.box
	if 2*(lb[3]-lb[1]) > b[3]-b[1] || lb[1]+lb[3] < b[1]+b[3] {
		return false
	}
	return slices.ContainsFunc(l.words, func(w Word) bool {
		return w.Conf >= handConf && strings.ContainsFunc(w.Text, unicode.IsLower)
	})
}

// partName reports whether line l reads as a printed name read in part:
// a credible capitalised word of three letters or more in lower case
// after its capital (a surname; a hand's capitals are not), and no credible
// word that is not a name's (see signs); words under handConf are what a
// signature's strokes left of the rest.
func (l printLine) partName() bool {
	surname := false
	for _, w := range l.words {
		if w.Conf < handConf {
			continue
		}
		if !nameLike(w.Text) {
			return false
		}
		surname = surname || !nameWord.MatchString(w.Text) && AlnumCount(w.Text) >= 3 && strings.ContainsFunc(w.Text, unicode.IsLower)
	}
	return surname
}

// signedOff reports whether box b (page pixels, dpi dots an inch, on a
// page pageH tall) sits where a signature goes: after a short line of
// print on its line (a "Signed:" label, a name, a valediction); below a
// valediction with no print between them; or over or just above a
// printed name with no other writing (others) between them; or over a
// short line of print in its lower half that reads as a name in part
// (see partName). The
// letterhead, in the top quarter, is no signer's name. With again (lines
// holding the words a note's lines read alone), a short line counts only
// as a sign-off's, and a name only under the writing (see underWriting).
func signedOff(b [4]int, others [][4]int, lines []printLine, dpi float64, pageH int, again bool) bool {
	in := func(v float64) int { return int(v * dpi) }
	across := func(o [4]int) bool { return o[0] < b[2]+in(0.5) && o[2] > b[0]-in(signBelowInch) }
	between := func(top, bottom int) bool { // print or writing between top and bottom
		for _, l := range lines {
			if across(l.box) && l.box[1] >= top && l.box[3] <= bottom {
				return true
			}
		}
		for _, o := range others {
			if across(o) && o[1] >= top-in(0.05) && o[3] <= bottom+in(0.05) {
				return true
			}
		}
		return false
	}
	for _, l := range lines {
		signOff, name, short := l.signs()
		lb := l.box
		if 4*lb[1] < pageH || (!signOff && !short) {
			continue
		}
		if again {
			// Words read again read the note too: a row of capitals read
			// whole is no printed name, print a signature stands over is.
			short = signOff
			name = name && l.underWriting(b)
		}
		cy := (lb[1] + lb[3]) / 2
		if short && cy >= b[1] && cy <= b[3] && lb[0] < b[0] && b[2] > lb[2]+in(0.2) && b[0]-lb[2] <= in(signLabelInch) {
			return true // after a label or a name on its line, or over its end
		}
		if !across(lb) {
			continue
		}
		over := lb[0] < b[2] && lb[2] > b[0] && lb[1] < b[3] && lb[3] > b[1]
		if (signOff || name) && over {
			return true // round the label or the name, its flourish back under it
		}
		if short && over && l.underWriting(b) && l.partName() {
			return true // over a short line of print, the name its strokes left half read
		}
		if signOff && b[1] >= lb[1] && b[1]-lb[3] <= in(signBelowInch) && !between(lb[3], b[1]) {
			return true // under the valediction
		}
		if (name || short && l.partName()) && lb[3] > b[1] && lb[1]-b[3] <= in(signNameInch) && !between(b[3], lb[1]) {
			return true // over or above the printed name
		}
	}
	return false
}

// onPrint reports whether region r is on the print or beside it: over a
// credible word (a ring round it, a stroke through or under it), or in
// the margin to the left or right of every credible word.
func (look *handLook) onPrint(r handRegion, words []Word) bool {
	x0, x1 := math.MaxInt, 0
	for _, w := range words {
		if w.Conf < handConf || w.Box[2] <= w.Box[0] {
			continue
		}
		x0, x1 = min(x0, w.Box[0]), max(x1, w.Box[2])
		b := w.Box
		if b[0] < r.box[2] && b[2] > r.box[0] && b[1] < r.box[3] && b[3] > r.box[1] {
			return true
		}
	}
	return r.box[2] <= x0 || r.box[0] >= x1
}
