package manifest

import (
	"bufio"
	"errors"
	"io"
)

// This file holds the readers under the CSV parser: lineEnds, which reads
// a lone CR as a line end, and recordCap, which bounds a record.

// lineEnds is the reader under the CSV parser that makes a lone CR (old
// Mac OS line ends, or a file whose line ends are mixed) a line end as LF
// and CRLF are: encoding/csv ends a record at LF only and keeps a lone CR
// in the field, so a CR-only manifest would read as a header alone.
//
// It replaces each CR that is outside a quoted field and not followed by
// LF with an LF, byte for byte: offsets do not move, so the offsets an
// Index records are the file's own, and a row read again from its offset
// reads through the same translation; and lines are counted where a text
// editor shows them. A CR inside a quoted field is the field's and is
// kept. Quotes are tracked as RFC 4180 writes them (a doubled "" toggles
// twice); a stray quote is a CSV syntax error the parser reports anyway.
// A reader made at a record's start (Index.Row) starts outside quotes,
// as the record does.
type lineEnds struct {
	br     *bufio.Reader
	quoted bool
}

func newLineEnds(r io.Reader) *lineEnds {
	return &lineEnds{br: bufio.NewReader(r)}
}

func (l *lineEnds) Read(p []byte) (int, error) {
	n, err := l.br.Read(p)
	for i := 0; i < n; i++ {
		switch p[i] {
		case '"':
			l.quoted = !l.quoted
		case '\r':
			if l.quoted {
				continue
			}
			if i+1 < n {
				if p[i+1] != '\n' {
					p[i] = '\n'
				}
				continue
			}
			// The CR ends what was read: look at the byte after it. An
			// error here (the end of the file) means no LF follows.
			if next, perr := l.br.Peek(1); perr != nil || next[0] != '\n' {
				p[i] = '\n'
			}
		}
	}
	return n, err
}

// MaxRecordBytes caps one record of the manifest: a referral's row is a
// few hundred bytes, and a line of gigabytes (or a quote never closed
// across a huge file) must not be read into memory whole.
const MaxRecordBytes = 1 << 20

// errRecordTooLong is returned by recordCap once a record passes
// MaxRecordBytes.
var errRecordTooLong = errors.New("record too long")

// recordCap is the reader under the CSV parser: it stops a record at
// max bytes (give or take the parser's 4 KiB read-ahead). The Reader resets
// it before each record.
type recordCap struct {
	r      io.Reader
	n, max int64
}

func (c *recordCap) Read(p []byte) (int, error) {
	if c.n >= c.max {
		return 0, errRecordTooLong
	}
	if left := c.max - c.n; int64(len(p)) > left {
		p = p[:left]
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
