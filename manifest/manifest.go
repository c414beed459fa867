// Package manifest reads a refbatch manifest: the CSV file that lists the
// referrals of one batch, one row per referral.
//
// # Format
//
// The manifest is CSV as in RFC 4180, encoded in UTF-8 (a leading byte order
// mark is accepted and dropped), with LF or CRLF line ends. The first record
// is the header. Header names are matched case-insensitively after trimming
// spaces; columns may come in any order and unknown columns are ignored.
//
//	column          required  value
//	source_id       yes       the referral's identity
//	participant_id  yes       expected to appear in the OCR text
//	referral_date   yes       YYYY-MM-DD, a real calendar date
//	consent         yes       yes/no, true/false, y/n, 1/0 (any case)
//	path            yes       the PDF, as written (not resolved here)
//	sha256          no        64 hex digits, any case
//
// Values are trimmed of surrounding white space. A record with fewer fields
// than the header is read as if the missing fields were empty; extra fields
// are ignored. Blank lines are skipped.
//
// # Errors
//
// Problems come in two kinds. A *FileError means the manifest as a whole
// cannot be trusted — no header, a required column missing, a known column named
// twice, invalid UTF-8, broken CSV quoting — and the run must stop before any
// work. A *RowError rejects one row only; it travels inside the Row that
// Reader.Next returns, with a stable snake_case Reason (declared in package
// report/outcome) that ends up in the report. When a row has several
// problems the first of these wins: missing_field (required columns in the
// order of the table above), bad_date, bad_consent, bad_sha256, no_consent.
//
// Error messages name lines and columns but never echo a cell's value: a
// shifted column can put a participant ID into any field.
//
// # Use
//
//	r, err := manifest.NewReader(f)
//	if err != nil {
//		return err // *FileError or an I/O error
//	}
//	for {
//		row, err := r.Next()
//		if err == io.EOF {
//			break
//		}
//		if err != nil {
//			return err // *FileError or an I/O error
//		}
//		if row.Err != nil {
//			// rejected: row.Err.Reason
//			continue
//		}
//		// admit row
//	}
//
// The Reader streams: it holds one record at a time, whatever the size of
// the manifest.
package manifest

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/refbatch/refbatch/report/outcome"
)

// Column names as they appear (case-insensitively) in the header.
const (
	ColSourceID      = "source_id"
	ColParticipantID = "participant_id"
	ColReferralDate  = "referral_date"
	ColConsent       = "consent"
	ColPath          = "path"
	ColSHA256        = "sha256"
)

// Row is one manifest record.
type Row struct {
	Line          int       // 1-based line where the record starts in the file (header is line 1)
	SourceID      string    // trimmed
	ParticipantID string    // trimmed; never log it
	ReferralDate  string    // YYYY-MM-DD as given (validated as a real date)
	Consent       bool      // meaningful only when the consent cell parsed
	Path          string    // as written in the manifest (not resolved)
	SHA256        string    // lowercase hex, "" when absent/empty or invalid
	Err           *RowError // non-nil: the row is rejected with Err.Reason; other fields may be partial
	// Raw is what the row says in each known column, trimmed, in the
	// order of the column table above ("" when absent): the row as
	// written, before any check. A rerun compares it to see whether a
	// rejected row was edited. It holds the participant ID: never log it.
	Raw []string
}

// RowError rejects one row only. Reason is one of outcome's manifest
// reasons (missing_field, bad_date, bad_consent, bad_sha256, no_consent);
// Field is the column at fault; Detail says what was wrong without quoting
// the value.
type RowError struct {
	Line   int
	Field  string
	Reason outcome.Reason
	Detail string
}

// Error names the line, the column and the reason. It never includes the
// cell's value.
func (e *RowError) Error() string {
	msg := fmt.Sprintf("manifest line %d: column %s: %s", e.Line, e.Field, e.Reason)
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

// FileError stops the whole run (exit 2): no header, missing required
// column, duplicate column, invalid UTF-8 or a CSV syntax error. Line is the
// 1-based line of the problem, 0 when the file itself cannot be read; Err,
// when set, is the underlying error (encoding/csv's, for errors.Is with
// csv.ErrBareQuote and friends, or the file system's).
type FileError struct {
	Line int
	Msg  string
	Err  error
}

// Error names the line and the problem.
func (e *FileError) Error() string {
	switch {
	case e.Line > 0:
		return fmt.Sprintf("manifest line %d: %s", e.Line, e.Msg)
	case e.Err != nil:
		return fmt.Sprintf("manifest: %s: %v", e.Msg, e.Err)
	default:
		return "manifest: " + e.Msg
	}
}

// Unwrap returns the underlying encoding/csv error, if any.
func (e *FileError) Unwrap() error { return e.Err }

// column indexes the known columns; the order of the required ones is the
// order in which missing_field is reported.
type column int

const (
	colSourceID column = iota
	colParticipantID
	colReferralDate
	colConsent
	colPath
	colSHA256
	numColumns
)

var columnNames = [numColumns]string{
	colSourceID:      ColSourceID,
	colParticipantID: ColParticipantID,
	colReferralDate:  ColReferralDate,
	colConsent:       ColConsent,
	colPath:          ColPath,
	colSHA256:        ColSHA256,
}

// numRequired counts the required columns, which come first in column order.
const numRequired = int(colSHA256)

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

// Reader reads manifest rows one at a time. It is not safe for concurrent use.
type Reader struct {
	csv *csv.Reader
	cap *recordCap
	// last is the line of the last record read, for errors about the next.
	last int
	// idx maps each known column to its field index in a record, or -1 when
	// the header does not name it (only sha256 may be absent).
	idx [numColumns]int
	// err is sticky: once the file is known to be broken, every later Next
	// reports the same problem rather than guessing at what follows.
	err error
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// NewReader reads and checks the header. It returns a *FileError when the
// header is absent, lacks a required column, names a known column twice, is
// not valid UTF-8 or is not valid CSV; other errors come from r.
func NewReader(r io.Reader) (*Reader, error) {
	br := bufio.NewReader(r)
	head, err := br.Peek(len(utf8BOM))
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("reading manifest: %w", err)
	}
	if bytes.HasPrefix(head, utf8BOM) {
		if _, err := br.Discard(len(utf8BOM)); err != nil {
			return nil, fmt.Errorf("reading manifest: %w", err)
		}
	} else if bytes.HasPrefix(head, []byte{0xFF, 0xFE}) || bytes.HasPrefix(head, []byte{0xFE, 0xFF}) {
		return nil, &FileError{Line: 1, Msg: "invalid UTF-8: the manifest looks like UTF-16; save it as UTF-8"}
	}

	rc := &recordCap{r: br, max: MaxRecordBytes}
	cr := csv.NewReader(rc)
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = false
	cr.ReuseRecord = true
	m := &Reader{csv: cr, cap: rc}

	header, err := m.read()
	if err == io.EOF {
		return nil, &FileError{Line: 1, Msg: "no header row: the manifest is empty"}
	}
	if err != nil {
		return nil, err
	}
	line, _ := cr.FieldPos(0)
	if err := m.mapHeader(header, line); err != nil {
		return nil, err
	}
	return m, nil
}

// mapHeader fills m.idx from the header record found at line.
func (m *Reader) mapHeader(header []string, line int) error {
	for i := range m.idx {
		m.idx[i] = -1
	}
	for i, h := range header {
		name := asciiLower(strings.TrimSpace(h))
		for c, known := range columnNames {
			if name != known {
				continue
			}
			if prev := m.idx[c]; prev >= 0 {
				return &FileError{Line: line, Msg: fmt.Sprintf("duplicate column %q (fields %d and %d)", known, prev+1, i+1)}
			}
			m.idx[c] = i
		}
	}
	var missing []string
	for c := range numRequired {
		if m.idx[c] < 0 {
			missing = append(missing, columnNames[c])
		}
	}
	switch {
	case len(missing) == numRequired:
		// A data row where the header should be names none of the columns;
		// say so rather than listing five "missing" columns.
		return &FileError{Line: line, Msg: "no header row: the first record names none of the required columns " + strings.Join(columnNames[:numRequired], ", ")}
	case len(missing) == 1:
		return &FileError{Line: line, Msg: fmt.Sprintf("missing required column %q", missing[0])}
	case len(missing) > 1:
		return &FileError{Line: line, Msg: "missing required columns " + strings.Join(missing, ", ")}
	}
	return nil
}

// read returns the next record after checking its encoding, translating
// CSV errors into *FileError. Errors are sticky.
func (m *Reader) read() ([]string, error) {
	if m.err != nil {
		return nil, m.err
	}
	m.cap.n = 0
	rec, err := m.csv.Read()
	if err == io.EOF {
		return nil, io.EOF
	}
	if err != nil {
		m.err = m.translate(err)
		return nil, m.err
	}
	m.last, _ = m.csv.FieldPos(0)
	for i, f := range rec {
		if utf8.ValidString(f) {
			continue
		}
		line, _ := m.csv.FieldPos(i)
		// A quoted field may span lines; point at the line of the bad byte.
		bad := validPrefix(f)
		line += strings.Count(f[:bad], "\n")
		m.err = &FileError{Line: line, Msg: fmt.Sprintf("invalid UTF-8 in field %d", i+1)}
		return nil, m.err
	}
	return rec, nil
}

// translate turns an encoding/csv error into a *FileError, and wraps
// anything else (an I/O error from the underlying reader) with context.
func (m *Reader) translate(err error) error {
	if errors.Is(err, errRecordTooLong) {
		return &FileError{Line: m.last + 1, Msg: fmt.Sprintf("the record after line %d is longer than %d bytes (a quote never closed?)", m.last, MaxRecordBytes)}
	}
	var pe *csv.ParseError
	if !errors.As(err, &pe) {
		return fmt.Errorf("reading manifest: %w", err)
	}
	var msg string
	switch {
	case errors.Is(pe.Err, csv.ErrBareQuote):
		msg = fmt.Sprintf("CSV syntax: bare \" in an unquoted field at byte %d; quote the field and double the \"", pe.Column)
	case errors.Is(pe.Err, csv.ErrQuote):
		msg = fmt.Sprintf("CSV syntax: extraneous or missing \" in a quoted field at byte %d", pe.Column)
	default:
		msg = fmt.Sprintf("CSV syntax: %v at byte %d", pe.Err, pe.Column)
	}
	if pe.StartLine != pe.Line {
		msg += fmt.Sprintf(" (record starts at line %d)", pe.StartLine)
	}
	return &FileError{Line: pe.Line, Msg: msg, Err: pe.Err}
}

// Next returns the next row. Row-level problems come back in Row.Err with a
// nil error. At the end it returns io.EOF; a broken file gives a *FileError,
// and a failing underlying reader a wrapped I/O error. After any error other
// than io.EOF, every later call returns the same error.
func (m *Reader) Next() (Row, error) {
	rec, err := m.read()
	if err != nil {
		return Row{}, err
	}
	line, _ := m.csv.FieldPos(0)
	var vals [numColumns]string
	for c, i := range m.idx {
		if i >= 0 && i < len(rec) {
			vals[c] = strings.TrimSpace(rec[i])
		}
	}
	row := Row{
		Line:          line,
		SourceID:      vals[colSourceID],
		ParticipantID: vals[colParticipantID],
		ReferralDate:  vals[colReferralDate],
		Path:          vals[colPath],
		Raw:           append([]string(nil), vals[:]...),
	}
	row.Err = check(&row, &vals)
	if row.Err != nil {
		row.Err.Line = line
	}
	return row, nil
}
