package manifest

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestSeparators(t *testing.T) {
	tests := []struct {
		name  string
		input string
		comma rune
		paths []string // each row's path
	}{
		{"comma", hdr5 + "R-1,P-1,2024-01-15,yes,a;b.pdf\n", ',', []string{"a;b.pdf"}},
		{"semicolon", "source_id;participant_id;referral_date;consent;path\nR-1;P-1;2024-01-15;yes;a,b.pdf\n", ';', []string{"a,b.pdf"}},
		{"tab", "source_id\tparticipant_id\treferral_date\tconsent\tpath\nR-1\tP-1\t2024-01-15\tyes\ta, b.pdf\n", '\t', []string{"a, b.pdf"}},
		{"semicolon after BOM and blank lines", bom + "\r\n\r\nsource_id;participant_id;referral_date;consent;path\r\nR-1;P-1;2024-01-15;yes;a.pdf\r\n", ';', []string{"a.pdf"}},
		{"comma wins when the header holds both", "source_id,participant_id,referral_date,consent,path,notes;remarks\nR-1,P-1,2024-01-15,yes,a.pdf,x;y\n", ',', []string{"a.pdf"}},
		{"quoted header names", `"source_id";"participant_id";"referral_date";"consent";"path"` + "\nR-1;P-1;2024-01-15;yes;a.pdf\n", ';', []string{"a.pdf"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := NewReader(strings.NewReader(tt.input))
			if err != nil {
				t.Fatal(err)
			}
			if r.Comma() != tt.comma {
				t.Errorf("separator %q, want %q", r.Comma(), tt.comma)
			}
			rows, err := readAll(t, tt.input)
			if err != nil {
				t.Fatal(err)
			}
			var paths []string
			for _, row := range rows {
				if row.Err != nil {
					t.Errorf("line %d rejected: %v", row.Line, row.Err)
				}
				paths = append(paths, row.Path)
			}
			if strings.Join(paths, "|") != strings.Join(tt.paths, "|") {
				t.Errorf("paths %q, want %q", paths, tt.paths)
			}
		})
	}
}

// TestHeaderNames checks the tolerant matching of header names.
func TestHeaderNames(t *testing.T) {
	for _, header := range []string{
		"Source ID,Participant ID,Referral Date,Consent,Path,SHA-256",
		"source-id,participant-id,referral-date,CONSENT,path,sha_256",
		"SourceID,ParticipantID,ReferralDate,Consent,Path,SHA256",
		"Source.ID,Participant\u00a0ID,Referral  Date,Consent,Path,Sha 256",
	} {
		rows, err := readAll(t, header+"\nR-1,P-1,2024-01-15,yes,a.pdf,"+sum+"\n")
		if err != nil {
			t.Errorf("%q: %v", header, err)
			continue
		}
		if len(rows) != 1 || rows[0].Err != nil || rows[0].SHA256 != sum {
			t.Errorf("%q: rows %s", header, dump(rows))
		}
	}
	// A look-alike letter does not name a column.
	if _, err := readAll(t, "source_id,participant_id,referral_date,consent,path,\u212Aey\n"); err != nil {
		t.Errorf("unknown column refused: %v", err)
	}
	if columnKey("\u212Aonsent") == columnKey("consent") {
		t.Error("the Kelvin sign folds into k")
	}
}

// TestBlankRecords checks that records with no value are skipped and
// counted, not read as rows, while a row with one value is still a row.
func TestBlankRecords(t *testing.T) {
	input := hdr + ",,,,,\nR-1,P-1,2024-01-15,yes,a.pdf,\n , ,\t,,,\n,,,,,\n,,,,a.pdf,\n,,,,,,,,\n"
	r, err := NewReader(strings.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	var lines []int
	for {
		row, err := r.Next()
		if err != nil {
			break
		}
		lines = append(lines, row.Line)
	}
	if len(lines) != 2 || lines[0] != 3 || lines[1] != 6 {
		t.Errorf("rows on lines %v, want [3 6]", lines)
	}
	if r.Blank() != 4 {
		t.Errorf("Blank() = %d, want 4", r.Blank())
	}
}

// TestScan checks the pre-pass: the counts of a sound file, and the first
// file-level error wherever it is, the last line included.
func TestScan(t *testing.T) {
	st, err := Scan(strings.NewReader("source_id;participant_id;referral_date;consent;path\nR-1;P-1;2024-01-15;yes;a.pdf\nR-2;;;;\n;;;;\n"))
	if err != nil {
		t.Fatal(err)
	}
	if st != (Stats{Rows: 2, Blank: 1, Comma: ';'}) {
		t.Errorf("got %+v", st)
	}

	var b strings.Builder
	b.WriteString(hdr5)
	for range 24_000 {
		b.WriteString("R-1,P-1,2024-01-15,yes,a.pdf\n")
	}
	b.WriteString("R-2,P-2,2024-01-15,yes,caf\xe9.pdf\n")
	_, err = Scan(strings.NewReader(b.String()))
	var fe *FileError
	if !errors.As(err, &fe) || fe.Line != 24_002 || fe.Msg != "invalid UTF-8 in column path" || !strings.Contains(fe.Hint, "CSV UTF-8") {
		t.Errorf("got %v (hint %q), want invalid UTF-8 in column path on line 24002 with the CSV UTF-8 hint", err, fe.Hint)
	}
}

// TestFileErrorHints checks that every kind of file error says how to fix
// it.
func TestFileErrorHints(t *testing.T) {
	for name, input := range map[string]string{
		"empty":           "",
		"no header":       "R-1,P-1,2024-01-15,yes,a.pdf\n",
		"missing column":  "source_id,participant_id,referral_date,consent\n",
		"duplicate":       hdr5[:len(hdr5)-1] + ",Path\n",
		"bad byte":        hdr5 + "R-1,P-1,2024-01-15,yes,\xe9.pdf\n",
		"UTF-16":          "\xff\xfes\x00",
		"bare quote":      hdr5 + "R-1,P-1,2024-01-15,yes,6\" ruler.pdf\n",
		"quote not ended": hdr5 + "R-1,P-1,2024-01-15,yes,\"a.pdf\n",
	} {
		_, err := Scan(strings.NewReader(input))
		var fe *FileError
		if !errors.As(err, &fe) || fe.Hint == "" {
			t.Errorf("%s: got %v, want a *FileError with a hint", name, err)
		}
	}
}

// BenchmarkScan is the pre-pass a run makes over a 24,000-row manifest
// before any work.
func BenchmarkScan(b *testing.B) {
	data := benchManifest(24_000)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		st, err := Scan(bytes.NewReader(data))
		if err != nil || st.Rows != 24_000 {
			b.Fatal(st, err)
		}
	}
}
