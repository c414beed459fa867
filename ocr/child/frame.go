package child

import (
	"bytes"
	"encoding/binary"
	"encoding/gob"
	"fmt"
	"io"
)

// frameError is a frame the reader refuses: over the size cap, or a
// payload that does not decode. The stream is unusable after it.
type frameError struct{ msg string }

func (e *frameError) Error() string { return e.msg }

// writeFrame encodes v with a gob encoder of its own and writes it as one
// frame. A fresh encoder per frame resends the type description (a few
// hundred bytes) but keeps every frame self-contained, so a reader can
// refuse one by its length alone.
func writeFrame(w io.Writer, v any) error {
	var buf bytes.Buffer
	buf.Write(make([]byte, 8))
	if err := gob.NewEncoder(&buf).Encode(v); err != nil {
		return fmt.Errorf("encoding message: %w", err)
	}
	b := buf.Bytes()
	binary.BigEndian.PutUint64(b[:8], uint64(len(b)-8))
	_, err := w.Write(b)
	return err
}

// readFrame reads one frame of at most maxLen payload bytes and decodes it
// into v (a pointer; nil discards it). io.EOF means the stream ended
// cleanly between frames; a short frame is io.ErrUnexpectedEOF.
func readFrame(r io.Reader, maxLen int64, v any) error {
	var head [8]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return err
	}
	n := binary.BigEndian.Uint64(head[:])
	if n > uint64(maxLen) {
		return &frameError{fmt.Sprintf("message of %d bytes is over the %d-byte cap", n, maxLen)}
	}
	payload := make([]byte, n)
	if _, err := io.ReadFull(r, payload); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	if v == nil {
		return nil
	}
	if err := gob.NewDecoder(bytes.NewReader(payload)).Decode(v); err != nil {
		return &frameError{fmt.Sprintf("message does not decode: %v", err)}
	}
	return nil
}
