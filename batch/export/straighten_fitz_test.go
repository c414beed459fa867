package export

import "github.com/gen2brain/go-fitz"

// The tests straighten pages in process, with MuPDF as refbatch's export
// child has it.
func init() {
	OpenPages = func(src []byte) (PageRenderer, error) {
		doc, err := fitz.NewFromMemory(src)
		if err != nil {
			return nil, err
		}
		return doc, nil
	}
}
