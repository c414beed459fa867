package manifest

import (
	"errors"
	"fmt"
	"io"
)

// Stats is what Scan learned of a whole manifest.
type Stats struct {
	Rows  int  // records read as rows, rejected ones included
	Blank int  // records skipped because every field was empty
	Comma rune // the column separator: one of Separators
}

// Scan reads the whole manifest from r as a Reader would and counts its
// rows, without keeping any. It returns the first *FileError (or I/O
// error) anywhere in the file, so that a run checks the file's structure
// before it does any work; row-level problems are not errors here.
func Scan(r io.Reader) (Stats, error) {
	mr, err := NewReader(r)
	if err != nil {
		return Stats{}, err
	}
	st := Stats{Comma: mr.Comma()}
	for {
		_, err := mr.Next()
		if errors.Is(err, io.EOF) {
			st.Blank = mr.Blank()
			return st, nil
		}
		if err != nil {
			return Stats{}, err
		}
		st.Rows++
	}
}

// ScanFile is Scan on the file at path; a file that cannot be opened is a
// *FileError with Line 0.
func ScanFile(path string) (Stats, error) {
	f, err := Open(path)
	if err != nil {
		return Stats{}, &FileError{Msg: "cannot open the manifest", Err: err}
	}
	defer f.Close()
	return Scan(f)
}

// NoRows returns a *FileError when the manifest has a header and no row
// (blank records aside), nil otherwise: a batch of nothing is a mistake (the
// wrong file, or rows lost on the way), never a batch complete.
func (st Stats) NoRows() error {
	if st.Rows > 0 {
		return nil
	}
	msg := "no rows below the header"
	if st.Blank > 0 {
		msg += fmt.Sprintf(" (%d blank records skipped: every column empty)", st.Blank)
	}
	return &FileError{Msg: msg, Hint: "add one row per referral below the header, or give the manifest that lists them"}
}
