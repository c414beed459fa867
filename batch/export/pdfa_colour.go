package export

// What PDF/A-2b forbids of colour and annotations' appearances that an
// update cannot mend (issue 51): a device colour space the sRGB output
// intent does not cover (6.2.4.3) would have to be converted, pixels and
// all; an appearance other than the normal one (6.3.3) could only go by
// dropping what a viewer shows when the form is pressed or hovered, and a
// normal appearance made of states would have to be drawn again.

import (
	"maps"
	"slices"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
	"github.com/refbatch/refbatch/batch/export/pdfobj"
)

// cmykObstacle says where a colour space cs named directly is DeviceCMYK,
// which the sRGB output intent does not cover.
func cmykObstacle(cs types.Object, where string) string {
	if cs == types.Name("DeviceCMYK") {
		return "DeviceCMYK " + where + ", which an sRGB output intent does not cover"
	}
	return ""
}

// arraySpaceObstacle looks at a colour space array: a Separation's or
// DeviceN's alternate, an Indexed space's base.
func arraySpaceObstacle(a types.Array) string {
	if len(a) < 3 {
		return ""
	}
	switch a[0] {
	case types.Name("Separation"), types.Name("DeviceN"):
		return cmykObstacle(a[2], "as a "+string(a[0].(types.Name))+" colour space's alternate")
	case types.Name("Indexed"):
		return cmykObstacle(a[1], "as an Indexed colour space's base")
	}
	return ""
}

// dictSpaceObstacle looks at a dictionary's ColorSpace: an image's, or a
// resource dictionary's colour spaces.
func dictSpaceObstacle(ctx *model.Context, d types.Dict) string {
	cs, ok := d["ColorSpace"]
	if !ok {
		return ""
	}
	if res, err := ctx.DereferenceDict(cs); err == nil && res != nil {
		for _, k := range slices.Sorted(maps.Keys(res)) {
			if why := cmykObstacle(res[k], "in a resource dictionary"); why != "" {
				return why
			}
		}
		return ""
	}
	return cmykObstacle(cs, "as an image's colour space")
}

// appearanceObstacle looks at an annotation's appearance dictionary:
// only N, a stream unless the annotation is a button's widget.
func appearanceObstacle(ctx *model.Context, d types.Dict) string {
	ap, err := ctx.DereferenceDict(d["AP"])
	if err != nil || ap == nil {
		return ""
	}
	for _, k := range slices.Sorted(maps.Keys(ap)) {
		if k != "N" {
			return "an annotation has a " + k + " appearance besides its normal one"
		}
	}
	if n, err := ctx.Dereference(ap["N"]); err == nil {
		if _, ok := n.(types.Dict); ok && !pdfobj.ButtonWidget(ctx, d) {
			return "an annotation's normal appearance is a set of states, not one drawing"
		}
	}
	return ""
}
