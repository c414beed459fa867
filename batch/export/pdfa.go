package export

// PDF/A-2b (ISO 19005-2, level B) by the same incremental update.
//
// PDF/A allows incremental updates, but the whole file must conform, the
// source's objects included. The update adds what PDF/A-2b asks of any
// file: an XMP packet in the catalog (pdfaid:part 2, conformance B, the
// same values as the information dictionary, see pdfmeta.go), an
// OutputIntent GTS_PDFA1 with an embedded sRGB ICC profile, the glyphless
// font embedded (it always is), and a document ID (always written), and
// it writes again, data unchanged, the source's streams whose framing
// breaks 6.1.7.1 (pdfa_mend.go). The source's bytes, and so its pages,
// stay as they are: nothing is decoded or re-encoded. A source that would
// need that to conform (pdfaObstacle) gets the plain searchable PDF
// instead, and the reason is reported.
//
// The ICC profile is sRGB.icc from Debian's icc-profiles-free package
// (2.0.1), an ICC v2 sRGB profile made with Little CMS; its copyright
// holders (Kai-Uwe Behrmann, Marti Maria and others) license it under the
// zlib licence, which allows redistribution in binaries.

import (
	"bytes"
	_ "embed"
	"fmt"
	"maps"
	"slices"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
	"github.com/refbatch/refbatch/batch/export/pdfobj"
)

//go:embed srgb.icc
var srgbICC []byte

// pdfaHeader says whether b begins as PDF/A asks: %PDF-1.n at byte 0
// (n from 0 to 7), one end of line, then a comment of at least four bytes
// above 127. (Go's regexp reads UTF-8, not bytes.)
func pdfaHeader(b []byte) bool {
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

// forbiddenActions are the action types PDF/A-2 does not allow.
var forbiddenActions = []string{"Launch", "Sound", "Movie", "ResetForm", "ImportData", "JavaScript",
	"Hide", "SetOCGState", "Rendition", "Trans", "GoTo3DView"}

// forbiddenAnnots are the annotation types PDF/A-2 does not allow (a file
// attachment only with PDF/A files attached, which is not checked here).
var forbiddenAnnots = []string{"Sound", "Movie", "Screen", "3D", "FileAttachment", "RichMedia"}

// pdfaObstacle says why src (parsed as ctx) cannot be made PDF/A-2b by
// an incremental update, "" when it can. damaged is a source whose
// cross-reference section is damaged.
func pdfaObstacle(ctx *model.Context, src []byte, damaged bool) string {
	switch {
	case !pdfaHeader(src):
		return "its header is not %PDF-1.n followed by a binary comment"
	case damaged:
		return "its cross-reference section is damaged"
	}
	if why := badFraming(ctx, src); why != "" {
		return why
	}
	for _, n := range slices.Sorted(maps.Keys(ctx.Table)) {
		e := ctx.Table[n]
		if e == nil || e.Free || e.Object == nil {
			continue
		}
		if why := objectObstacle(ctx, pdfobj.TableObject(ctx, n, e), 0); why != "" {
			return fmt.Sprintf("object %d: %s", n, why)
		}
	}
	return contentObstacle(ctx)
}

// objectObstacle is pdfaObstacle's look at one object and the
// dictionaries and arrays it holds directly, depth levels down.
func objectObstacle(ctx *model.Context, o types.Object, depth int) string {
	if depth > 32 {
		return ""
	}
	var d types.Dict
	switch o := o.(type) {
	case types.StreamDict:
		if why := streamObstacle(o); why != "" {
			return why
		}
		d = o.Dict
	case types.ObjectStreamDict:
		d = o.Dict
	case types.XRefStreamDict:
		d = o.Dict
	case types.Dict:
		d = o
	case types.Array:
		if why := arraySpaceObstacle(o); why != "" {
			return why
		}
		for _, v := range o {
			if why := objectObstacle(ctx, v, depth+1); why != "" {
				return why
			}
		}
		return ""
	default:
		return ""
	}
	if why := dictObstacle(ctx, d); why != "" {
		return why
	}
	for _, k := range slices.Sorted(maps.Keys(d)) {
		if why := objectObstacle(ctx, d[k], depth+1); why != "" {
			return why
		}
	}
	return ""
}

// streamObstacle is what a stream's dictionary has that PDF/A-2 forbids.
func streamObstacle(sd types.StreamDict) string {
	for _, k := range []string{"F", "FFilter", "FDecodeParms"} {
		if _, ok := sd.Find(k); ok {
			return "a stream refers to an external file"
		}
	}
	for _, f := range sd.FilterPipeline {
		if f.Name == "LZWDecode" || f.Name == "Crypt" {
			return "a stream is " + f.Name + " encoded (PDF/A forbids it; re-encoding would change the file)"
		}
	}
	if sd.Image() {
		if b := sd.BooleanEntry("Interpolate"); b != nil && *b {
			return "an image asks for interpolation"
		}
		for _, k := range []string{"Alternates", "OPI"} {
			if _, ok := sd.Find(k); ok {
				return "an image has /" + k
			}
		}
	}
	if s := sd.Subtype(); s != nil && *s == "PS" {
		return "a PostScript XObject"
	}
	return ""
}

// dictObstacle is what a dictionary has that PDF/A-2 forbids, or a font
// that is not embedded.
func dictObstacle(ctx *model.Context, d types.Dict) string {
	if _, ok := d.Find("JS"); ok {
		return "JavaScript"
	}
	if s := d.NameEntry("S"); s != nil && slices.Contains(forbiddenActions, *s) {
		return "a " + *s + " action"
	}
	if t := d.Type(); t != nil && *t == "Catalog" {
		if _, ok := d.Find("AA"); ok {
			return "the catalog has additional actions"
		}
		if names, err := ctx.DereferenceDict(d["Names"]); err == nil && names != nil {
			for _, k := range []string{"JavaScript", "EmbeddedFiles"} {
				if _, ok := names.Find(k); ok {
					return "the catalog's name tree has " + k
				}
			}
		}
	}
	if t := d.Type(); t != nil && *t == "Page" {
		if _, ok := d.Find("AA"); ok {
			return "a page has additional actions"
		}
	}
	if t := d.Type(); t != nil && *t == "Annot" || d.Subtype() != nil && d["Rect"] != nil {
		if why := annotObstacle(d); why != "" {
			return why
		}
		if why := appearanceObstacle(ctx, d); why != "" {
			return why
		}
	}
	if why := dictSpaceObstacle(ctx, d); why != "" {
		return why
	}
	if t := d.Type(); t != nil && *t == "Font" {
		return fontObstacle(ctx, d)
	}
	if _, ok := d.Find("XFA"); ok {
		return "an XFA form"
	}
	return ""
}

// annotObstacle is what an annotation has that PDF/A-2 forbids.
func annotObstacle(d types.Dict) string {
	s := d.Subtype()
	if s == nil {
		return ""
	}
	if slices.Contains(forbiddenAnnots, *s) {
		return "a " + *s + " annotation"
	}
	if *s == "Popup" {
		return ""
	}
	f := 0
	if i := d.IntEntry("F"); i != nil {
		f = *i
	}
	// Print set; Invisible, Hidden, NoView and ToggleNoView clear.
	if f&4 == 0 || f&(1|2|32|256) != 0 {
		return "an annotation is hidden or not printed"
	}
	return ""
}

// fontObstacle says whether font dictionary d's program is embedded.
func fontObstacle(ctx *model.Context, d types.Dict) string {
	s := d.Subtype()
	if s == nil || *s == "Type3" || *s == "Type0" {
		// A Type 0 font's program is its descendant's, a font of its own.
		return ""
	}
	fd, err := ctx.DereferenceDict(d["FontDescriptor"])
	if err != nil || fd == nil {
		return "a font is not embedded"
	}
	for _, k := range []string{"FontFile", "FontFile2", "FontFile3"} {
		if _, ok := fd.Find(k); ok {
			return ""
		}
	}
	return "a font is not embedded"
}

// pdfaCatalog writes the PDF/A additions and the new catalog: the
// source's, with the XMP packet as /Metadata and, with m.PDFA, the sRGB
// output intent.
func (u *update) catalog(ctx *model.Context, m docMeta) error {
	root, err := ctx.Catalog()
	if err != nil {
		return &parseError{"reading the catalog", err}
	}
	d := types.Dict{}
	maps.Copy(d, root)
	xmp := xmpPacket(m)
	d["Metadata"] = u.rawStream(types.Dict{"Type": types.Name("Metadata"), "Subtype": types.Name("XML")}, xmp, "")
	if m.PDFA {
		profile := u.stream(types.Dict{"N": types.Integer(3)}, srgbICC)
		intent := u.alloc()
		u.object(intent, 0, types.Dict{
			"Type":                      types.Name("OutputIntent"),
			"S":                         types.Name("GTS_PDFA1"),
			"OutputConditionIdentifier": types.StringLiteral("sRGB IEC61966-2.1"),
			"RegistryName":              types.StringLiteral("http://www.color.org"),
			"Info":                      types.StringLiteral("sRGB IEC61966-2.1"),
			"DestOutputProfile":         profile,
		}.PDFString())
		d["OutputIntents"] = types.Array{*types.NewIndirectRef(intent, 0)}
	}
	u.object(ctx.Root.ObjectNumber.Value(), ctx.Root.GenerationNumber.Value(), d.PDFString())
	return nil
}
