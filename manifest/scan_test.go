package manifest

import (
	"errors"
	"strings"
	"testing"
)

// TestScanNoRows: a manifest with a header and no row, blank records
// aside, is a *FileError; CR-only line ends are rows like any other.
func TestScanNoRows(t *testing.T) {
	tests := []struct {
		name, input string
		rows        int
		msg         string
	}{
		{"header only", hdr5, 0, "manifest: no rows below the header"},
		{"blank records only", hdr5 + ",,,,\n,\n", 0, "manifest: no rows below the header (2 blank records skipped: every column empty)"},
		{"CR only", strings.ReplaceAll(hdr5+"R-1,P-1,2024-01-02,yes,a.pdf\n", "\n", "\r"), 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := Scan(strings.NewReader(tt.input))
			if err != nil || st.Rows != tt.rows {
				t.Fatalf("Scan = %+v, %v; want %d rows", st, err, tt.rows)
			}
			err = st.NoRows()
			var fe *FileError
			switch {
			case tt.msg == "" && err != nil:
				t.Errorf("NoRows = %v, want nil", err)
			case tt.msg != "" && (!errors.As(err, &fe) || fe.Error() != tt.msg || fe.Hint == ""):
				t.Errorf("NoRows = %v, want a *FileError %q with a hint", err, tt.msg)
			}
		})
	}
}
