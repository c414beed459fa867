package main

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/csv"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"os"
	"path/filepath"
	"strconv"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// corpusRow is one row of a refcorpus manifest, with its page count.
type corpusRow struct {
	record []string // the manifest record as read
	path   string   // absolute path of the PDF
	pages  int
}

// corpus is a refcorpus output folder: manifest.csv and docs/.
type corpus struct {
	dir    string
	header []string
	rows   []corpusRow
	pages  int
	bytes  int64
}

// readCorpus reads a corpus folder's manifest and counts every document's
// pages with pdfcpu.
func readCorpus(dir string) (*corpus, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(dir, "manifest.csv"))
	if err != nil {
		return nil, fmt.Errorf("reading the corpus: %w", err)
	}
	defer f.Close()
	records, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", f.Name(), err)
	}
	if len(records) < 2 {
		return nil, fmt.Errorf("%s has no rows", f.Name())
	}
	c := &corpus{dir: dir, header: records[0]}
	pathCol := -1
	for i, h := range c.header {
		if h == "path" {
			pathCol = i
		}
	}
	if pathCol < 0 {
		return nil, fmt.Errorf("%s has no path column", f.Name())
	}
	for _, rec := range records[1:] {
		p := filepath.Join(dir, rec[pathCol])
		n, err := api.PageCountFile(p)
		if err != nil {
			return nil, fmt.Errorf("counting the pages of %s: %w", rec[pathCol], err)
		}
		fi, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		c.rows = append(c.rows, corpusRow{record: rec, path: p, pages: n})
		c.pages += n
		c.bytes += fi.Size()
	}
	return c, nil
}

// writeSubset writes a manifest of the corpus's first n rows to path, with
// paths still relative to the corpus folder (run it with --root c.dir). It
// returns the pages of those rows.
func (c *corpus) writeSubset(path string, n int) (int, error) {
	n = min(n, len(c.rows))
	records := [][]string{c.header}
	pages := 0
	for _, r := range c.rows[:n] {
		records = append(records, r.record)
		pages += r.pages
	}
	return pages, writeCSV(path, records)
}

func writeCSV(path string, records [][]string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	if err := w.WriteAll(records); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}

// writeRepeatManifest writes a manifest of rows rows that cycle over files
// (paths relative to the manifest's folder), each row its own source_id, so
// every row is a separate document. It streams: a 24,000-row manifest is
// never held whole.
func writeRepeatManifest(path string, rows int, files []string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "source_id,participant_id,referral_date,consent,path")
	for i := range rows {
		fmt.Fprintf(w, "B-%06d,P-%06d,2024-01-01,yes,%s\n", i+1, i%len(files)+1, files[i%len(files)])
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}

// tinyPDF returns a one-page image-only PDF: a strip of 8-bit gray scan at
// dpi holding one line of text, about two inches wide. It keeps the OCR of
// a document negligible, so that what a run of thousands of them costs is
// refbatch's own work per document.
func tinyPDF(text string, dpi int) ([]byte, error) {
	face := basicfont.Face7x13
	const scale = 2 // basicfont is 13 px tall: about 12 pt at 150 DPI when doubled
	w := (len(text)*7 + 16) * scale
	h := 13*scale + 24
	small := image.NewGray(image.Rect(0, 0, w/scale, 13+4))
	draw.Draw(small, small.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	d := font.Drawer{Dst: small, Src: image.NewUniform(color.Black), Face: face, Dot: fixed.P(8, 13)}
	d.DrawString(text)
	img := image.NewGray(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	for y := range small.Rect.Dy() * scale {
		for x := range w {
			img.SetGray(x, y+10, small.GrayAt(x/scale, y/scale))
		}
	}
	return imagePDF(img, dpi, 1)
}

// imagePDF writes a PDF of pages pages, each showing img scanned at dpi;
// every page refers to the one image object.
func imagePDF(img *image.Gray, dpi, pages int) ([]byte, error) {
	if pages < 1 {
		return nil, errors.New("a PDF needs a page")
	}
	var raw bytes.Buffer
	zw := zlib.NewWriter(&raw)
	for y := img.Rect.Min.Y; y < img.Rect.Max.Y; y++ {
		zw.Write(img.Pix[img.PixOffset(img.Rect.Min.X, y) : img.PixOffset(img.Rect.Min.X, y)+img.Rect.Dx()])
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	wpt := float64(img.Rect.Dx()) * 72 / float64(dpi)
	hpt := float64(img.Rect.Dy()) * 72 / float64(dpi)
	content := fmt.Sprintf("q %.2f 0 0 %.2f 0 0 cm /Im0 Do Q\n", wpt, hpt)

	// Objects: 1 catalog, 2 pages, 3 image, 4 content, 5.. the pages.
	var b bytes.Buffer
	var offsets []int
	obj := func(body string, stream []byte) {
		offsets = append(offsets, b.Len())
		fmt.Fprintf(&b, "%d 0 obj\n%s", len(offsets), body)
		if stream != nil {
			b.WriteString("\nstream\n")
			b.Write(stream)
			b.WriteString("\nendstream")
		}
		b.WriteString("\nendobj\n")
	}
	b.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	kids := new(bytes.Buffer)
	for i := range pages {
		fmt.Fprintf(kids, "%d 0 R ", 5+i)
	}
	obj("<< /Type /Catalog /Pages 2 0 R >>", nil)
	obj(fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", kids, pages), nil)
	obj(fmt.Sprintf("<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode /Length %d >>",
		img.Rect.Dx(), img.Rect.Dy(), raw.Len()), raw.Bytes())
	obj(fmt.Sprintf("<< /Length %d >>", len(content)), []byte(content))
	for range pages {
		obj(fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %.2f %.2f] /Resources << /XObject << /Im0 3 0 R >> >> /Contents 4 0 R >>", wpt, hpt), nil)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(offsets)+1)
	for _, o := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(offsets)+1, xref)
	return b.Bytes(), nil
}

// writeTinyDocs writes n different tiny documents into dir and returns
// their names.
func writeTinyDocs(dir string, n, dpi int) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var names []string
	for i := range n {
		// Three credible words at least, or validation calls it empty.
		data, err := tinyPDF(fmt.Sprintf("Referral letter P-%06d Clinic", i+1), dpi)
		if err != nil {
			return nil, err
		}
		name := "tiny-" + strconv.Itoa(i+1) + ".pdf"
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return nil, err
		}
		names = append(names, name)
	}
	return names, nil
}

// writeLongDoc writes one document of pages pages made of the corpus's
// pages in manifest order (repeated when the corpus is shorter), so that it
// reads like the rest of the bench.
func (c *corpus) writeLongDoc(path string, pages int) error {
	var files []string
	for n := 0; n < pages; {
		for _, r := range c.rows {
			files = append(files, r.path)
			if n += r.pages; n >= pages {
				break
			}
		}
	}
	conf := model.NewDefaultConfiguration()
	merged := path + ".merged"
	defer os.Remove(merged)
	if err := api.MergeCreateFile(files, merged, false, conf); err != nil {
		return fmt.Errorf("merging corpus pages: %w", err)
	}
	in, err := os.Open(merged)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := api.Trim(in, out, []string{"1-" + strconv.Itoa(pages)}, conf); err != nil {
		out.Close()
		return fmt.Errorf("cutting the long document to %d pages: %w", pages, err)
	}
	return out.Close()
}
