package export

// The searchable PDF's document metadata, in the document information
// dictionary and, the same, as an XMP packet in the catalog's /Metadata
// (what archive software and PDF/A read):
//
//   - Title: the document's source_id, unless PDFOptions.Title says
//     otherwise;
//   - Author, Subject, Keywords and Creator: the source's own, when it has
//     them;
//   - Producer: "refbatch <version>";
//   - CreationDate and ModDate: when the run read the document (the
//     artifact's time, not the export's, so that the same export gives
//     the same bytes);
//   - refbatch's provenance keys in the information dictionary only
//     (source and artifact SHA-256, engines, policy version);
//   - with --pdfa, pdfaid:part 2 and pdfaid:conformance B in the XMP.

import (
	"bytes"
	"encoding/xml"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

// PDFOptions say how the searchable PDF is made.
type PDFOptions struct {
	// PDFA makes it PDF/A-2b where the source allows (see pdfa.go).
	PDFA bool
	// Title is the document's title; the source_id when empty.
	Title string
	// Transcriptions are what persons typed for regions of the pages,
	// set in the layer as such (see transcribed.go).
	Transcriptions []Transcription
	// Straighten redraws each OCR'd page turned in the image or deskewed
	// as the square image OCR read, re-encoded losslessly, its layer
	// square on it (see straighten.go); the default leaves every page's
	// pixels as the source's.
	Straighten bool
}

// docMeta is the metadata both the information dictionary and the XMP
// packet say.
type docMeta struct {
	Title, Author, Subject, Keywords, Creator, Producer string
	Created                                             time.Time // zero: no dates
	PDFA                                                bool
}

// newDocMeta gathers the metadata from the source's information
// dictionary, meta and opt.
func newDocMeta(ctx *model.Context, meta Provenance, opt PDFOptions) docMeta {
	m := docMeta{Title: opt.Title, Producer: meta.Producer, Created: meta.ReadAt.UTC().Truncate(time.Second)}
	if m.Title == "" {
		m.Title = meta.SourceID
	}
	if m.Producer == "" {
		m.Producer = "refbatch"
	}
	if ctx.Info == nil {
		return m
	}
	old, err := ctx.DereferenceDict(*ctx.Info)
	if err != nil || old == nil {
		return m
	}
	text := func(key string) string {
		o, ok := old.Find(key)
		if !ok || o == nil {
			return ""
		}
		s, err := ctx.DereferenceText(o)
		if err != nil {
			return ""
		}
		return strings.TrimSpace(s)
	}
	m.Author, m.Subject, m.Keywords, m.Creator = text("Author"), text("Subject"), text("Keywords"), text("Creator")
	return m
}

// pdfDate is t as a PDF date, in UTC.
func pdfDate(t time.Time) string { return t.UTC().Format("D:20060102150405Z") }

// xmpDate is t as an XMP date, in UTC: the same instant as pdfDate.
func xmpDate(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05Z") }

// info writes the new document information dictionary and returns its
// reference: the source's entries other than the standard ones, which m
// says, and refbatch's provenance.
func (u *update) info(ctx *model.Context, meta Provenance, m docMeta) (types.IndirectRef, error) {
	d := types.Dict{}
	if ctx.Info != nil {
		old, err := ctx.DereferenceDict(*ctx.Info)
		if err != nil {
			return types.IndirectRef{}, &parseError{"reading the source's /Info", err}
		}
		maps.Copy(d, old)
	}
	for _, k := range []string{"Title", "Author", "Subject", "Keywords", "Creator", "Producer", "CreationDate", "ModDate", "Trapped"} {
		delete(d, k)
	}
	for k, v := range map[string]string{"Title": m.Title, "Author": m.Author, "Subject": m.Subject,
		"Keywords": m.Keywords, "Creator": m.Creator, "Producer": m.Producer} {
		if v != "" {
			d[k] = pdfString(v)
		}
	}
	if !m.Created.IsZero() {
		d["CreationDate"] = pdfString(pdfDate(m.Created))
		d["ModDate"] = pdfString(pdfDate(m.Created))
	}
	engines := make([]string, 0, len(meta.Engines))
	for _, k := range slices.Sorted(maps.Keys(meta.Engines)) {
		engines = append(engines, k+" "+meta.Engines[k])
	}
	d["RefbatchSourceSHA256"] = pdfString(meta.SourceSHA256)
	d["RefbatchArtifactSHA256"] = pdfString(meta.ArtifactSHA256)
	d["RefbatchEngines"] = pdfString(strings.Join(engines, ", "))
	d["RefbatchPolicyVersion"] = pdfString(meta.PolicyVersion)
	n := u.alloc()
	u.object(n, 0, d.PDFString())
	return *types.NewIndirectRef(n, 0), nil
}

// xmpPacket is m as an XMP packet: Dublin Core, XMP basic, Adobe PDF and,
// with PDFA, the PDF/A identification schema.
func xmpPacket(m docMeta) []byte {
	var b bytes.Buffer
	esc := func(s string) string {
		var e bytes.Buffer
		xml.EscapeText(&e, []byte(s))
		return e.String()
	}
	b.WriteString("<?xpacket begin=\"\ufeff\" id=\"W5M0MpCehiHzreSzNTczkc9d\"?>\n")
	b.WriteString(`<x:xmpmeta xmlns:x="adobe:ns:meta/">
 <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
  <rdf:Description rdf:about=""
    xmlns:dc="http://purl.org/dc/elements/1.1/"
    xmlns:xmp="http://ns.adobe.com/xap/1.0/"
    xmlns:pdf="http://ns.adobe.com/pdf/1.3/"
    xmlns:pdfaid="http://www.aiim.org/pdfa/ns/id/">
   <dc:format>application/pdf</dc:format>
`)
	alt := func(tag, v string) {
		if v != "" {
			b.WriteString("   <" + tag + "><rdf:Alt><rdf:li xml:lang=\"x-default\">" + esc(v) + "</rdf:li></rdf:Alt></" + tag + ">\n")
		}
	}
	simple := func(tag, v string) {
		if v != "" {
			b.WriteString("   <" + tag + ">" + esc(v) + "</" + tag + ">\n")
		}
	}
	alt("dc:title", m.Title)
	if m.Author != "" {
		b.WriteString("   <dc:creator><rdf:Seq><rdf:li>" + esc(m.Author) + "</rdf:li></rdf:Seq></dc:creator>\n")
	}
	alt("dc:description", m.Subject)
	simple("pdf:Keywords", m.Keywords)
	simple("pdf:Producer", m.Producer)
	simple("xmp:CreatorTool", m.Creator)
	if !m.Created.IsZero() {
		simple("xmp:CreateDate", xmpDate(m.Created))
		simple("xmp:ModifyDate", xmpDate(m.Created))
		simple("xmp:MetadataDate", xmpDate(m.Created))
	}
	if m.PDFA {
		simple("pdfaid:part", "2")
		simple("pdfaid:conformance", "B")
	}
	b.WriteString("  </rdf:Description>\n </rdf:RDF>\n</x:xmpmeta>\n")
	// Room for an editor to change the packet in place, as XMP asks.
	b.WriteString(strings.Repeat(strings.Repeat(" ", 99)+"\n", 20))
	b.WriteString("<?xpacket end=\"w\"?>")
	return b.Bytes()
}
