package export

// DeviceCMYK set by a content stream's operators (6.2.4.3): the k and K
// operators, cs and CS with /DeviceCMYK, and an inline image in CMYK. The
// sRGB output intent does not cover them, and only converting the colours
// would.

import (
	"fmt"
	"maps"
	"slices"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
	"github.com/refbatch/refbatch/batch/export/pdfobj"
)

// contentObstacle looks at the content streams of every page and form
// XObject of ctx for DeviceCMYK colour; a stream that cannot be decoded
// is passed over (its filter is one of the others' concerns).
func contentObstacle(ctx *model.Context) string {
	var streams []types.IndirectRef
	for i := 1; i <= ctx.PageCount; i++ {
		d, _, _, err := ctx.PageDict(i, false)
		if err != nil || d == nil {
			continue
		}
		contents, err := pageContents(ctx, d)
		if err != nil {
			continue
		}
		for _, c := range contents {
			if ref, ok := c.(types.IndirectRef); ok {
				streams = append(streams, ref)
			}
		}
	}
	for _, n := range slices.Sorted(maps.Keys(ctx.Table)) {
		e := ctx.Table[n]
		if e == nil || e.Free || e.Compressed {
			continue
		}
		if sd, ok := e.Object.(types.StreamDict); ok && sd.Subtype() != nil && *sd.Subtype() == "Form" {
			gen := 0
			if e.Generation != nil {
				gen = *e.Generation
			}
			streams = append(streams, *types.NewIndirectRef(n, gen))
		}
	}
	for _, ref := range streams {
		sd, _, err := ctx.DereferenceStreamDict(ref)
		if err != nil || sd == nil || sd.Decode() != nil {
			continue
		}
		if pdfobj.UsesCMYK(sd.Content) {
			return fmt.Sprintf("object %d: DeviceCMYK set by a content stream's operators, which an sRGB output intent does not cover", ref.ObjectNumber.Value())
		}
	}
	return ""
}
