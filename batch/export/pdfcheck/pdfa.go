package pdfcheck

// A checker of the PDF/A-2b clauses refbatch's --pdfa relies on. It is
// not a validator (veraPDF checks some hundred rules more, on the
// content streams, fonts' glyphs and colour use); it checks:
//
//   - the header: %PDF-1.n at byte 0, then a comment of four bytes above
//     127 (6.1.2); nothing but an end of line after the last %%EOF (6.1.3);
//   - the trailer: an ID of two strings, no Encrypt (6.1.3);
//   - the catalog's Metadata: a stream of Type Metadata, Subtype XML, no
//     filter (6.6.2.1), whose XMP says pdfaid:part 2 and conformance B
//     (6.6.4), and whose Title, Author, Subject, Keywords, Creator,
//     Producer, CreationDate and ModDate equal the information
//     dictionary's (6.6.2.3);
//   - an OutputIntent of subtype GTS_PDFA1 with an embedded ICC profile
//     whose /N matches the profile's colour space (6.2.3);
//   - every font's program embedded, the Type 0 fonts' descendants
//     included (6.2.11.4);
//   - no LZWDecode or Crypt filter, no stream with F, FFilter or
//     FDecodeParms (6.1.7), no image with Interpolate true, Alternates or
//     OPI (6.2.8), no PostScript XObject (6.2.9);
//   - no JavaScript, no forbidden action (Launch, Sound, Movie, ResetForm,
//     ImportData, JavaScript, Hide, SetOCGState, Rendition, Trans,
//     GoTo3DView), no additional actions on the catalog or a page
//     (6.5), no embedded files (6.8);
//   - annotations of allowed types, printed and not hidden (6.3.1,
//     6.3.2), their appearance dictionaries only N, a stream unless the
//     annotation is a button's widget (6.3.3);
//   - every stream the cross-reference sections lead to: the keyword
//     stream followed by CR LF or LF, its Length bytes then followed by an
//     end of line and endstream (6.1.7.1);
//   - DeviceCMYK (DeviceRGB) named as an image's colour space, in a
//     resource dictionary, as a Separation's or DeviceN's alternate or as
//     an Indexed space's base, under an output intent that is not CMYK
//     (RGB) (6.2.4.3, 6.2.4.4); and DeviceCMYK set by the operators of a
//     page's or form XObject's content stream (k, K, cs with /DeviceCMYK,
//     a CMYK inline image) under one that is not CMYK (rg and RG are not
//     looked for).

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
	"github.com/refbatch/refbatch/batch/export/pdfobj"
)

var (
	eofRe = regexp.MustCompile(`%%EOF(\r\n|\r|\n)?$`)
)

// header says whether b begins as PDF/A asks: %PDF-1.n at byte 0
// (n from 0 to 7), one end of line, then a comment of at least four bytes
// above 127. (Go's regexp reads UTF-8, not bytes.)
func header(b []byte) bool {
	if len(b) < 9 || !bytes.HasPrefix(b, []byte("%PDF-1.")) || b[7] < '0' || b[7] > '7' {
		return false
	}
	rest := b[8:]
	switch {
	case bytes.HasPrefix(rest, []byte("\r\n")):
		rest = rest[2:]
	case len(rest) > 0 && (rest[0] == '\r' || rest[0] == '\n'):
		rest = rest[1:]
	default:
		return false
	}
	if len(rest) < 5 || rest[0] != '%' {
		return false
	}
	for _, c := range rest[1:5] {
		if c < 128 {
			return false
		}
	}
	return true
}

// PDFA lists the clauses above that pdf breaks; none when it passes.
func PDFA(pdf []byte) []string {
	var p []string
	add := func(format string, args ...any) { p = append(p, fmt.Sprintf(format, args...)) }
	if !header(pdf) {
		add("6.1.2: the header is not %%PDF-1.n and a binary comment")
	}
	if !eofRe.Match(pdf) {
		add("6.1.3: data after the last %%%%EOF")
	}
	conf := model.NewDefaultConfiguration()
	conf.ValidationMode = model.ValidationRelaxed
	ctx, err := api.ReadContext(bytes.NewReader(pdf), conf)
	if err != nil {
		return append(p, "the PDF cannot be read: "+err.Error())
	}
	if len(ctx.ID) != 2 {
		add("6.1.3: the trailer has no ID")
	}
	if ctx.Encrypt != nil {
		add("6.1.3: the trailer has Encrypt")
	}
	root, err := ctx.Catalog()
	if err != nil {
		return append(p, "no catalog: "+err.Error())
	}
	p = append(p, checkXMP(ctx, root)...)
	oi, intent := checkOutputIntent(ctx, root)
	p = append(p, oi...)
	p = append(p, streamFramingProblems(ctx, pdf)...)
	p = append(p, contentProblems(ctx, intent)...)
	seen := map[string]bool{}
	for _, n := range slices.Sorted(maps.Keys(ctx.Table)) {
		e := ctx.Table[n]
		if e == nil || e.Free || e.Object == nil {
			continue
		}
		for _, why := range objectProblems(ctx, intent, pdfobj.TableObject(ctx, n, e), 0) {
			if !seen[why] {
				seen[why] = true
				add("object %d: %s", n, why)
			}
		}
	}
	return p
}

// checkXMP checks the catalog's XMP packet against the information
// dictionary.
func checkXMP(ctx *model.Context, root types.Dict) []string {
	ref, ok := root["Metadata"].(types.IndirectRef)
	if !ok {
		return []string{"6.6.2.1: the catalog has no Metadata stream"}
	}
	sd, _, err := ctx.DereferenceStreamDict(ref)
	if err != nil || sd == nil {
		return []string{"6.6.2.1: the catalog's Metadata is not a stream"}
	}
	var p []string
	if t, s := sd.Type(), sd.Subtype(); t == nil || *t != "Metadata" || s == nil || *s != "XML" {
		p = append(p, "6.6.2.1: the Metadata stream is not Type Metadata, Subtype XML")
	}
	if _, ok := sd.Find("Filter"); ok {
		p = append(p, "6.6.2.1: the Metadata stream is filtered")
	}
	if err := sd.Decode(); err != nil {
		return append(p, "6.6.2.1: the Metadata stream cannot be read")
	}
	x, err := parseXMP(sd.Content)
	if err != nil {
		return append(p, "6.6.2.1: the XMP packet does not parse: "+err.Error())
	}
	if x.Part != "2" || x.Conformance != "B" {
		p = append(p, fmt.Sprintf("6.6.4: pdfaid:part %q conformance %q, want 2 and B", x.Part, x.Conformance))
	}
	info := map[string]string{}
	if ctx.Info != nil {
		d, err := ctx.DereferenceDict(*ctx.Info)
		if err == nil {
			for k, v := range d {
				if s, err := ctx.DereferenceText(v); err == nil {
					info[k] = s
				}
			}
		}
	}
	pairs := []struct{ key, xmp string }{
		{"Title", x.Title}, {"Author", x.Author}, {"Subject", x.Subject}, {"Keywords", x.Keywords},
		{"Creator", x.CreatorTool}, {"Producer", x.Producer},
		{"CreationDate", x.CreateDate}, {"ModDate", x.ModifyDate},
	}
	for _, pr := range pairs {
		got := info[pr.key]
		if strings.HasSuffix(pr.key, "Date") {
			if !sameInstant(got, pr.xmp) {
				p = append(p, fmt.Sprintf("6.6.2.3: Info %s and the XMP's differ", pr.key))
			}
		} else if got != pr.xmp {
			p = append(p, fmt.Sprintf("6.6.2.3: Info %s and the XMP's differ", pr.key))
		}
	}
	return p
}

// xmpFields are the XMP properties checkXMP compares.
type xmpFields struct {
	Part, Conformance                             string
	Title, Author, Subject, Keywords, CreatorTool string
	Producer, CreateDate, ModifyDate              string
}

// parseXMP reads the properties of xmpFields from an XMP packet, written
// as elements (refbatch's form; attribute form is not read).
func parseXMP(b []byte) (xmpFields, error) {
	var x xmpFields
	dec := xml.NewDecoder(bytes.NewReader(b))
	var path []string
	for {
		tok, err := dec.Token()
		if err != nil {
			if err.Error() == "EOF" {
				return x, nil
			}
			return x, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			path = append(path, t.Name.Space+" "+t.Name.Local)
		case xml.EndElement:
			path = path[:len(path)-1]
		case xml.CharData:
			s := strings.TrimSpace(string(t))
			if s == "" || len(path) == 0 {
				continue
			}
			for _, el := range slices.Backward(path) {
				if f := xmpField(&x, el); f != nil {
					*f += s
					break
				}
			}
		}
	}
}

func xmpField(x *xmpFields, el string) *string {
	const dc, xmp, pdf, id = "http://purl.org/dc/elements/1.1/ ", "http://ns.adobe.com/xap/1.0/ ", "http://ns.adobe.com/pdf/1.3/ ", "http://www.aiim.org/pdfa/ns/id/ "
	return map[string]*string{
		id + "part": &x.Part, id + "conformance": &x.Conformance,
		dc + "title": &x.Title, dc + "creator": &x.Author, dc + "description": &x.Subject,
		pdf + "Keywords": &x.Keywords, pdf + "Producer": &x.Producer, xmp + "CreatorTool": &x.CreatorTool,
		xmp + "CreateDate": &x.CreateDate, xmp + "ModifyDate": &x.ModifyDate,
	}[el]
}

// sameInstant says whether a PDF date and an XMP date name the same
// instant (both absent counts).
func sameInstant(pdfDate, xmpDate string) bool {
	if pdfDate == "" || xmpDate == "" {
		return pdfDate == xmpDate
	}
	a, ok := types.DateTime(pdfDate, true)
	b, err := time.Parse(time.RFC3339, xmpDate)
	return ok && err == nil && a.Equal(b)
}

// checkOutputIntent checks for a GTS_PDFA1 output intent with an embedded
// ICC profile whose N matches its colour space, and returns that colour
// space ("RGB ", "GRAY", "CMYK"; "" without a usable intent).
func checkOutputIntent(ctx *model.Context, root types.Dict) ([]string, string) {
	arr, err := ctx.DereferenceArray(root["OutputIntents"])
	if err != nil || len(arr) == 0 {
		return []string{"6.2.3: no OutputIntents"}, ""
	}
	for _, o := range arr {
		d, err := ctx.DereferenceDict(o)
		if err != nil || d == nil {
			continue
		}
		if s := d.NameEntry("S"); s == nil || *s != "GTS_PDFA1" {
			continue
		}
		sd, _, err := ctx.DereferenceStreamDict(d["DestOutputProfile"])
		if err != nil || sd == nil || sd.Decode() != nil {
			return []string{"6.2.3: the GTS_PDFA1 output intent has no readable DestOutputProfile"}, ""
		}
		icc := sd.Content
		if len(icc) < 128 || string(icc[36:40]) != "acsp" {
			return []string{"6.2.3: DestOutputProfile is not an ICC profile"}, ""
		}
		space := string(icc[16:20])
		want := map[string]int{"RGB ": 3, "GRAY": 1, "CMYK": 4}[space]
		if n := sd.IntEntry("N"); n == nil || *n != want {
			return []string{fmt.Sprintf("6.2.3: DestOutputProfile's N is not %d, its colour space's", want)}, ""
		}
		return nil, space
	}
	return []string{"6.2.3: no GTS_PDFA1 output intent"}, ""
}
