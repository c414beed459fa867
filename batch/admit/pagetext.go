package admit

import (
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"

	"github.com/refbatch/refbatch/report/outcome"
)

// This file counts the text each page shows at admission: a page's
// content streams and the forms it draws, as the renderer reads them for
// that one page, counted as checkImages counts a stream's text (the
// bytes of its strings), each stream once per page.

// maxPageText bounds the text one page may show: the most one content
// stream may show (maxStreamText), for the page's streams and forms
// together. Ten forms of nearly 2 MiB each, every one under the stream's
// cap, made a worker hold 1.6 GiB for one page; counted over the whole
// file, a page of them passed in a document of as many other pages.
const maxPageText = maxStreamText

// maxFormDepth bounds the walk through forms that draw forms; real files
// nest a few levels.
const maxFormDepth = 32

// pageText is the text counted so far of each page, and which pages draw
// each stream.
type pageText struct {
	shown  []int64
	drawBy map[int][]int // stream object number: the pages (from 0) that draw it
}

// newPageText finds, for every page of xt, the streams it draws: its
// /Contents and the form XObjects its resources (its own or inherited)
// name, and the forms theirs name in turn. It relies on pageSizes having
// walked the tree; a node it cannot read draws nothing here.
func newPageText(xt *model.XRefTable) *pageText {
	pt := &pageText{drawBy: map[int][]int{}}
	root, err := xt.Pages()
	if err != nil || root == nil {
		return pt
	}
	seen := map[int]bool{}
	var walk func(o types.Object, res types.Object, depth int)
	walk = func(o types.Object, res types.Object, depth int) {
		if ir, ok := o.(types.IndirectRef); ok {
			if seen[ir.ObjectNumber.Value()] {
				return
			}
			seen[ir.ObjectNumber.Value()] = true
		}
		d, err := xt.DereferenceDict(o)
		if err != nil || d == nil || depth > maxPageTreeDepth {
			return
		}
		if r, ok := d.Find("Resources"); ok && r != nil {
			res = r
		}
		if kids, isNode := d.Find("Kids"); isNode && (d.Type() == nil || *d.Type() != "Page") {
			a, _ := xt.DereferenceArray(kids)
			for _, k := range a {
				walk(k, res, depth+1)
			}
			return
		}
		page := len(pt.shown)
		pt.shown = append(pt.shown, 0)
		drawn := map[int]bool{}
		for _, n := range contentsOf(xt, d) {
			drawn[n] = true
		}
		pt.forms(xt, res, drawn, 0)
		for n := range drawn {
			pt.drawBy[n] = append(pt.drawBy[n], page)
		}
	}
	walk(*root, nil, 0)
	return pt
}

// contentsOf is the object numbers of a page's /Contents: one stream, or
// an array of them.
func contentsOf(xt *model.XRefTable, d types.Dict) []int {
	o, ok := d.Find("Contents")
	if !ok {
		return nil
	}
	if ir, ok := o.(types.IndirectRef); ok {
		if _, isStream := streamObject(xt.Table[ir.ObjectNumber.Value()]); isStream {
			return []int{ir.ObjectNumber.Value()}
		}
	}
	return contentsArray(xt, d)
}

// forms adds to drawn the form XObjects the resources res name, and the
// forms theirs name, each once.
func (pt *pageText) forms(xt *model.XRefTable, res types.Object, drawn map[int]bool, depth int) {
	if depth > maxFormDepth || res == nil {
		return
	}
	rd, err := xt.DereferenceDict(res)
	if err != nil || rd == nil {
		return
	}
	xo, ok := rd.Find("XObject")
	if !ok {
		return
	}
	xd, err := xt.DereferenceDict(xo)
	if err != nil {
		return
	}
	for _, x := range xd {
		ir, ok := x.(types.IndirectRef)
		if !ok {
			continue
		}
		n := ir.ObjectNumber.Value()
		sd, ok := streamObject(xt.Table[n])
		if !ok || drawn[n] {
			continue
		}
		if st := sd.Dict.Subtype(); st == nil || *st != "Form" {
			continue
		}
		drawn[n] = true
		if r, ok := sd.Dict.Find("Resources"); ok {
			pt.forms(xt, r, drawn, depth+1)
		}
	}
}

// add counts shown, the text of stream object n, on every page that draws
// it, and rejects the document at the first page over maxPageText.
func (pt *pageText) add(n int, shown int64) error {
	for _, p := range pt.drawBy[n] {
		pt.shown[p] += shown
		if pt.shown[p] > maxPageText {
			return reject(outcome.MalformedPDF, "page %d shows more than %d MiB of text in its content streams and the forms it draws: a text bomb",
				p+1, maxPageText>>20)
		}
	}
	return nil
}
