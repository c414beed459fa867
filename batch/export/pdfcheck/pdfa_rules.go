package pdfcheck

// The clauses issue 51 added, which an archive's validator (PDFBox
// Preflight) found broken in files the checker had passed: a stream's
// keywords and Length (6.1.7.1), an annotation's appearance dictionary
// (6.3.3), and device colour spaces the output intent does not cover
// (6.2.4.3, 6.2.4.4).

import (
	"bytes"
	"fmt"
	"maps"
	"slices"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
	"github.com/refbatch/refbatch/batch/export/pdfobj"
)

// StreamFraming says how the stream whose data begins at data in pdf,
// with the given Length, breaks 6.1.7.1, "" when it does not: the
// keyword stream followed by CR LF or LF, and Length bytes later an end
// of line and then the keyword endstream. The end of line is CR LF or LF:
// ISO 32000 allows a CR alone, but PDFBox Preflight, an archive's
// validator, does not take it for one before endstream (issue 51).
func StreamFraming(pdf []byte, data, length int64) string {
	switch {
	case data < 1 || data > int64(len(pdf)):
		return "the stream's data is outside the file"
	case !bytes.HasSuffix(pdf[:data], []byte("stream\n")) && !bytes.HasSuffix(pdf[:data], []byte("stream\r\n")):
		return "the keyword stream is not followed by CR LF or LF"
	case length < 0 || data+length > int64(len(pdf)):
		return "the stream's Length runs past the end of the file"
	}
	rest := pdf[data+length:]
	switch {
	case bytes.HasPrefix(rest, []byte("\r\nendstream")), bytes.HasPrefix(rest, []byte("\nendstream")):
		return ""
	case bytes.HasPrefix(rest, []byte("\rendstream")):
		return "a CR alone before endstream, which PDFBox Preflight does not take for an end of line"
	case bytes.HasPrefix(rest, []byte("endstream")):
		return "no end of line before endstream"
	}
	return "the stream's Length does not end its data"
}

// streamFramingProblems checks the framing of every stream the file's
// cross-reference sections lead to (objects an update replaced are not
// read, as no reader reads them).
func streamFramingProblems(ctx *model.Context, pdf []byte) []string {
	var p []string
	for _, n := range slices.Sorted(maps.Keys(ctx.Table)) {
		e := ctx.Table[n]
		if e == nil || e.Free || e.Compressed || e.Object == nil {
			continue
		}
		var sd types.StreamDict
		switch o := e.Object.(type) {
		case types.StreamDict:
			sd = o
		case types.ObjectStreamDict:
			sd = o.StreamDict
		case types.XRefStreamDict:
			sd = o.StreamDict
		default:
			continue
		}
		length := int64(-1)
		if l, err := ctx.DereferenceInteger(sd.Dict["Length"]); err == nil && l != nil {
			length = int64(l.Value())
		}
		if why := StreamFraming(pdf, sd.StreamOffset, length); why != "" {
			p = append(p, fmt.Sprintf("object %d: 6.1.7.1: %s", n, why))
		}
	}
	return p
}

// annotAppearance checks an annotation's appearance dictionary (6.3.3):
// only the N key, and N a stream, or a subdictionary of states for a
// check box or radio button (a widget whose field is of type Btn).
func annotAppearance(ctx *model.Context, d types.Dict) []string {
	ap, err := ctx.DereferenceDict(d["AP"])
	if err != nil || ap == nil {
		return nil
	}
	var p []string
	for _, k := range slices.Sorted(maps.Keys(ap)) {
		if k != "N" {
			p = append(p, "6.3.3: an annotation's appearance dictionary has "+k+", not only N")
		}
	}
	n, err := ctx.Dereference(ap["N"])
	if err != nil {
		return p
	}
	if _, ok := n.(types.Dict); ok && !pdfobj.ButtonWidget(ctx, d) {
		p = append(p, "6.3.3: an annotation's normal appearance is a dictionary of states, not a stream")
	}
	return p
}

// deviceSpace checks a colour space named directly (cs) against the
// output intent's colour space (intent: "RGB ", "GRAY" or "CMYK", the
// ICC profile's), 6.2.4.3: DeviceCMYK needs a CMYK intent, DeviceRGB an
// RGB one; DeviceGray goes with any.
func deviceSpace(cs types.Object, intent, where string) []string {
	name, ok := cs.(types.Name)
	if !ok || intent == "" {
		return nil
	}
	switch {
	case name == "DeviceCMYK" && intent != "CMYK":
		return []string{"6.2.4.3: DeviceCMYK " + where + " under an output intent that is not CMYK"}
	case name == "DeviceRGB" && intent != "RGB ":
		return []string{"6.2.4.3: DeviceRGB " + where + " under an output intent that is not RGB"}
	}
	return nil
}

// arraySpace checks a colour space array: a Separation's or DeviceN's
// alternate space and an Indexed one's base (6.2.4.4, 6.2.4.3).
func arraySpace(a types.Array, intent string) []string {
	if len(a) < 3 {
		return nil
	}
	switch a[0] {
	case types.Name("Separation"), types.Name("DeviceN"):
		return deviceSpace(a[2], intent, "as a "+string(a[0].(types.Name))+" colour space's alternate")
	case types.Name("Indexed"):
		return deviceSpace(a[1], intent, "as an Indexed colour space's base")
	}
	return nil
}

// dictSpaces checks a dictionary's ColorSpace entry (an image's) or, a
// resource dictionary's, the colour spaces it names.
func dictSpaces(ctx *model.Context, d types.Dict, intent string) []string {
	cs, ok := d["ColorSpace"]
	if !ok {
		return nil
	}
	if res, err := ctx.DereferenceDict(cs); err == nil && res != nil {
		var p []string
		for _, k := range slices.Sorted(maps.Keys(res)) {
			p = append(p, deviceSpace(res[k], intent, "in a resource dictionary")...)
		}
		return p
	}
	return deviceSpace(cs, intent, "as an image's colour space")
}
