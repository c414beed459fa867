package main

import (
	"image"
	"strconv"
)

// This file is a CCITT Group 4 (ITU-T T.6) encoder, for the 1-bit pages
// document scanners store with /CCITTFaxDecode. golang.org/x/image/ccitt
// only decodes; the tests decode every page this writes with it.

// The code tables of ITU-T T.4, tables 1 to 3, as bit strings.
var (
	// whiteTerm and blackTerm are the terminating codes for runs 0 to 63.
	whiteTerm = bitCodes(
		"00110101", "000111", "0111", "1000", "1011", "1100", "1110", "1111",
		"10011", "10100", "00111", "01000", "001000", "000011", "110100", "110101",
		"101010", "101011", "0100111", "0001100", "0001000", "0010111", "0000011", "0000100",
		"0101000", "0101011", "0010011", "0100100", "0011000", "00000010", "00000011", "00011010",
		"00011011", "00010010", "00010011", "00010100", "00010101", "00010110", "00010111", "00101000",
		"00101001", "00101010", "00101011", "00101100", "00101101", "00000100", "00000101", "00001010",
		"00001011", "01010010", "01010011", "01010100", "01010101", "00100100", "00100101", "01011000",
		"01011001", "01011010", "01011011", "01001010", "01001011", "00110010", "00110011", "00110100",
	)
	blackTerm = bitCodes(
		"0000110111", "010", "11", "10", "011", "0011", "0010", "00011",
		"000101", "000100", "0000100", "0000101", "0000111", "00000100", "00000111", "000011000",
		"0000010111", "0000011000", "0000001000", "00001100111", "00001101000", "00001101100", "00000110111", "00000101000",
		"00000010111", "00000011000", "000011001010", "000011001011", "000011001100", "000011001101", "000001101000", "000001101001",
		"000001101010", "000001101011", "000011010010", "000011010011", "000011010100", "000011010101", "000011010110", "000011010111",
		"000001101100", "000001101101", "000011011010", "000011011011", "000001010100", "000001010101", "000001010110", "000001010111",
		"000001100100", "000001100101", "000001010010", "000001010011", "000000100100", "000000110111", "000000111000", "000000100111",
		"000000101000", "000001011000", "000001011001", "000000101011", "000000101100", "000001011010", "000001100110", "000001100111",
	)
	// whiteMakeup and blackMakeup are the make-up codes for 64 to 1728,
	// index i for a run of 64*(i+1).
	whiteMakeup = bitCodes(
		"11011", "10010", "010111", "0110111", "00110110", "00110111", "01100100", "01100101",
		"01101000", "01100111", "011001100", "011001101", "011010010", "011010011", "011010100", "011010101",
		"011010110", "011010111", "011011000", "011011001", "011011010", "011011011", "010011000", "010011001",
		"010011010", "011000", "010011011",
	)
	blackMakeup = bitCodes(
		"0000001111", "000011001000", "000011001001", "000001011011", "000000110011", "000000110100", "000000110101", "0000001101100",
		"0000001101101", "0000001001010", "0000001001011", "0000001001100", "0000001001101", "0000001110010", "0000001110011", "0000001110100",
		"0000001110101", "0000001110110", "0000001110111", "0000001010010", "0000001010011", "0000001010100", "0000001010101", "0000001011010",
		"0000001011011", "0000001100100", "0000001100101",
	)
	// extMakeup are the make-up codes for 1792 to 2560, shared by both
	// colours.
	extMakeup = bitCodes(
		"00000001000", "00000001100", "00000001101", "000000010010", "000000010011", "000000010100", "000000010101",
		"000000010110", "000000010111", "000000011100", "000000011101", "000000011110", "000000011111",
	)
	// vertical holds the codes of VL3, VL2, VL1, V0, VR1, VR2 and VR3: index
	// a1-b1+3.
	vertical   = bitCodes("0000010", "000010", "010", "1", "011", "000011", "0000011")
	passCode   = bitCodes("0001")[0]
	horizCode  = bitCodes("001")[0]
	endOfBlock = bitCodes("000000000001")[0] // EOL; two of them end a Group 4 block
)

// bitCode is a code of n bits, right-aligned in v.
type bitCode struct {
	v uint32
	n uint
}

func bitCodes(s ...string) []bitCode {
	out := make([]bitCode, len(s))
	for i, c := range s {
		v, err := strconv.ParseUint(c, 2, 32)
		if err != nil {
			panic(err)
		}
		out[i] = bitCode{uint32(v), uint(len(c))}
	}
	return out
}

// bitWriter packs codes most significant bit first.
type bitWriter struct {
	out  []byte
	acc  uint64
	nacc uint
}

func (w *bitWriter) put(c bitCode) {
	w.acc = w.acc<<c.n | uint64(c.v)
	w.nacc += c.n
	for w.nacc >= 8 {
		w.nacc -= 8
		w.out = append(w.out, byte(w.acc>>w.nacc))
	}
}

// bytes flushes the last bits, padded with zeros to a whole byte.
func (w *bitWriter) bytes() []byte {
	if w.nacc > 0 {
		w.out = append(w.out, byte(w.acc<<(8-w.nacc)))
		w.nacc = 0
	}
	return w.out
}

// putRun writes a run of n pixels of one colour: make-up codes for the
// multiples of 64, then a terminating code.
func (w *bitWriter) putRun(n int, black bool) {
	term, makeup := whiteTerm, whiteMakeup
	if black {
		term, makeup = blackTerm, blackMakeup
	}
	for n >= 2560 {
		w.put(extMakeup[len(extMakeup)-1])
		n -= 2560
	}
	if n >= 64 {
		m := n/64 - 1
		if m < len(makeup) {
			w.put(makeup[m])
		} else {
			w.put(extMakeup[m-len(makeup)])
		}
		n %= 64
	}
	w.put(term[n])
}

// encodeG4 encodes img (pixels under 128 are black) in Group 4 with no
// byte alignment and an end-of-block, which is what /CCITTFaxDecode with
// /K -1 and default parameters reads.
func encodeG4(img *image.Gray) []byte {
	b := img.Bounds()
	w := b.Dx()
	// Lines hold 1 for black. The first reference line is imaginary white.
	ref := make([]byte, w)
	cur := make([]byte, w)
	var bw bitWriter
	for y := b.Min.Y; y < b.Max.Y; y++ {
		row := img.Pix[img.PixOffset(b.Min.X, y):]
		for x := range w {
			cur[x] = 0
			if row[x] < 128 {
				cur[x] = 1
			}
		}
		encodeLine(&bw, cur, ref)
		ref, cur = cur, ref
	}
	bw.put(endOfBlock)
	bw.put(endOfBlock)
	return bw.bytes()
}

// encodeLine codes one line against the line above it, choosing pass,
// vertical or horizontal mode at each changing element as T.6 prescribes
// (the same decisions as libtiff's Fax3Encode2DRow).
func encodeLine(bw *bitWriter, cur, ref []byte) {
	w := len(cur)
	px := func(line []byte, i int) byte {
		if i >= w {
			return 0
		}
		return line[i]
	}
	// next returns the first position from i whose colour is not c, or w.
	next := func(line []byte, i int, c byte) int {
		for i < w && line[i] == c {
			i++
		}
		return min(i, w)
	}
	a0 := 0
	a1 := 0
	if cur[0] == 0 {
		a1 = next(cur, 0, 0)
	}
	b1 := 0
	if ref[0] == 0 {
		b1 = next(ref, 0, 0)
	}
	for {
		b2 := next(ref, b1, px(ref, b1))
		switch d := a1 - b1; {
		case b2 < a1:
			bw.put(passCode)
			a0 = b2
		case d >= -3 && d <= 3:
			bw.put(vertical[d+3])
			a0 = a1
		default:
			a2 := next(cur, a1, px(cur, a1))
			bw.put(horizCode)
			// At the line's start a0 is the imaginary white pixel before it.
			black := a0+a1 != 0 && cur[a0] == 1
			bw.putRun(a1-a0, black)
			bw.putRun(a2-a1, !black)
			a0 = a2
		}
		if a0 >= w {
			return
		}
		c := cur[a0]
		a1 = next(cur, a0, c)
		b1 = next(ref, a0, 1-c)
		b1 = next(ref, b1, c)
	}
}
