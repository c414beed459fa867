package export

import (
	"strconv"
	"strings"
	"time"

	"github.com/refbatch/refbatch/ocr/result"
)

// transcribedTagID is the ID of the ALTO OtherTag a person's
// transcriptions refer to (see transcribed.go).
const transcribedTagID = "transcribed"

// transcribedSteps writes one Processing step per transcription, ID
// "transcr<n>" (from 1): who typed it, where and when.
func (x *altoWriter) transcribedSteps(ts []Transcription) {
	for i, t := range ts {
		x.printf("    <Processing ID=\"transcr%d\">\n", i+1)
		x.printf("      <processingCategory>contentGeneration</processingCategory>\n")
		if !t.At.IsZero() {
			x.printf("      <processingDateTime>%s</processingDateTime>\n", t.At.UTC().Format(time.RFC3339))
		}
		what := "text of a region typed by a person in refbatch desk, not recognised"
		if t.Field != "" {
			what += "; corrects the manifest field " + t.Field
		}
		x.printf("      <processingStepDescription>%s</processingStepDescription>\n", escText(what))
		x.printf("      <processingStepDescription>%s</processingStepDescription>\n", escText("by "+t.User+" on "+t.Host))
		x.printf("    </Processing>\n")
	}
}

// transcribedTags writes the Tags element when there are transcriptions.
func (x *altoWriter) transcribedTags(ts []Transcription) {
	if len(ts) == 0 {
		return
	}
	x.printf("  <Tags>\n    <OtherTag ID=\"%s\" TYPE=\"provenance\" LABEL=\"%s\" DESCRIPTION=\"%s\"/>\n  </Tags>\n",
		transcribedTagID, esc(TranscribedLabel),
		esc("a person typed this text for a region refbatch could not read; it carries no confidence"))
}

// transcribedBlocks writes page index's transcriptions (page n, from 1),
// each a TextBlock "p<n>_t<i>" (i its number in ts) tagged as such.
func (x *altoWriter) transcribedBlocks(n, index int, p result.PageResult, f PageFrame, ts []Transcription) {
	for i, t := range ts {
		if t.Page != index {
			continue
		}
		lines := transcriptionLines(t)
		if len(lines) == 0 {
			// No box, or no box to map it by: the text, unplaced.
			lines = [][]result.Word{}
			for _, l := range strings.Split(t.Text, "\n") {
				var ws []result.Word
				for _, w := range strings.Fields(l) {
					ws = append(ws, result.Word{Text: w})
				}
				if ws != nil {
					lines = append(lines, ws)
				}
			}
		}
		if len(lines) == 0 {
			continue
		}
		id := "p" + strconv.Itoa(n) + "_t" + strconv.Itoa(i+1)
		boxOf := func(b [4]int) *Box {
			if p.DPI <= 0 || b[2] <= b[0] || b[3] <= b[1] {
				return nil
			}
			d := DisplayedBox(p, f, b)
			return &Box{d.X0 * altoUnit, d.Y0 * altoUnit, d.X1 * altoUnit, d.Y1 * altoUnit}
		}
		x.printf("        <TextBlock ID=\"%s\" TAGREFS=\"%s\" PROCESSINGREFS=\"transcr%d\"%s>\n", id, transcribedTagID, i+1, position(boxOf(t.Box)))
		for li, line := range lines {
			boxes := make([]*Box, len(line))
			all := make([]int, len(line))
			for k, w := range line {
				boxes[k], all[k] = boxOf(w.Box), k
			}
			x.printf("          <TextLine ID=\"%s_l%d\" TAGREFS=\"%s\"%s>\n", id, li+1, transcribedTagID, position(union(boxes, all)))
			for k, w := range line {
				if k > 0 {
					x.printf("            <SP%s/>\n", space(boxes[k-1], boxes[k]))
				}
				x.printf("            <String ID=\"%s_l%d_w%d\" TAGREFS=\"%s\"%s CONTENT=\"%s\"/>\n",
					id, li+1, k+1, transcribedTagID, position(boxes[k]), esc(w.Text))
			}
			x.printf("          </TextLine>\n")
		}
		x.printf("        </TextBlock>\n")
	}
}
