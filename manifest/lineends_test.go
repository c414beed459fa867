package manifest

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// TestLineEnds: a lone CR ends a line as LF and CRLF do, in a file whose
// line ends are all CR (old Mac OS) or mixed, with or without a byte
// order mark, whatever the reads' sizes; a CR inside a quoted field is
// the field's. Lines are counted where an editor shows them.
func TestLineEnds(t *testing.T) {
	rows := []Row{ok(2, "R-1", "P-1", "2024-01-02", "a.pdf", ""), ok(3, "R-2", "P-2", "2024-01-03", "b.pdf", "")}
	lines := []string{"source_id,participant_id,referral_date,consent,path", "R-1,P-1,2024-01-02,yes,a.pdf", "R-2,P-2,2024-01-03,yes,b.pdf"}
	tests := []struct {
		name, input string
		want        []Row
	}{
		{"CR only", strings.Join(lines, "\r") + "\r", rows},
		{"CR only, no final line end", strings.Join(lines, "\r"), rows},
		{"mark and CR", bom + strings.Join(lines, "\r") + "\r", rows},
		{"mixed CR, LF and CRLF", lines[0] + "\r" + lines[1] + "\n" + lines[2] + "\r\n", rows},
		{"CR before CRLF is a blank line", lines[0] + "\r\r\n" + lines[1] + "\r" + lines[2],
			[]Row{ok(3, "R-1", "P-1", "2024-01-02", "a.pdf", ""), ok(4, "R-2", "P-2", "2024-01-03", "b.pdf", "")}},
		{"quoted CR kept", lines[0] + "\r" + `R-1,P-1,2024-01-02,yes,"a` + "\r" + `b.pdf"` + "\r" + lines[2] + "\r",
			[]Row{ok(2, "R-1", "P-1", "2024-01-02", "a\rb.pdf", ""), ok(3, "R-2", "P-2", "2024-01-03", "b.pdf", "")}},
		{"quoted CR with doubled quotes", lines[0] + "\r" + `R-1,P-1,2024-01-02,yes,"a""` + "\r" + `""b.pdf"` + "\r" + lines[2],
			[]Row{ok(2, "R-1", "P-1", "2024-01-02", "a\"\r\"b.pdf", ""), ok(3, "R-2", "P-2", "2024-01-03", "b.pdf", "")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, read := range []struct {
				name string
				wrap func(string) *Reader
			}{
				{"whole", func(s string) *Reader { r, _ := NewReader(strings.NewReader(s)); return r }},
				{"one byte at a time", func(s string) *Reader { r, _ := NewReader(iotest.OneByteReader(strings.NewReader(s))); return r }},
			} {
				r := read.wrap(tt.input)
				if r == nil {
					t.Fatalf("%s: NewReader refused the file", read.name)
				}
				var got []Row
				for {
					row, err := r.Next()
					if err != nil {
						break
					}
					row.Raw = nil
					got = append(got, row)
				}
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("%s: rows %+v, want %+v", read.name, got, tt.want)
				}
			}
			// An index reads each row again from its offset, through the
			// same translation.
			path := filepath.Join(t.TempDir(), "m.csv")
			if err := os.WriteFile(path, []byte(tt.input), 0o600); err != nil {
				t.Fatal(err)
			}
			x, err := NewIndex(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range tt.want {
				got, ok, err := x.Row(want.Line)
				got.Raw = nil
				if err != nil || !ok || !reflect.DeepEqual(got, want) {
					t.Errorf("Row(%d) = %+v, %v, %v; want %+v", want.Line, got, ok, err, want)
				}
			}
		})
	}
}

// TestLineEndsErrorLines: a problem in a CR-only manifest is reported at
// the line an editor shows.
func TestLineEndsErrorLines(t *testing.T) {
	_, err := readAll(t, "source_id,participant_id,referral_date,consent,path\rR-1,P-1,2024-01-02,yes,a.pdf\rR-2,P\"2,2024-01-02,yes,b.pdf\r")
	var fe *FileError
	if !errors.As(err, &fe) || fe.Line != 3 {
		t.Errorf("error %v, want a *FileError on line 3", err)
	}
	rows, err := readAll(t, "source_id,participant_id,referral_date,consent,path\r\rR-1,P-1,2024-13-02,yes,a.pdf\r")
	if err != nil || len(rows) != 1 || rows[0].Err == nil || rows[0].Err.Line != 3 {
		t.Errorf("rows %+v, %v; want one row rejected on line 3", rows, err)
	}
}
