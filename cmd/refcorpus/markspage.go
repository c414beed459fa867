package main

import (
	"fmt"
	"image"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"golang.org/x/image/font"
	"golang.org/x/image/font/opentype"
)

// markTruth is a mark as the truth records it under a page's "marks":
// its kind (signature, stamp or mark), its family and where its ink is,
// in the scan's pixels before the page's skew.
type markTruth struct {
	Kind   string `json:"kind"`
	Family string `json:"family"`
	Held   bool   `json:"held_out"`
	Ink    string `json:"ink"`
	Box    [4]int `json:"box"`
}

// markPlanes are a --marks page's pen, stamp and margin-mark ink, each
// 255 for no ink.
type markPlanes struct {
	pen, stamp, margin *image.Gray
	penRGB, stampRGB   [3]uint8
	marginRGB          [3]uint8
}

// renderMarks draws the --marks or --caps-notes letter s describes: one
// page, signed off, stamped and marked as planned.
func renderMarks(seed uint64, s spec, fonts fontSet) (rendered, error) {
	m := *s.Marks
	r := rng(seed, s.Stream)
	f := newForm(r, s.ParticipantID, s.ReferralDate, s.Consent, 1)
	ds := newDocStyle(r, []int{m.DPI})
	fc, err := newFaces(fonts, ds)
	if err != nil {
		return rendered{}, err
	}
	defer fc.Close()
	t := newTruth(s, ds)
	ink, pl, err := layoutPage(f.Pages[0], ds, fc)
	if err != nil {
		return rendered{}, fmt.Errorf("laying out the page: %w", err)
	}
	mp := markPlanes{pen: blankLike(ink), stamp: blankLike(ink), margin: blankLike(ink), penRGB: inkRGB(r, m.Ink)}
	tp := truthPage{}
	if err := markUp(r, m, ink, &mp, pl, ds, fc, fonts, f, &tp); err != nil {
		return rendered{}, err
	}
	skew := math.Round((r.Float64()*2-1)*10) / 10 // up to a degree
	img := marksScan(r, ink, mp, m, skew)
	pi, em, err := encodeCover(img, 75+r.IntN(16))
	if err != nil {
		return rendered{}, fmt.Errorf("storing the page: %w", err)
	}
	tp.SkewDegrees = skew
	tp.Scan = &scanMeta{Kind: m.Kind, DPI: m.DPI, Colour: em.Colour, Encoding: em.Encoding, JPEGQuality: em.JPEGQuality, Signature: true}
	t.Pages = []truthPage{tp}
	return rendered{Pages: []pageSpec{{W: pt(pi.W, m.DPI), H: pt(pi.H, m.DPI), Image: &pi}}, Truth: t}, nil
}

// markUp draws on the page what m plans (the note in capitals, the
// sign-off, the stamp, the margin mark) and records it in tp.
func markUp(r *rand.Rand, m marksDoc, ink *image.Gray, mp *markPlanes, pl pageLayout, ds docStyle, fc faces, fonts fontSet, f form, tp *truthPage) error {
	dpi := ds.DPI
	i := strings.LastIndex(pl.Text, "\n")
	body, pageNo := pl.Text[:i], pl.Text[i+1:]
	left, right := int(margin*float64(dpi)), ink.Bounds().Dx()-int(margin*float64(dpi))
	gap := lineHeight(fc.body) / 2
	band := [2]int{pl.End + gap, pl.Foot - gap}
	var after []string
	if m.Kind == kindCapsNote {
		h := capsHands[m.Hand]
		sc, err := newScribe(r, h, dpi)
		if err != nil {
			return err
		}
		defer sc.Close()
		lines := slices.Clone(handNotes[m.Note])
		for k, l := range lines {
			lines[k] = strings.ToUpper(l)
		}
		x := left + r.IntN(dpi/2)
		room := max(dpi/2, band[1]-band[0]-dpi*3/2)
		if ok, err := sc.fit(lines, right-x, room); err != nil || !ok {
			return fmt.Errorf("no room for the note: %v", err)
		}
		box, err := sc.write(mp.pen, x, band[0], lines)
		if err != nil {
			return err
		}
		tp.HandwritingText = strings.Join(lines, "\n")
		tp.Handwriting = &handTruth{Hand: h.Name, Package: h.Package, Ink: m.Ink, InkRGB: mp.penRGB, Placement: placeFree,
			Pt: math.Round(sc.pt*10) / 10, Lines: len(lines), Box: [4]int{box.Min.X, box.Min.Y, box.Max.X, box.Max.Y}}
		after = append(after, lines...)
		band[0] = box.Max.Y + gap
	}
	printed, err := signOff(r, m, ink, mp.pen, fc, dpi, left, right, band, f.Clinician, tp)
	if err != nil {
		return err
	}
	after = append(after, printed...)
	if m.Stamp != "" {
		if err := stampPage(r, m.Stamp, mp, ink, pl, fc, fonts, dpi, left, right, f, tp); err != nil {
			return err
		}
	}
	if m.Margin != "" {
		if err := markMarginOf(r, m.Margin, mp, pl, fc, dpi, left, right, f, tp); err != nil {
			return err
		}
	}
	tp.Text = strings.Join(append(append([]string{body}, after...), pageNo), "\n")
	return nil
}

// signOff signs the letter as m.SignOff says in the free band and
// returns the printed lines it added, in reading order.
func signOff(r *rand.Rand, m marksDoc, ink, pen *image.Gray, fc faces, dpi, left, right int, band [2]int, name string, tp *truthPage) ([]string, error) {
	lh := lineHeight(fc.body)
	asc := fc.body.Metrics().Ascent.Ceil()
	room := min(dpi, band[1]-band[0]-2*lh-dpi/10) // the signature's height
	if room < dpi*3/10 {
		room = dpi * 3 / 10 // a tight page: the signature reaches into the print
	}
	x := left + r.IntN(dpi/3)
	y := band[0]
	p := sigPen{r: r, plane: pen, dpi: dpi, x: x, maxW: min(4*dpi, right-x), name: name}
	var printed []string
	nameW := font.MeasureString(fc.body, name).Ceil()
	switch m.SignOff {
	case "valediction":
		v := pick(r, []string{"Yours sincerely,", "Kind regards,", "Yours faithfully,", "With best wishes,"})
		drawLines(ink, fc.body, x, y, []string{v})
		p.bottom = y + lh + room
		drawLines(ink, fc.body, x, p.bottom+lh/3, []string{name})
		printed = []string{v, name}
	case "over_name":
		top := y + room*4/5
		drawLines(ink, fc.body, x, top, []string{name})
		p.bottom = top + asc + dpi/20
		printed = []string{name}
	case "signed_label":
		top := y + room*3/5
		drawLines(ink, fc.body, x, top, []string{"Signed:"})
		p.x = x + font.MeasureString(fc.body, "Signed: ").Ceil() + dpi/10
		p.maxW = min(4*dpi, right-p.x)
		p.bottom = top + asc + dpi/10
		printed = []string{"Signed:"}
	case "rule_name":
		rule := y + room
		w := min(right-x, dpi*(5+r.IntN(4))/2)
		for yy := rule; yy < rule+max(1, dpi/150); yy++ {
			for xx := x; xx < x+w; xx++ {
				ink.Pix[yy*ink.Stride+xx] = 0
			}
		}
		drawLines(ink, fc.body, x, rule+dpi/20, []string{name})
		p.bottom = rule + dpi/30
		printed = []string{name}
	case "beside_name":
		top := y + room*3/5
		drawLines(ink, fc.body, x, top, []string{name})
		p.x = x + nameW + dpi/5
		p.maxW = min(4*dpi, right-p.x)
		p.bottom = top + asc + dpi/10
		printed = []string{name}
	default: // bare
		p.bottom = y + room
	}
	box, err := drawMarkSignature(p, m.Signature)
	if err != nil {
		return nil, fmt.Errorf("signing: %w", err)
	}
	tp.Signature = &sigTruth{Label: m.SignOff, Hand: m.Signature, Ink: m.Ink, Box: rectBox(box), Printed: strings.Join(printed, " ")}
	tp.Marks = append(tp.Marks, markTruth{Kind: markSignature, Family: m.Signature, Held: familyHeld(m.Signature), Ink: m.Ink, Box: rectBox(box)})
	return printed, nil
}

func rectBox(b image.Rectangle) [4]int { return [4]int{b.Min.X, b.Min.Y, b.Max.X, b.Max.Y} }

func familyHeld(name string) bool {
	i := slices.IndexFunc(markFamilies, func(f markFamily) bool { return f.Name == name })
	return i >= 0 && markFamilies[i].Held
}

// protected are the lines a stamp must not hide: the participant ID's
// and the referral date's, which the letter is checked against.
func protected(pl pageLayout, f form, em int) []image.Rectangle {
	var out []image.Rectangle
	for _, run := range pl.Runs {
		if strings.Contains(run.Text, f.ParticipantID) || strings.Contains(run.Text, f.ReferralDate) ||
			strings.HasPrefix(run.Text, "Participant ID") || strings.HasPrefix(run.Text, "Referral date") {
			out = append(out, image.Rect(0, run.Baseline-em*3/2, 1<<20, run.Baseline+em/2))
		}
	}
	return out
}

// stampPage stamps the page with family fam somewhere it leaves the ID
// and date lines clear.
func stampPage(r *rand.Rand, fam string, mp *markPlanes, ink *image.Gray, pl pageLayout, fc faces, fonts fontSet, dpi, left, right int, f form, tp *truthPage) error {
	face, err := opentype.NewFace(fonts.bold, &opentype.FaceOptions{Size: 11 + 9*r.Float64(), DPI: float64(dpi), Hinting: font.HintingNone})
	if err != nil {
		return err
	}
	defer face.Close()
	canvas := stampCanvas(fam, face, stampLines(r, fam, f.ReferralDate, f.Clinic), dpi)
	angle := (r.Float64()*2 - 1) * 25
	keep := protected(pl, f, fc.body.Metrics().Height.Ceil())
	inkName := []string{"red", "blue", "violet", "black"}
	k := r.IntN(len(stampInks))
	mp.stampRGB = stampInks[k]
	misses := 0.03 + 0.2*r.Float64()
	for try := range 20 {
		cx := left + (right-left)/3 + r.IntN(max(1, (right-left)*2/3))
		cy := dpi/2 + r.IntN(max(1, pl.Foot-dpi))
		tmp := blankLike(ink)
		box := putStamp(r, tmp, canvas, angle, cx, cy, misses)
		clear := box.Dx() > 0
		for _, p := range keep {
			clear = clear && !box.Overlaps(p)
		}
		if !clear && try < 19 {
			continue
		}
		for i, v := range tmp.Pix {
			mp.stamp.Pix[i] = min(mp.stamp.Pix[i], v)
		}
		tp.Marks = append(tp.Marks, markTruth{Kind: markStamp, Family: fam, Held: familyHeld(fam), Ink: inkName[k], Box: rectBox(box)})
		return nil
	}
	return nil
}

// markMarginOf draws a margin mark of family fam beside, round, under
// or through a run of the body's print.
func markMarginOf(r *rand.Rand, fam string, mp *markPlanes, pl pageLayout, fc faces, dpi, left, right int, f form, tp *truthPage) error {
	keep := protected(pl, f, 0)
	var runs []textRun
	for _, run := range pl.Runs {
		if run.Baseline < pl.End && len(strings.Fields(run.Text)) >= 3 && !slices.ContainsFunc(keep, func(p image.Rectangle) bool { return run.Baseline >= p.Min.Y && run.Baseline <= p.Max.Y }) {
			runs = append(runs, run)
		}
	}
	if len(runs) == 0 {
		return nil
	}
	run := runs[r.IntN(len(runs))]
	face := fc.body
	for fa, p := range fc.pt {
		if p == run.Pt {
			face = fa
		}
	}
	words := strings.Fields(run.Text)
	k := r.IntN(len(words) - 1)
	n := 1 + r.IntN(2)
	prefix := strings.Join(words[:k], " ")
	if k > 0 {
		prefix += " "
	}
	x0 := run.X + font.MeasureString(face, prefix).Ceil()
	x1 := x0 + font.MeasureString(face, strings.Join(words[k:min(len(words), k+n)], " ")).Ceil()
	em := face.Metrics().Ascent.Ceil()
	inks := []string{"pencil", "blue", "red"}
	c := r.IntN(len(inks))
	mp.marginRGB = [][3]uint8{{95, 95, 100}, {40, 60, 160}, {185, 40, 50}}[c]
	box, err := drawMargin(marginPen{r: r, plane: mp.margin, dpi: dpi, left: left, right: right}, fam, x0, x1, run.Baseline, em)
	if err != nil {
		return err
	}
	tp.Marks = append(tp.Marks, markTruth{Kind: markMargin, Family: fam, Held: familyHeld(fam), Ink: inks[c], Box: rectBox(box)})
	return nil
}

// marksScan turns the page's print and marks into its stored image:
// turned by skew degrees, paper and print tones, each mark in its ink,
// light noise and specks. A page whose marks are all black is grey.
func marksScan(r *rand.Rand, ink *image.Gray, mp markPlanes, m marksDoc, skew float64) image.Image {
	turn := func(src *image.Gray) *image.Gray {
		if skew == 0 {
			return src
		}
		return rotated(src, skew, 255)
	}
	ink, mp.pen, mp.stamp, mp.margin = turn(ink), turn(mp.pen), turn(mp.stamp), turn(mp.margin)
	paper, print := uint8(238+r.IntN(11)), uint8(12+r.IntN(30))
	look := coverLook{PaperRGB: [3]uint8{paper, paper, uint8(int(paper) - 4)}, InkRGB: [3]uint8{print, print, print}, NoiseShare: (0.002 + r.Float64()*0.004) / 5, Specks: 10 + r.IntN(30)}
	img := colourPage(r, ink, nil, coverDoc{DPI: m.DPI}, look)
	for _, pl := range []struct {
		plane *image.Gray
		rgb   [3]uint8
	}{{mp.stamp, mp.stampRGB}, {mp.margin, mp.marginRGB}, {mp.pen, mp.penRGB}} {
		for i, v := range pl.plane.Pix {
			if v == 255 {
				continue
			}
			cov := 255 - int(v)
			for k := range 3 {
				o := 4*i + k
				if c := int(img.Pix[o]); int(pl.rgb[k]) < c {
					img.Pix[o] = uint8(c - (c-int(pl.rgb[k]))*cov/255)
				}
			}
		}
	}
	if m.Ink == "black" && (m.Stamp == "" || mp.stampRGB == stampInks[3]) && m.Margin == "" {
		g := image.NewGray(img.Bounds())
		for i := range g.Pix {
			p := img.Pix[4*i : 4*i+3]
			g.Pix[i] = uint8((299*int(p[0]) + 587*int(p[1]) + 114*int(p[2])) / 1000)
		}
		return g
	}
	return img
}
