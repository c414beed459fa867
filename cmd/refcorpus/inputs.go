package main

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/png"
)

// elfExecutable returns a minimal x86-64 Linux executable that exits with
// status 0: an ELF header, one program header and three instructions. It
// stands for the program someone saved under a .pdf name.
func elfExecutable() []byte {
	const (
		base    = 0x400000
		ehSize  = 64
		phSize  = 56
		codeOff = ehSize + phSize
	)
	code := []byte{
		0xb8, 0x3c, 0x00, 0x00, 0x00, // mov eax, 60 (exit)
		0x31, 0xff, // xor edi, edi
		0x0f, 0x05, // syscall
	}
	size := uint64(codeOff + len(code))
	var b bytes.Buffer
	le := binary.LittleEndian
	b.Write([]byte{0x7f, 'E', 'L', 'F', 2, 1, 1, 0}) // 64-bit, little-endian, version 1, System V
	b.Write(make([]byte, 8))
	for _, v := range []any{
		uint16(2), uint16(0x3e), uint32(1), // executable, x86-64, version
		uint64(base + codeOff), uint64(ehSize), uint64(0), // entry, program headers, no section headers
		uint32(0), uint16(ehSize), uint16(phSize), uint16(1), uint16(0), uint16(0), uint16(0),
		// The program header: one loadable, readable and executable segment.
		uint32(1), uint32(5), uint64(0), uint64(base), uint64(base), size, size, uint64(0x1000),
	} {
		_ = binary.Write(&b, le, v) // writes to a bytes.Buffer cannot fail
	}
	b.Write(code)
	return b.Bytes()
}

// pngBytes encodes a page image as PNG, the photo of a form someone
// renamed to .pdf.
func pngBytes(img image.Image) ([]byte, error) {
	var b bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(&b, img); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
