// Package manifest reads a refbatch manifest: the CSV file that lists the
// referrals of one batch, one row per referral.
//
// # Format
//
// The manifest is CSV as in RFC 4180, encoded in UTF-8 (a leading byte order
// mark is accepted and dropped), with LF, CRLF or CR line ends (a CR
// outside quotes that no LF follows ends a line, as old Mac OS wrote them;
// the ends may be mixed). Columns are
// separated by commas, semicolons or tabs: the separator is the one that
// splits the header line into the required columns (Reader.Comma says
// which). The first record is the header. Header names are matched
// ignoring ASCII case, white space, '_', '-' and '.' ("Source ID" names
// source_id); columns may come in any order and unknown columns are
// ignored.
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
// are ignored. Blank lines are skipped, and so are records whose every
// field is empty (the ",,,,," rows a spreadsheet leaves below the data):
// they are not rows, and Reader.Blank counts them.
//
// # Errors
//
// Problems come in two kinds. A *FileError means the manifest as a whole
// cannot be trusted — no header, a required column missing, a known column named
// twice, invalid UTF-8, broken CSV quoting — and the run must stop before any
// work: Scan reads the whole file to find one before the run starts, and
// its Hint says how to fix it. A *RowError rejects one row only; it travels inside the Row that
// Reader.Next returns, with a stable snake_case Reason (declared in package
// report/outcome) that ends up in the report. When a row has several
// problems the first of these wins: missing_field (required columns in the
// order of the table above), bad_date, bad_consent, bad_sha256, no_consent.
//
// Error messages name lines and columns (by the header's names, never by
// field number) but never echo a cell's value: a shifted column can put a
// participant ID into any field. A header that names no required column
// may be a data row, so its fields are shown only when they read as names.
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
// csv.ErrBareQuote and friends, or the file system's). Hint, when set, says
// in one sentence how to fix the file; Error leaves it out.
type FileError struct {
	Line int
	Msg  string
	Hint string
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

// Reader reads manifest rows one at a time. It is not safe for concurrent use.
type Reader struct {
	csv *csv.Reader
	cap *recordCap
	// last is the line of the last record read, for errors about the next.
	last int
	// header is the header's names as written, once read; nil before.
	header []string
	// idx maps each known column to its field index in a record, or -1 when
	// the header does not name it (only sha256 may be absent).
	idx [numColumns]int
	// blank counts the records skipped for having no value at all.
	blank int
	// err is sticky: once the file is known to be broken, every later Next
	// reports the same problem rather than guessing at what follows.
	err error
	// start is where the last record read starts, in bytes after the byte
	// order mark (Index).
	start int64
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// utf8Hint is the hint of an encoding error. Excel's plain "CSV" type
// writes Windows-1252; its "CSV UTF-8" type is what the manifest needs.
const utf8Hint = `the manifest is not UTF-8 (Windows-1252, as Excel's plain "CSV" saves it?): save it as "CSV UTF-8 (Comma delimited)" in Excel, or with the UTF-8 encoding in another program`

// NewReader sniffs the column separator, then reads and checks the header.
// It returns a *FileError when the header is absent, lacks a required
// column, names a known column twice, is not valid UTF-8 or is not valid
// CSV; other errors come from r.
func NewReader(r io.Reader) (*Reader, error) {
	br := bufio.NewReaderSize(newLineEnds(r), sniffWindow)
	head, err := br.Peek(len(utf8BOM))
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("reading manifest: %w", err)
	}
	if bytes.HasPrefix(head, utf8BOM) {
		if _, err := br.Discard(len(utf8BOM)); err != nil {
			return nil, fmt.Errorf("reading manifest: %w", err)
		}
	} else if bytes.HasPrefix(head, []byte{0xFF, 0xFE}) || bytes.HasPrefix(head, []byte{0xFE, 0xFF}) {
		return nil, &FileError{Line: 1, Msg: "invalid UTF-8: the manifest looks like UTF-16", Hint: utf8Hint}
	}
	// A read error here is met again, and reported, where the records are
	// read; the separator is sniffed from what came before it.
	head, _ = br.Peek(sniffWindow)

	rc := &recordCap{r: br, max: MaxRecordBytes}
	cr := csv.NewReader(rc)
	cr.Comma = sniffSeparator(head)
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = false
	cr.ReuseRecord = true
	m := &Reader{csv: cr, cap: rc}

	header, err := m.read()
	if err == io.EOF {
		return nil, &FileError{Line: 1, Msg: "no header row: the manifest is empty", Hint: headerHint}
	}
	if err != nil {
		return nil, err
	}
	line, _ := cr.FieldPos(0)
	if err := m.mapHeader(header, line); err != nil {
		return nil, err
	}
	m.header = append([]string(nil), header...)
	return m, nil
}

// Comma returns the column separator the header showed: one of Separators.
func (m *Reader) Comma() rune { return m.csv.Comma }

// Blank returns how many records Next has skipped so far because every
// field was empty.
func (m *Reader) Blank() int { return m.blank }

// read returns the next record after checking its encoding, translating
// CSV errors into *FileError. Errors are sticky.
func (m *Reader) read() ([]string, error) {
	if m.err != nil {
		return nil, m.err
	}
	m.cap.n = 0
	m.start = m.csv.InputOffset()
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
		where := m.fieldName(i)
		if m.header == nil {
			where = "the header"
		}
		m.err = &FileError{Line: line, Msg: "invalid UTF-8 in " + where, Hint: utf8Hint}
		return nil, m.err
	}
	return rec, nil
}

// quoteHint is the hint of a CSV syntax error.
const quoteHint = `put a field that holds the separator, a line break or a " between double quotes, and double each " inside it ("6"" ruler.pdf")`

// translate turns an encoding/csv error into a *FileError, and wraps
// anything else (an I/O error from the underlying reader) with context.
func (m *Reader) translate(err error) error {
	if errors.Is(err, errRecordTooLong) {
		return &FileError{Line: m.last + 1, Msg: fmt.Sprintf("the record after line %d is longer than %d bytes (a quote never closed?)", m.last, MaxRecordBytes), Hint: quoteHint}
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
	return &FileError{Line: pe.Line, Msg: msg, Err: pe.Err, Hint: quoteHint}
}

// Next returns the next row, skipping records with no value at all.
// Row-level problems come back in Row.Err with a nil error. At the end it
// returns io.EOF; a broken file gives a *FileError, and a failing
// underlying reader a wrapped I/O error. After any error other than
// io.EOF, every later call returns the same error.
func (m *Reader) Next() (Row, error) {
	rec, err := m.read()
	for err == nil && blank(rec) {
		m.blank++
		rec, err = m.read()
	}
	if err != nil {
		return Row{}, err
	}
	line, _ := m.csv.FieldPos(0)
	return m.row(rec, line), nil
}

// row makes the Row of record rec, which starts at line.
func (m *Reader) row(rec []string, line int) Row {
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
	return row
}

// blank reports whether every field of rec is empty or white space.
func blank(rec []string) bool {
	for _, f := range rec {
		if strings.TrimSpace(f) != "" {
			return false
		}
	}
	return true
}
