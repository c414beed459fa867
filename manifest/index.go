package manifest

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"
)

// Index is where each row of a manifest file starts, so that one row can
// be read again (Row) without reading the file through or holding it: a
// process that did not stream the manifest reads the rows of the
// documents it works on. It holds a line number and an offset per row,
// never a row's values.
type Index struct {
	path   string
	bom    int64 // bytes of the byte order mark before the records
	comma  rune
	idx    [numColumns]int
	header []string
	lines  []int   // the rows' lines, ascending
	starts []int64 // where each row's record starts, after the mark
	// size and mod are the file's when it was indexed: Row refuses a
	// file that changed since.
	size int64
	mod  time.Time
}

// ErrChanged means the manifest file changed since it was indexed: index
// it again.
var ErrChanged = errors.New("the manifest changed since it was indexed")

// NewIndex reads the manifest at path through and indexes its rows. It
// returns the errors Reader.Next would, a *FileError for a broken file.
func NewIndex(path string) (*Index, error) {
	f, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, &FileError{Msg: "cannot read the manifest", Err: err}
	}
	head := make([]byte, len(utf8BOM))
	n, _ := io.ReadFull(f, head)
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("reading manifest: %w", err)
	}
	r, err := NewReader(f)
	if err != nil {
		return nil, err
	}
	x := &Index{path: path, comma: r.Comma(), idx: r.idx, header: r.header, size: fi.Size(), mod: fi.ModTime()}
	if bytes.Equal(head[:n], utf8BOM) {
		x.bom = int64(len(utf8BOM))
	}
	for {
		row, err := r.Next()
		if errors.Is(err, io.EOF) {
			return x, nil
		}
		if err != nil {
			return nil, err
		}
		x.lines = append(x.lines, row.Line)
		x.starts = append(x.starts, r.start)
	}
}

// Path is the manifest the index is of.
func (x *Index) Path() string { return x.path }

// Row reads the row at line as Reader.Next returned it; ok is false when
// no row starts at that line. It returns ErrChanged when the file's size
// or modification time is not what they were when it was indexed.
func (x *Index) Row(line int) (row Row, ok bool, err error) {
	i := sort.SearchInts(x.lines, line)
	if i == len(x.lines) || x.lines[i] != line {
		return Row{}, false, nil
	}
	f, err := openRegular(x.path)
	if err != nil {
		return Row{}, false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Row{}, false, &FileError{Msg: "cannot read the manifest", Err: err}
	}
	if fi.Size() != x.size || !fi.ModTime().Equal(x.mod) {
		return Row{}, false, fmt.Errorf("%s: %w", x.path, ErrChanged)
	}
	if _, err := f.Seek(x.bom+x.starts[i], io.SeekStart); err != nil {
		return Row{}, false, fmt.Errorf("reading manifest: %w", err)
	}
	row, err = readRowAt(f, x.comma, x.idx, x.header, line)
	if errors.Is(err, io.EOF) {
		err = fmt.Errorf("%s: %w", x.path, ErrChanged)
	}
	return row, err == nil, err
}

// readRowAt reads the record that r starts with, read as a Reader with
// that separator, columns and header reads it, as the row at line.
func readRowAt(r io.Reader, comma rune, idx [numColumns]int, header []string, line int) (Row, error) {
	rc := &recordCap{r: newLineEnds(r), max: MaxRecordBytes}
	cr := csv.NewReader(rc)
	cr.Comma, cr.FieldsPerRecord = comma, -1
	m := &Reader{csv: cr, cap: rc, idx: idx, header: header}
	rec, err := m.read()
	if err != nil {
		return Row{}, err
	}
	return m.row(rec, line), nil
}
