package pdfcheck

// DeviceCMYK set by content streams' operators (6.2.4.3). The operator
// scanner is the export's (batch/export/pdfobj): PDFBox Preflight, run
// beside this checker in the tests, is the look from outside.

import (
	"fmt"
	"maps"
	"slices"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
	"github.com/refbatch/refbatch/batch/export/pdfobj"
)

// contentProblems looks at the content streams of every page and form
// XObject for DeviceCMYK colour under an output intent that is not CMYK.
func contentProblems(ctx *model.Context, intent string) []string {
	if intent == "" || intent == "CMYK" || ctx.EnsurePageCount() != nil {
		return nil
	}
	var streams []types.IndirectRef
	for i := 1; i <= ctx.PageCount; i++ {
		d, _, _, err := ctx.PageDict(i, false)
		if err != nil || d == nil {
			continue
		}
		c, err := ctx.Dereference(d["Contents"])
		if err != nil {
			continue
		}
		if ref, ok := d["Contents"].(types.IndirectRef); ok {
			if _, isStream := c.(types.StreamDict); isStream {
				streams = append(streams, ref)
				continue
			}
		}
		if arr, ok := c.(types.Array); ok {
			for _, o := range arr {
				if ref, ok := o.(types.IndirectRef); ok {
					streams = append(streams, ref)
				}
			}
		}
	}
	for _, n := range slices.Sorted(maps.Keys(ctx.Table)) {
		e := ctx.Table[n]
		if e == nil || e.Free || e.Compressed {
			continue
		}
		if sd, ok := e.Object.(types.StreamDict); ok && sd.Subtype() != nil && *sd.Subtype() == "Form" {
			streams = append(streams, *types.NewIndirectRef(n, 0))
		}
	}
	var p []string
	for _, ref := range streams {
		sd, _, err := ctx.DereferenceStreamDict(ref)
		if err != nil || sd == nil || sd.Decode() != nil {
			continue
		}
		if pdfobj.UsesCMYK(sd.Content) {
			p = append(p, fmt.Sprintf("object %d: 6.2.4.3: DeviceCMYK set by a content stream's operators under an output intent that is not CMYK", ref.ObjectNumber.Value()))
		}
	}
	return p
}
