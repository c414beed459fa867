package admit

// The page tree walk that sizes every page as MuPDF renders it, for the
// fit-DPI rule (page.Policy.FitDPI).

import (
	"errors"
	"fmt"
	"math"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

// pageSize is a page's effective size in points, as rendered: CropBox
// within MediaBox, scaled by UserUnit, turned by /Rotate.
type pageSize struct{ w, h float64 }

type rect struct{ x0, y0, x1, y1 float64 }

func (r rect) empty() bool { return r.x1 <= r.x0 || r.y1 <= r.y0 }

func (r rect) intersect(o rect) rect {
	return rect{max(r.x0, o.x0), max(r.y0, o.y0), min(r.x1, o.x1), min(r.y1, o.y1)}
}

// inherited holds the page attributes a page tree node passes to its kids.
type inherited struct {
	media, crop *rect
	rotate      int
}

// pageSizes walks the page tree in page order. It relies on validation
// having run but still guards against loops, since relaxed mode repairs
// rather than refuses.
func pageSizes(xt *model.XRefTable) ([]pageSize, error) {
	root, err := xt.Pages()
	if err != nil {
		return nil, err
	}
	if root == nil {
		return nil, errors.New("the catalog has no /Pages")
	}
	var pages []pageSize
	seen := map[int]bool{}
	var walk func(o types.Object, inh inherited, depth int) error
	walk = func(o types.Object, inh inherited, depth int) error {
		if depth > maxPageTreeDepth {
			return fmt.Errorf("page tree deeper than %d levels", maxPageTreeDepth)
		}
		if ir, ok := o.(types.IndirectRef); ok {
			n := ir.ObjectNumber.Value()
			if seen[n] {
				return fmt.Errorf("page tree node object %d is reached twice", n)
			}
			seen[n] = true
		}
		d, err := xt.DereferenceDict(o)
		if err != nil {
			return err
		}
		if d == nil {
			return errors.New("page tree node is not a dictionary")
		}
		if err := inheritFrom(xt, d, &inh); err != nil {
			return err
		}
		kidsObj, isNode := d.Find("Kids")
		if t := d.Type(); isNode && (t == nil || *t != "Page") {
			kids, err := xt.DereferenceArray(kidsObj)
			if err != nil {
				return err
			}
			for _, k := range kids {
				if k == nil {
					continue
				}
				if err := walk(k, inh, depth+1); err != nil {
					return err
				}
			}
			return nil
		}
		p, err := effectiveSize(xt, d, inh, len(pages)+1)
		if err != nil {
			return err
		}
		pages = append(pages, p)
		return nil
	}
	if err := walk(*root, inherited{}, 0); err != nil {
		return nil, err
	}
	return pages, nil
}

// inheritFrom applies a node's own MediaBox, CropBox and Rotate.
func inheritFrom(xt *model.XRefTable, d types.Dict, inh *inherited) error {
	if o, ok := d.Find("MediaBox"); ok && o != nil {
		r, err := readRect(xt, o)
		if err != nil {
			return fmt.Errorf("reading MediaBox: %w", err)
		}
		inh.media = &r
	}
	if o, ok := d.Find("CropBox"); ok && o != nil {
		r, err := readRect(xt, o)
		if err != nil {
			return fmt.Errorf("reading CropBox: %w", err)
		}
		inh.crop = &r
	}
	if o, ok := d.Find("Rotate"); ok && o != nil {
		r, err := xt.DereferenceNumber(o)
		if err != nil {
			return fmt.Errorf("reading Rotate: %w", err)
		}
		inh.rotate = int(math.Round(r))
	}
	return nil
}

// effectiveSize is the size MuPDF renders a page at: the MediaBox cut by a
// non-empty CropBox, times UserUnit (never inherited), with width and
// height swapped for a /Rotate of 90 or 270.
func effectiveSize(xt *model.XRefTable, d types.Dict, inh inherited, pageNr int) (pageSize, error) {
	if inh.media == nil {
		return pageSize{}, fmt.Errorf("page %d has no MediaBox", pageNr)
	}
	box := *inh.media
	if inh.crop != nil {
		if c := box.intersect(*inh.crop); !c.empty() {
			box = c
		}
	}
	unit := 1.0
	if o, ok := d.Find("UserUnit"); ok && o != nil {
		u, err := xt.DereferenceNumber(o)
		if err != nil {
			return pageSize{}, fmt.Errorf("page %d UserUnit: %w", pageNr, err)
		}
		if u > 0 {
			unit = u
		}
	}
	w, h := (box.x1-box.x0)*unit, (box.y1-box.y0)*unit
	if math.IsNaN(w) || math.IsNaN(h) || math.IsInf(w, 0) || math.IsInf(h, 0) {
		return pageSize{}, fmt.Errorf("page %d has a box of no finite size", pageNr)
	}
	if r := ((inh.rotate % 360) + 360) % 360; r == 90 || r == 270 {
		w, h = h, w
	}
	return pageSize{w: max(w, 0), h: max(h, 0)}, nil
}

func readRect(xt *model.XRefTable, o types.Object) (rect, error) {
	a, err := xt.DereferenceArray(o)
	if err != nil {
		return rect{}, err
	}
	if len(a) != 4 {
		return rect{}, fmt.Errorf("a rectangle has %d numbers, not 4", len(a))
	}
	var v [4]float64
	for i := range a {
		if v[i], err = xt.DereferenceNumber(a[i]); err != nil {
			return rect{}, err
		}
	}
	// Corners may come in any order (ISO 32000 7.9.5).
	return rect{min(v[0], v[2]), min(v[1], v[3]), max(v[0], v[2]), max(v[1], v[3])}, nil
}
