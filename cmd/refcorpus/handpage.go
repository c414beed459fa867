package main

import (
	"fmt"
	"image"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
)

// renderHand draws the --handwriting, --signatures or --columns document
// s describes. Only the last page is written on or laid out in columns.
func renderHand(seed uint64, s spec, fonts fontSet) (rendered, error) {
	h := *s.Hand
	r := rng(seed, s.Stream)
	f := newForm(r, s.ParticipantID, s.ReferralDate, s.Consent, s.Pages)
	ds := newDocStyle(r, []int{h.DPI})
	fc, err := newFaces(fonts, ds)
	if err != nil {
		return rendered{}, err
	}
	defer fc.Close()
	t := newTruth(s, ds)
	pen := inkRGB(r, h.Ink)
	quality := 75 + r.IntN(16)
	var out rendered
	for i, blocks := range f.Pages {
		ink, pl, err := layoutPage(blocks, ds, fc)
		if err != nil {
			return rendered{}, fmt.Errorf("laying out page %d: %w", i+1, err)
		}
		var hp *image.Gray
		tp := truthPage{Text: pl.Text}
		if i == len(f.Pages)-1 {
			hp = blankLike(ink)
			if err := writeOn(r, h, ink, hp, pl, ds, fc, f.Clinician, pen, &tp); err != nil {
				return rendered{}, fmt.Errorf("page %d: %w", i+1, err)
			}
		}
		skew := math.Round((r.Float64()-0.5)*10) / 10 // up to half a degree
		img := handScan(r, ink, hp, h, pen, skew)
		pi, em, err := encodeCover(img, quality)
		if err != nil {
			return rendered{}, fmt.Errorf("storing page %d: %w", i+1, err)
		}
		tp.SkewDegrees = skew
		tp.Scan = &scanMeta{Kind: h.Kind, DPI: h.DPI, Colour: em.Colour, Encoding: em.Encoding, JPEGQuality: em.JPEGQuality, Signature: tp.Signature != nil}
		t.Pages = append(t.Pages, tp)
		out.Pages = append(out.Pages, pageSpec{W: pt(pi.W, h.DPI), H: pt(pi.H, h.DPI), Image: &pi})
	}
	out.Truth = t
	return out, nil
}

// writeOn adds to the last page what h plans: the note and the
// signature, or the column section. The page's text gets the note where
// it is read: a note in the top margin before everything, one in the free
// space after the body, one in the bottom margin after the page number.
func writeOn(r *rand.Rand, h handDoc, ink, hp *image.Gray, pl pageLayout, ds docStyle, fc faces, clinician string, pen [3]uint8, tp *truthPage) error {
	dpi := ds.DPI
	i := strings.LastIndex(pl.Text, "\n")
	body, pageNo := pl.Text[:i], pl.Text[i+1:]
	left, right := int(margin*float64(dpi)), ink.Bounds().Dx()-int(margin*float64(dpi))
	gap := lineHeight(fc.body) / 2
	if h.Kind == kindColumns {
		extra, blocks, err := drawColumns(r, ink, pl, fc, h.Layout, dpi, left, right)
		if err != nil {
			return err
		}
		tp.Columns, tp.ColumnBlocks = true, blocks
		tp.Text = body + "\n" + strings.Join(append(extra, pageNo), "\n")
		return nil
	}
	free := [2]int{pl.End + gap, pl.Foot - gap} // the free space's top and bottom
	var sig *sigTruth
	if h.Sig != "" {
		st, err := sign(r, ink, hp, fc, dpi, left, free[0], free[1], h.Sig, clinician)
		if err != nil && h.Kind == kindSignature {
			return err
		}
		if err == nil {
			st.Hand, st.Ink = hands[h.Hand].Name, h.Ink
			sig, free[1] = &st, st.Box[1]-gap
		}
	}
	var top, after, bottom []string
	if sig != nil && sig.Printed != "" {
		after = []string{sig.Printed}
	}
	if h.Kind == kindHandNote {
		sc, err := newScribe(r, hands[h.Hand], dpi)
		if err != nil {
			return err
		}
		defer sc.Close()
		lines := handNotes[h.Note]
		if hands[h.Hand].Caps {
			lines = slices.Clone(lines)
			for k, l := range lines {
				lines[k] = strings.ToUpper(l)
			}
		}
		band := free // the note's top and bottom
		switch h.Place {
		case placeTop:
			band = [2]int{dpi / 12, int(margin*float64(dpi)) - dpi/20}
		case placeBottom:
			band = [2]int{pl.Foot + fc.small.Metrics().Height.Ceil(), ink.Bounds().Dy() - dpi/12}
		}
		x := left + r.IntN(dpi/2)
		if ok, err := sc.fit(lines, right-x, band[1]-band[0]); err != nil {
			return err
		} else if !ok {
			return fmt.Errorf("no room for the note in the %s", h.Place)
		}
		box, err := sc.write(hp, x, band[0], lines)
		if err != nil {
			return err
		}
		tp.HandwritingText = strings.Join(lines, "\n")
		tp.Handwriting = &handTruth{Hand: hands[h.Hand].Name, Package: hands[h.Hand].Package, Ink: h.Ink, InkRGB: pen, Placement: h.Place,
			Pt: math.Round(sc.pt*10) / 10, Lines: len(lines), Box: [4]int{box.Min.X, box.Min.Y, box.Max.X, box.Max.Y}}
		switch h.Place {
		case placeTop:
			top = lines
		case placeBottom:
			bottom = lines
		default:
			after = append(append([]string{}, lines...), after...)
		}
	}
	tp.Signature = sig
	text := append(append(append(top, body), after...), pageNo)
	tp.Text = strings.Join(append(text, bottom...), "\n")
	return nil
}

// handScan turns a page's print (ink) and handwriting (hp, nil for none)
// into its stored image: turned by skew degrees, paper and print tones,
// the handwriting in the pen's colour (an RGB page for blue ink, grey
// otherwise), then light noise and specks.
func handScan(r *rand.Rand, ink, hp *image.Gray, h handDoc, pen [3]uint8, skew float64) image.Image {
	turn := func(src *image.Gray) *image.Gray {
		if src == nil || skew == 0 {
			return src
		}
		return rotated(src, skew, 255)
	}
	ink, hp = turn(ink), turn(hp)
	paper, print := uint8(238+r.IntN(11)), uint8(12+r.IntN(30))
	st := scanStyle{DPI: h.DPI, NoiseShare: (0.002 + r.Float64()*0.004) / 5, Specks: 10 + r.IntN(30)}
	if h.Ink != "blue" {
		var lut [256]uint8
		for v := range lut {
			lut[v] = uint8(int(print) + (int(paper)-int(print))*v/255)
		}
		for i, v := range ink.Pix {
			ink.Pix[i] = lut[v]
		}
		if hp != nil {
			overlay(ink, hp, pen[0])
		}
		addNoise(r, ink, st, paper, print)
		return ink
	}
	look := coverLook{PaperRGB: [3]uint8{paper, paper, uint8(int(paper) - 4)}, InkRGB: [3]uint8{print, print, print}, NoiseShare: st.NoiseShare, Specks: st.Specks}
	img := colourPage(r, ink, nil, coverDoc{DPI: h.DPI}, look)
	if hp != nil {
		for i, v := range hp.Pix {
			if v == 255 {
				continue
			}
			cov := 255 - int(v)
			for k := range 3 {
				o := 4*i + k
				if c := int(img.Pix[o]); int(pen[k]) < c {
					img.Pix[o] = uint8(c - (c-int(pen[k]))*cov/255)
				}
			}
		}
	}
	return img
}
