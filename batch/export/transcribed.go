package export

// A person's transcriptions in the exports. refbatch desk lets a person
// type the text of a region refbatch could not read; the artifact keeps
// it apart from the recognised text, and so do the exports:
//
//   - ALTO: each transcription is a TextBlock of its own, after the
//     page's recognised blocks, referring with TAGREFS to the OtherTag
//     "transcribed" (LABEL "transcribed by a person, not recognised") and
//     with PROCESSINGREFS to a Processing step of its own (when and by
//     whom); its Strings carry no WC, a confidence being the engine's.
//   - searchable PDF: its lines are in the invisible layer at its box,
//     like recognised lines, inside a marked-content sequence
//     /Transcribed <</Source (person)>> BDC … EMC. An unknown tag is
//     ignored by readers (ISO 32000-1 14.6), so pdftotext, MuPDF and
//     pdf.js extract it as they do the rest, and PDF/A-2b allows it in an
//     untagged file. /Artifact would say the text is no content (tagged
//     readers drop artifacts from what they read aloud or copy), and
//     /Span's ActualText replaces text rather than marks it.
//
// The box is split into as many bands as the transcription has lines,
// top to bottom; each band's words share its width by their lengths.

import (
	"strings"
	"time"
	"unicode/utf8"

	"github.com/refbatch/refbatch/ocr/result"
)

// Transcription is the text a person typed for a region of a page.
type Transcription struct {
	// Page (from 0) and Box (the page's canvas pixels, x0, y0, x1, y1, as
	// a word's box) are the region; Field is the manifest field it
	// corrects, if any.
	Page  int
	Box   [4]int
	Field string
	Text  string
	User  string
	Host  string
	At    time.Time
}

// TranscribedLabel is the ALTO tag's label, the words the text export
// marks transcriptions with too.
const TranscribedLabel = "transcribed by a person, not recognised"

// transcribedTag is the marked-content tag of a transcription's lines.
const transcribedTag = "Transcribed"

// transcriptionLines lays t's text out in its box as words with boxes,
// one slice per non-blank line; nil when the box is empty.
func transcriptionLines(t Transcription) [][]result.Word {
	b := t.Box
	if b[2] <= b[0] || b[3] <= b[1] {
		return nil
	}
	var lines [][]string
	for _, l := range strings.Split(t.Text, "\n") {
		if ws := strings.Fields(l); len(ws) > 0 {
			lines = append(lines, ws)
		}
	}
	var out [][]result.Word
	h := float64(b[3]-b[1]) / float64(len(lines))
	for k, ws := range lines {
		y0, y1 := b[1]+int(float64(k)*h), b[1]+int(float64(k+1)*h)
		if y1 <= y0 {
			y1 = y0 + 1
		}
		chars := len(ws) - 1 // the spaces
		for _, w := range ws {
			chars += utf8.RuneCountInString(w)
		}
		per := float64(b[2]-b[0]) / float64(chars)
		var line []result.Word
		at := 0
		for _, w := range ws {
			n := utf8.RuneCountInString(w)
			x0, x1 := b[0]+int(float64(at)*per), b[0]+int(float64(at+n)*per)
			line = append(line, result.Word{Text: w, Box: [4]int{x0, y0, max(x1, x0+1), y1}})
			at += n + 1
		}
		out = append(out, line)
	}
	return out
}

// placeTranscriptions places the lines of the transcriptions of page
// index on the page (frame f), marked with their number (from 1, in
// ts); nil for a page with no resolution, whose boxes mean nothing.
func placeTranscriptions(p result.PageResult, index int, f PageFrame, ts []Transcription) []placedLine {
	if p.DPI <= 0 {
		return nil
	}
	m := CanvasToUser(p, f)
	square := squarePage(CanvasToDisplayed(p, f))
	var out []placedLine
	for i, t := range ts {
		if t.Page != index {
			continue
		}
		for _, ws := range transcriptionLines(t) {
			idx := make([]int, len(ws))
			for k := range idx {
				idx[k] = k
			}
			g, ok := measureLine(ws, idx)
			if !ok {
				continue
			}
			if l, ok := placeLine(g, g.em, m, square); ok {
				l.kind, l.transcription, l.mark = lineTranscribed, i+1, markedContent(t)
				out = append(out, l)
			}
		}
	}
	return out
}

// markedContent is the property list a transcription's lines are marked
// with: its source and the field it corrects.
func markedContent(t Transcription) string {
	s := "/" + transcribedTag + " <</Source (person)"
	if t.Field != "" {
		s += " /Field " + pdfString(t.Field).PDFString()
	}
	return s + ">> BDC\n"
}
