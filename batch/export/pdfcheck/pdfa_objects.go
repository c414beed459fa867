package pdfcheck

import (
	"maps"
	"slices"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

var (
	badActions = []string{"Launch", "Sound", "Movie", "ResetForm", "ImportData", "JavaScript",
		"Hide", "SetOCGState", "Rendition", "Trans", "GoTo3DView"}
	badAnnots = []string{"Sound", "Movie", "Screen", "3D", "FileAttachment", "RichMedia"}
)

// objectProblems are the clauses object o, and the dictionaries and
// arrays it holds directly, break (see PDFA).
func objectProblems(ctx *model.Context, intent string, o types.Object, depth int) []string {
	if depth > 32 {
		return nil
	}
	var p []string
	var d types.Dict
	switch o := o.(type) {
	case types.StreamDict:
		p = append(p, streamProblems(o)...)
		d = o.Dict
	case types.ObjectStreamDict:
		d = o.Dict
	case types.XRefStreamDict:
		d = o.Dict
	case types.Dict:
		d = o
	case types.Array:
		p = append(p, arraySpace(o, intent)...)
		for _, v := range o {
			p = append(p, objectProblems(ctx, intent, v, depth+1)...)
		}
		return p
	default:
		return nil
	}
	p = append(p, dictProblems(ctx, d)...)
	p = append(p, dictSpaces(ctx, d, intent)...)
	for _, k := range slices.Sorted(maps.Keys(d)) {
		p = append(p, objectProblems(ctx, intent, d[k], depth+1)...)
	}
	return p
}

func streamProblems(sd types.StreamDict) []string {
	var p []string
	for _, k := range []string{"F", "FFilter", "FDecodeParms"} {
		if _, ok := sd.Find(k); ok {
			p = append(p, "6.1.7: a stream has "+k)
		}
	}
	for _, f := range sd.FilterPipeline {
		if f.Name == "LZWDecode" || f.Name == "Crypt" {
			p = append(p, "6.1.7: a stream is "+f.Name+" encoded")
		}
	}
	if sd.Image() {
		if b := sd.BooleanEntry("Interpolate"); b != nil && *b {
			p = append(p, "6.2.8: an image has Interpolate true")
		}
		for _, k := range []string{"Alternates", "OPI"} {
			if _, ok := sd.Find(k); ok {
				p = append(p, "6.2.8: an image has "+k)
			}
		}
	}
	if s := sd.Subtype(); s != nil && *s == "PS" {
		p = append(p, "6.2.9: a PostScript XObject")
	}
	return p
}

func dictProblems(ctx *model.Context, d types.Dict) []string {
	var p []string
	if _, ok := d.Find("JS"); ok {
		p = append(p, "6.5: JavaScript")
	}
	if s := d.NameEntry("S"); s != nil && slices.Contains(badActions, *s) {
		p = append(p, "6.5.1: a "+*s+" action")
	}
	t := d.Type()
	if t != nil && (*t == "Catalog" || *t == "Page") {
		if _, ok := d.Find("AA"); ok {
			p = append(p, "6.5.2: additional actions on a "+*t)
		}
	}
	if t != nil && *t == "Catalog" {
		if names, err := ctx.DereferenceDict(d["Names"]); err == nil && names != nil {
			if _, ok := names.Find("JavaScript"); ok {
				p = append(p, "6.5: a JavaScript name tree")
			}
			if _, ok := names.Find("EmbeddedFiles"); ok {
				p = append(p, "6.8: embedded files")
			}
		}
	}
	if t != nil && *t == "Font" {
		if s := d.Subtype(); s != nil && *s != "Type3" && *s != "Type0" && !embedded(ctx, d) {
			p = append(p, "6.2.11.4: a font is not embedded")
		}
		if s := d.Subtype(); s != nil && *s == "Type0" {
			// Its descendant is checked as an object of its own when
			// indirect; a direct one here.
			if arr, err := ctx.DereferenceArray(d["DescendantFonts"]); err == nil && len(arr) == 1 {
				if df, err := ctx.DereferenceDict(arr[0]); err != nil || df == nil || !embedded(ctx, df) {
					p = append(p, "6.2.11.4: a Type 0 font's descendant is not embedded")
				}
			}
		}
	}
	if (t != nil && *t == "Annot") || (d.Subtype() != nil && d["Rect"] != nil && t == nil) {
		p = append(p, annotProblems(d)...)
		p = append(p, annotAppearance(ctx, d)...)
	}
	return p
}

func annotProblems(d types.Dict) []string {
	s := d.Subtype()
	if s == nil {
		return nil
	}
	if slices.Contains(badAnnots, *s) {
		return []string{"6.3.1: a " + *s + " annotation"}
	}
	if *s == "Popup" {
		return nil
	}
	f := 0
	if i := d.IntEntry("F"); i != nil {
		f = *i
	}
	if f&4 == 0 || f&(1|2|32|256) != 0 {
		return []string{"6.3.2: an annotation is not printed, or hidden"}
	}
	return nil
}

// embedded says whether font dictionary d's descriptor has a font file.
func embedded(ctx *model.Context, d types.Dict) bool {
	fd, err := ctx.DereferenceDict(d["FontDescriptor"])
	if err != nil || fd == nil {
		return false
	}
	for _, k := range []string{"FontFile", "FontFile2", "FontFile3"} {
		if _, ok := fd.Find(k); ok {
			return true
		}
	}
	return false
}
