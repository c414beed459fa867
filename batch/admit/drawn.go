package admit

import (
	"fmt"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

// maxDrawnDepth bounds the walk through an object's direct values;
// validation has already parsed them, and real files nest a few levels.
const maxDrawnDepth = 32

// drawnStreams returns the object numbers of the streams the renderer
// runs as content whatever their dictionaries say: page /Contents, Type 3
// /CharProcs, annotation appearances (/AP) and soft-mask groups (/G). A
// form or pattern is drawn by its /Subtype or /PatternType, which
// mayBeContent already honours. It also returns the /Contents arrays of
// more than one stream: the renderer reads them as one stream, so an
// inline image's dictionary may begin in one and end in the next.
// The third result is the streams named as embedded files (/EF), which
// are data unless something draws them.
func drawnStreams(xt *model.XRefTable) (drawn map[int]bool, joined [][]int, files map[int]bool) {
	drawn, files = map[int]bool{}, map[int]bool{}
	seen := map[string]bool{}
	add := func(o types.Object) {
		if ir, ok := o.(types.IndirectRef); ok {
			drawn[ir.ObjectNumber.Value()] = true
		}
	}
	// addAll adds o, or the references in the array or dictionary o is or
	// names.
	addAll := func(o types.Object) {
		add(o)
		if d, err := xt.Dereference(o); err == nil {
			switch v := d.(type) {
			case types.Array:
				for _, x := range v {
					add(x)
				}
			case types.Dict:
				for _, x := range v {
					add(x)
				}
			}
		}
	}
	var walk func(o types.Object, depth int)
	walk = func(o types.Object, depth int) {
		if depth > maxDrawnDepth {
			return
		}
		switch v := o.(type) {
		case types.Array:
			for _, x := range v {
				walk(x, depth+1)
			}
		case types.Dict:
			visitDrawn(xt, v, addAll)
			if ef, err := xt.DereferenceDict(v["EF"]); err == nil {
				for _, x := range ef {
					if ir, ok := x.(types.IndirectRef); ok {
						files[ir.ObjectNumber.Value()] = true
					}
				}
			}
			if seq := contentsArray(xt, v); len(seq) > 1 && !seen[fmt.Sprint(seq)] {
				seen[fmt.Sprint(seq)] = true
				joined = append(joined, seq)
			}
			for _, x := range v {
				walk(x, depth+1)
			}
		}
	}
	for _, e := range xt.Table {
		if e == nil || e.Free {
			continue
		}
		switch v := e.Object.(type) {
		case types.StreamDict:
			walk(v.Dict, 0)
		case *types.StreamDict:
			walk(v.Dict, 0)
		default:
			walk(v, 0)
		}
	}
	return drawn, joined, files
}

// visitDrawn hands addAll what a dictionary names as drawn content.
func visitDrawn(xt *model.XRefTable, d types.Dict, addAll func(types.Object)) {
	if o, ok := d.Find("Contents"); ok {
		addAll(o)
	}
	if o, ok := d.Find("CharProcs"); ok {
		addAll(o)
	}
	if o, ok := d.Find("AP"); ok {
		if ap, err := xt.DereferenceDict(o); err == nil {
			for _, k := range []string{"N", "R", "D"} {
				if x, ok := ap.Find(k); ok {
					addAll(x)
				}
			}
		}
	}
	if _, ok := d.Find("S"); ok {
		if o, ok := d.Find("G"); ok {
			addAll(o)
		}
	}
}

// contentsArray is the object numbers of a dictionary's /Contents when it
// is an array (direct or not) of references.
func contentsArray(xt *model.XRefTable, d types.Dict) []int {
	o, ok := d.Find("Contents")
	if !ok {
		return nil
	}
	a, err := xt.DereferenceArray(o)
	if err != nil {
		return nil
	}
	var seq []int
	for _, x := range a {
		if ir, ok := x.(types.IndirectRef); ok {
			seq = append(seq, ir.ObjectNumber.Value())
		}
	}
	return seq
}
