package export

import (
	"bufio"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/refbatch/refbatch/ocr/result"
)

// altoUnit is how many ALTO inch1200 units make a PDF point.
const altoUnit = 1200.0 / 72.0

// WriteALTO writes the pages of one document as an ALTO 4.4 file: a
// Description (measurement unit, the source's identity, one Processing
// element per engine and one for refbatch with its settings), then a Page
// per page, as large as the page displays, with a PrintSpace covering it
// and the page's words as TextBlock, TextLine and String elements (CONTENT,
// WC from 0 to 1, SP between words). frames[i] is page i's frame, read
// from the source PDF; positions are the words' boxes on the displayed
// page (see DisplayedBox), in inch1200. The transcriptions ts follow
// their page's words, each a TextBlock tagged as a person's (see
// transcribed.go).
func WriteALTO(w io.Writer, pages []result.PageResult, frames []PageFrame, meta Provenance, ts []Transcription) error {
	if len(frames) != len(pages) {
		return fmt.Errorf("alto: %d pages read, %d in the PDF", len(pages), len(frames))
	}
	bw := bufio.NewWriter(w)
	x := &altoWriter{w: bw}
	x.printf("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
	x.printf("<alto xmlns=\"http://www.loc.gov/standards/alto/ns-v4#\" xmlns:xlink=\"http://www.w3.org/1999/xlink\"" +
		" xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\"" +
		" xsi:schemaLocation=\"http://www.loc.gov/standards/alto/ns-v4# http://www.loc.gov/alto/v4/alto-4-4.xsd\" SCHEMAVERSION=\"4.4\">\n")
	x.description(meta, ts)
	x.transcribedTags(ts)
	x.printf("  <Layout>\n")
	for i, p := range pages {
		x.page(i+1, p, frames[i], ts)
	}
	x.printf("  </Layout>\n</alto>\n")
	if x.err != nil {
		return x.err
	}
	return bw.Flush()
}

type altoWriter struct {
	w   io.Writer
	err error
}

func (x *altoWriter) printf(format string, args ...any) {
	if x.err == nil {
		_, x.err = fmt.Fprintf(x.w, format, args...)
	}
}

func (x *altoWriter) description(meta Provenance, ts []Transcription) {
	x.printf("  <Description>\n    <MeasurementUnit>inch1200</MeasurementUnit>\n")
	x.printf("    <sourceImageInformation>\n")
	x.printf("      <fileName>%s</fileName>\n", esc(meta.SourceID+".pdf"))
	x.printf("      <documentIdentifier documentIdentifierLocation=\"sha256\">%s</documentIdentifier>\n", esc(meta.SourceSHA256))
	x.printf("    </sourceImageInformation>\n")
	when := ""
	if !meta.ReadAt.IsZero() {
		when = meta.ReadAt.UTC().Format(time.RFC3339)
	}
	settings, _ := json.Marshal(map[string]any{"lang": meta.Lang, "policy_version": meta.PolicyVersion, "policy": meta.Policy})
	engines := make([]string, 0, len(meta.Engines))
	for name := range meta.Engines {
		engines = append(engines, name)
	}
	slices.Sort(engines)
	for i, name := range engines {
		x.printf("    <Processing ID=\"proc%d\">\n", i+1)
		x.printf("      <processingCategory>%s</processingCategory>\n", category(name))
		if when != "" {
			x.printf("      <processingDateTime>%s</processingDateTime>\n", when)
		}
		x.printf("      <processingStepDescription>%s</processingStepDescription>\n", escText(stepDescription(name)))
		if name == "refbatch" {
			x.printf("      <processingStepSettings>%s</processingStepSettings>\n", escText(string(settings)))
		}
		x.printf("      <processingSoftware>\n        <softwareName>%s</softwareName>\n        <softwareVersion>%s</softwareVersion>\n      </processingSoftware>\n",
			esc(name), esc(meta.Engines[name]))
		x.printf("    </Processing>\n")
	}
	x.transcribedSteps(ts)
	x.printf("  </Description>\n")
}

func category(engine string) string {
	switch engine {
	case "tesseract":
		return "contentGeneration"
	case "refbatch":
		return "other"
	default:
		return "preOperation"
	}
}

func stepDescription(engine string) string {
	switch engine {
	case "tesseract":
		return "text recognition (LSTM, page segmentation mode 4), words with confidences and boxes"
	case "mupdf":
		return "page rendering at the recorded resolution, honouring /Rotate"
	case "leptonica":
		return "page preparation: inversion, despeckling, deskewing, orientation"
	case "refbatch":
		return "orchestration, validation and export; settings below"
	}
	return engine
}

// page writes one Page. Its size is the displayed page's; its words'
// boxes are mapped onto it, and so are page index n-1's transcriptions'.
func (x *altoWriter) page(n int, p result.PageResult, f PageFrame, ts []Transcription) {
	w, h := f.Width*altoUnit, f.Height*altoUnit
	x.printf("    <Page ID=\"p%d\" PHYSICAL_IMG_NR=\"%d\" WIDTH=\"%s\" HEIGHT=\"%s\"", n, n, altoNum(w), altoNum(h))
	if len(p.Words) > 0 {
		x.printf(" PC=\"%s\"", wc(p.MeanConf))
	}
	x.printf(">\n      <PrintSpace HPOS=\"0\" VPOS=\"0\" WIDTH=\"%s\" HEIGHT=\"%s\">\n", altoNum(w), altoNum(h))
	boxes := make([]*Box, len(p.Words))
	for i, word := range p.Words {
		if b := word.Box; b[2] > b[0] && b[3] > b[1] {
			d := DisplayedBox(p, f, b)
			boxes[i] = &Box{d.X0 * altoUnit, d.Y0 * altoUnit, d.X1 * altoUnit, d.Y1 * altoUnit}
		}
	}
	for bi, block := range Layout(p) {
		x.printf("        <TextBlock ID=\"p%d_b%d\"%s>\n", n, bi+1, position(union(boxes, slices.Concat(block...))))
		for li, line := range block {
			x.printf("          <TextLine ID=\"p%d_b%d_l%d\"%s>\n", n, bi+1, li+1, position(union(boxes, line)))
			for k, wi := range line {
				if k > 0 {
					x.printf("            <SP%s/>\n", space(boxes[line[k-1]], boxes[wi]))
				}
				x.printf("            <String ID=\"p%d_b%d_l%d_w%d\"%s CONTENT=\"%s\" WC=\"%s\"/>\n",
					n, bi+1, li+1, k+1, position(boxes[wi]), esc(p.Words[wi].Text), wc(p.Words[wi].Conf))
			}
			x.printf("          </TextLine>\n")
		}
		x.printf("        </TextBlock>\n")
	}
	x.transcribedBlocks(n, n-1, p, f, ts)
	x.printf("      </PrintSpace>\n    </Page>\n")
}

// Layout groups a page's words, by index, into blocks of lines, in reading
// order. Tesseract's blocks and lines are in the page text (blocks and
// paragraphs separated by a blank line, lines by a newline, words by a
// space); when the text does not match the words that way, lines are
// found from the boxes: a word starts a new line when it does not overlap
// the previous word vertically or lies to its left.
func Layout(p result.PageResult) [][][]int {
	if blocks, ok := layoutFromText(p); ok {
		return blocks
	}
	var lines [][]int
	for i, w := range p.Words {
		if len(lines) > 0 {
			last := lines[len(lines)-1]
			prev := p.Words[last[len(last)-1]].Box
			b := w.Box
			sameLine := b[1] < prev[3] && prev[1] < b[3] && b[0] >= prev[0]
			if sameLine || (b == [4]int{} && prev == [4]int{}) {
				lines[len(lines)-1] = append(last, i)
				continue
			}
		}
		lines = append(lines, []int{i})
	}
	if len(lines) == 0 {
		return nil
	}
	return [][][]int{lines}
}

func layoutFromText(p result.PageResult) ([][][]int, bool) {
	var blocks [][][]int
	k := 0
	for _, bt := range strings.Split(p.Text, "\n\n") {
		var block [][]int
		for _, lt := range strings.Split(bt, "\n") {
			var line []int
			for _, word := range strings.Split(lt, " ") {
				if word == "" {
					continue
				}
				if k >= len(p.Words) || p.Words[k].Text != word {
					return nil, false
				}
				line = append(line, k)
				k++
			}
			if len(line) > 0 {
				block = append(block, line)
			}
		}
		if len(block) > 0 {
			blocks = append(blocks, block)
		}
	}
	return blocks, k == len(p.Words)
}

// union is the box around the words idx that have one, nil if none has.
func union(boxes []*Box, idx []int) *Box {
	var u *Box
	for _, i := range idx {
		b := boxes[i]
		if b == nil {
			continue
		}
		if u == nil {
			c := *b
			u = &c
			continue
		}
		u.X0, u.Y0 = math.Min(u.X0, b.X0), math.Min(u.Y0, b.Y0)
		u.X1, u.Y1 = math.Max(u.X1, b.X1), math.Max(u.Y1, b.Y1)
	}
	return u
}

func position(b *Box) string {
	if b == nil {
		return ""
	}
	return fmt.Sprintf(" HPOS=\"%s\" VPOS=\"%s\" WIDTH=\"%s\" HEIGHT=\"%s\"", altoNum(b.X0), altoNum(b.Y0), altoNum(b.X1-b.X0), altoNum(b.Y1-b.Y0))
}

// space positions the SP between two words of a line when both have boxes
// and a gap lies between them.
func space(a, b *Box) string {
	if a == nil || b == nil || b.X0 <= a.X1 {
		return ""
	}
	return fmt.Sprintf(" HPOS=\"%s\" VPOS=\"%s\" WIDTH=\"%s\"", altoNum(a.X1), altoNum(math.Min(a.Y0, b.Y0)), altoNum(b.X0-a.X1))
}

// altoNum prints a coordinate to a hundredth of a unit (1/120,000 inch).
func altoNum(v float64) string {
	return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
}

// wc turns a confidence of 0–100 into ALTO's 0–1.
func wc(conf float64) string {
	return strconv.FormatFloat(math.Round(math.Max(0, math.Min(conf, 100)))/100, 'f', -1, 64)
}

// esc escapes s for an attribute: markup characters, quotes and white
// space controls as references, and characters XML cannot hold as U+FFFD.
func esc(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}

// escText escapes s for an element's content, where quotes may stand.
func escText(s string) string {
	return strings.NewReplacer("&#34;", `"`, "&#39;", "'").Replace(esc(s))
}
