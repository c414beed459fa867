package manifest

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// TestIndex: every row read through an index is the row Next read, in
// manifests with what moves records about (a byte order mark, CRLF, a
// quoted field over two lines, blank rows, another separator, rows that
// Next rejects).
func TestIndex(t *testing.T) {
	tests := []struct{ name, input string }{
		{"plain", hdr + "R-1,P-1,2024-01-02,yes,a.pdf,\nR-2,P-2,2024-01-03,no,b.pdf," + sum + "\n"},
		{"mark and CRLF", bom + "source_id,participant_id,referral_date,consent,path\r\nR-1,P-1,2024-01-02,yes,a.pdf\r\nR-2,P-2,2024-01-03,yes,b.pdf\r\n"},
		{"quoted line break and blank rows", hdr5 + "R-1,P-1,2024-01-02,yes,\"a\nb.pdf\"\n,,,,\n\nR-2,P-2,2024-02-30,yes,c.pdf\n,,,,\n"},
		{"semicolons, columns in another order", "path;consent;referral_date;participant_id;source_id\nx.pdf;yes;2024-01-02;P-1;R-1\ny.pdf;;2024-01-02;P-2;R-2\n"},
		{"no final line break", hdr5 + "R-1,P-1,2024-01-02,yes,a.pdf"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "m.csv")
			if err := os.WriteFile(path, []byte(tc.input), 0o600); err != nil {
				t.Fatal(err)
			}
			want, err := readAll(t, tc.input)
			if err != nil || len(want) == 0 {
				t.Fatalf("readAll = %d rows, %v", len(want), err)
			}
			x, err := NewIndex(path)
			if err != nil {
				t.Fatal(err)
			}
			// Backwards, so that no read leans on the one before.
			for i := len(want) - 1; i >= 0; i-- {
				got, ok, err := x.Row(want[i].Line)
				if err != nil || !ok {
					t.Fatalf("Row(%d) = %v, %v", want[i].Line, ok, err)
				}
				if !reflect.DeepEqual(got, want[i]) {
					t.Errorf("Row(%d) = %+v, want %+v", want[i].Line, got, want[i])
				}
			}
			if _, ok, err := x.Row(1); ok || err != nil {
				t.Errorf("Row(1), the header = %v, %v; want no row", ok, err)
			}
		})
	}
}

func TestIndexRefusesAChangedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.csv")
	if err := os.WriteFile(path, []byte(hdr5+"R-1,P-1,2024-01-02,yes,a.pdf\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	x, err := NewIndex(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(hdr5+"R-1,P-9,2024-01-02,yes,a.pdf\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Second)
	os.Chtimes(path, later, later)
	if _, _, err := x.Row(2); !errors.Is(err, ErrChanged) {
		t.Errorf("Row of a changed file: %v, want ErrChanged", err)
	}
	var fe *FileError
	if _, err := NewIndex(filepath.Join(t.TempDir(), "none.csv")); !errors.As(err, &fe) {
		t.Errorf("NewIndex of a missing file: %v, want a *FileError", err)
	}
}
