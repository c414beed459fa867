package admit

import (
	"encoding/binary"
	"errors"
)

// JBIG2 segment types (ITU-T T.88 7.3) whose sizes the decoder allocates.
const (
	jbig2PageInfo    = 48
	jbig2EndOfStripe = 50
)

// jbig2Region reports whether a segment type starts with a region
// segment information field (T.88 7.4.1): text, halftone, generic and
// refinement regions, intermediate or immediate.
func jbig2Region(t byte) bool {
	switch t {
	case 4, 6, 7, 20, 22, 23, 36, 38, 39, 40, 42, 43:
		return true
	}
	return false
}

// jbig2Sizes walks the segment headers of an embedded JBIG2 stream (a
// PDF's image stream or its /JBIG2Globals) and checks the page size its
// page information segments declare (the decoder allocates the page
// bitmap from it, and grows a striped page to its end-of-stripe rows)
// and every region's size. A page whose information segment lies past
// the window is errHeaderBeyond.
func jbig2Sizes(h *hdrReader, check sizeCheck) error {
	var page struct{ w, h, stripe int64 }
	seenPage := false
	// beyond is the end of the window: fine once the page is known.
	beyond := func(err error) error {
		if errors.Is(err, errHeaderBeyond) && seenPage {
			return nil
		}
		return ended(err)
	}
	for {
		typ, length, err := jbig2Header(h)
		if err != nil {
			return beyond(err)
		}
		if typ == 0xff {
			return nil // invalid: the decoder stops
		}
		read := int64(0)
		switch {
		case typ == jbig2PageInfo:
			d, err := h.read(19)
			if err != nil {
				return ended(err)
			}
			read = 19
			page.w, page.h = int64(binary.BigEndian.Uint32(d)), int64(binary.BigEndian.Uint32(d[4:]))
			page.stripe = int64(binary.BigEndian.Uint16(d[17:]) & 0x7fff)
			seenPage = true
			if err := check("JBIG2 page information", page.w, jbig2Height(page.h, page.stripe)); err != nil {
				return err
			}
		case typ == jbig2EndOfStripe && seenPage:
			d, err := h.read(4)
			if err != nil {
				return ended(err)
			}
			read = 4
			if row := int64(binary.BigEndian.Uint32(d)); page.h == 0xffffffff {
				if err := check("JBIG2 end of stripe", page.w, row+1); err != nil {
					return err
				}
			}
		case jbig2Region(typ):
			d, err := h.read(8)
			if err != nil {
				return ended(err)
			}
			read = 8
			if err := check("JBIG2 region segment", int64(binary.BigEndian.Uint32(d)), int64(binary.BigEndian.Uint32(d[4:]))); err != nil {
				return err
			}
		}
		if length == 0xffffffff {
			// An immediate generic region of unknown length: its end is
			// found by scanning its data, which this walk does not do.
			return nil
		}
		if err := h.skip(length - read); err != nil {
			return beyond(err)
		}
	}
}

// jbig2Header reads a segment header (T.88 7.2) and returns the segment's
// type and data length; type 0xff for a header no decoder accepts.
func jbig2Header(h *hdrReader) (typ byte, length int64, err error) {
	b, err := h.read(6)
	if err != nil {
		return 0, 0, err
	}
	segNr := binary.BigEndian.Uint32(b)
	typ, bigPage := b[4]&0x3f, b[4]&0x40 != 0
	refs := int64(b[5] >> 5)
	if refs == 7 {
		rb, err := h.read(3)
		if err != nil {
			return 0, 0, err
		}
		refs = int64(binary.BigEndian.Uint32([]byte{b[5], rb[0], rb[1], rb[2]}) & 0x1fffffff)
		if err := h.skip((refs + 8) / 8); err != nil { // retention flags
			return 0, 0, err
		}
	} else if refs > 4 {
		return 0xff, 0, nil
	}
	refSize := int64(4)
	switch {
	case segNr <= 256:
		refSize = 1
	case segNr <= 65536:
		refSize = 2
	}
	skip := refs*refSize + 1
	if bigPage {
		skip += 3
	}
	if err := h.skip(skip); err != nil {
		return 0, 0, err
	}
	lb, err := h.read(4)
	if err != nil {
		return 0, 0, err
	}
	return typ, int64(binary.BigEndian.Uint32(lb)), nil
}

// jbig2Height is a page's height as first allocated: an unknown height
// (0xffffffff, a striped page) is one stripe until its end-of-stripe
// segments say more.
func jbig2Height(h, stripe int64) int64 {
	if h == 0xffffffff {
		return stripe
	}
	return h
}
