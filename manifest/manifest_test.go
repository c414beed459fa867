package manifest

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/refbatch/refbatch/report/outcome"
)

const (
	hdr  = "source_id,participant_id,referral_date,consent,path,sha256\n"
	sum  = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	bom  = "\xef\xbb\xbf"
	hdr5 = "source_id,participant_id,referral_date,consent,path\n"
)

// fixtureDir is the shared testdata folder at the repository root.
var fixtureDir = filepath.Join("..", "testdata", "manifest")

// readAll reads every row of input. err is the first error other than
// io.EOF, from NewReader or Next.
func readAll(t testing.TB, input string) (rows []Row, err error) {
	t.Helper()
	r, err := NewReader(strings.NewReader(input))
	if err != nil {
		return nil, err
	}
	for {
		row, err := r.Next()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return rows, err
		}
		rows = append(rows, row)
	}
}

// ok builds the Row expected for a valid record.
func ok(line int, id, pid, date, path, sha string) Row {
	return Row{Line: line, SourceID: id, ParticipantID: pid, ReferralDate: date, Consent: true, Path: path, SHA256: sha}
}

func TestReaderRows(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  []Row
	}{
		{
			name:  "plain",
			input: hdr + "R-1,P-1,2024-01-15,yes,a.pdf," + sum + "\n",
			want:  []Row{ok(2, "R-1", "P-1", "2024-01-15", "a.pdf", sum)},
		},
		{
			name:  "no final newline",
			input: hdr5 + "R-1,P-1,2024-01-15,yes,a.pdf",
			want:  []Row{ok(2, "R-1", "P-1", "2024-01-15", "a.pdf", "")},
		},
		{
			name:  "BOM",
			input: bom + hdr5 + "R-1,P-1,2024-01-15,yes,a.pdf\n",
			want:  []Row{ok(2, "R-1", "P-1", "2024-01-15", "a.pdf", "")},
		},
		{
			name:  "CRLF",
			input: strings.ReplaceAll(hdr5+"R-1,P-1,2024-01-15,yes,a.pdf\nR-2,P-2,2024-01-16,no,b.pdf\n", "\n", "\r\n"),
			want: []Row{
				ok(2, "R-1", "P-1", "2024-01-15", "a.pdf", ""),
				{Line: 3, SourceID: "R-2", ParticipantID: "P-2", ReferralDate: "2024-01-16", Path: "b.pdf",
					Err: &RowError{Line: 3, Field: "consent", Reason: outcome.NoConsent, Detail: "consent is no"}},
			},
		},
		{
			name:  "BOM and CRLF",
			input: bom + "source_id,participant_id,referral_date,consent,path\r\nR-1,P-1,2024-01-15,yes,a.pdf\r\n",
			want:  []Row{ok(2, "R-1", "P-1", "2024-01-15", "a.pdf", "")},
		},
		{
			name:  "quoted comma and doubled quotes",
			input: hdr5 + `"R,1","P ""x""",2024-01-15,yes,"dir/a, b.pdf"` + "\n",
			want:  []Row{ok(2, "R,1", `P "x"`, "2024-01-15", "dir/a, b.pdf", "")},
		},
		{
			name: "embedded newlines keep line numbers",
			input: hdr5 +
				"R-1,P-1,2024-01-15,yes,\"a\nb.pdf\"\n" + // lines 2-3
				"\"R\n-\n2\",P-2,2024-01-16,yes,c.pdf\n" + // lines 4-6
				"R-3,P-3,2024-01-17,yes,d.pdf\n", // line 7
			want: []Row{
				ok(2, "R-1", "P-1", "2024-01-15", "a\nb.pdf", ""),
				ok(4, "R\n-\n2", "P-2", "2024-01-16", "c.pdf", ""),
				ok(7, "R-3", "P-3", "2024-01-17", "d.pdf", ""),
			},
		},
		{
			name:  "embedded CRLF inside quotes",
			input: "source_id,participant_id,referral_date,consent,path\r\nR-1,P-1,2024-01-15,yes,\"a\r\nb.pdf\"\r\nR-2,P-2,2024-01-16,yes,c.pdf\r\n",
			want: []Row{
				ok(2, "R-1", "P-1", "2024-01-15", "a\nb.pdf", ""),
				ok(4, "R-2", "P-2", "2024-01-16", "c.pdf", ""),
			},
		},
		{
			name:  "blank lines skipped",
			input: "\n\n" + hdr5 + "\nR-1,P-1,2024-01-15,yes,a.pdf\n\n\nR-2,P-2,2024-01-16,yes,b.pdf\n\n",
			want: []Row{
				ok(5, "R-1", "P-1", "2024-01-15", "a.pdf", ""),
				ok(8, "R-2", "P-2", "2024-01-16", "b.pdf", ""),
			},
		},
		{
			name:  "any column order",
			input: "path,consent,sha256,referral_date,participant_id,source_id\na.pdf,yes," + sum + ",2024-01-15,P-1,R-1\n",
			want:  []Row{ok(2, "R-1", "P-1", "2024-01-15", "a.pdf", sum)},
		},
		{
			name:  "header case-insensitive and trimmed",
			input: " Source_ID ,PARTICIPANT_ID,\tReferral_Date,Consent ,\" Path \",SHA256\nR-1,P-1,2024-01-15,yes,a.pdf,\n",
			want:  []Row{ok(2, "R-1", "P-1", "2024-01-15", "a.pdf", "")},
		},
		{
			name:  "unknown, empty and repeated unknown columns ignored",
			input: "notes,source_id,participant_id,,referral_date,consent,path,notes,\nx,R-1,P-1,y,2024-01-15,yes,a.pdf,z,\n",
			want:  []Row{ok(2, "R-1", "P-1", "2024-01-15", "a.pdf", "")},
		},
		{
			name:  "values trimmed",
			input: hdr + "  R-1 ,\tP-1\t, 2024-01-15 , Yes ,\" a.pdf \",  " + strings.ToUpper(sum) + " \n",
			want:  []Row{ok(2, "R-1", "P-1", "2024-01-15", "a.pdf", sum)},
		},
		{
			name:  "sha256 upper case lowered",
			input: hdr + "R-1,P-1,2024-01-15,yes,a.pdf," + strings.ToUpper(sum) + "\n",
			want:  []Row{ok(2, "R-1", "P-1", "2024-01-15", "a.pdf", sum)},
		},
		{
			name:  "extra fields ignored",
			input: hdr5 + "R-1,P-1,2024-01-15,yes,a.pdf,extra,more\n",
			want:  []Row{ok(2, "R-1", "P-1", "2024-01-15", "a.pdf", "")},
		},
		{
			name:  "short record without optional sha256",
			input: hdr + "R-1,P-1,2024-01-15,yes,a.pdf\n",
			want:  []Row{ok(2, "R-1", "P-1", "2024-01-15", "a.pdf", "")},
		},
		{
			name:  "short record missing required",
			input: hdr + "R-1,P-1,2024-01-15\n",
			want: []Row{{Line: 2, SourceID: "R-1", ParticipantID: "P-1", ReferralDate: "2024-01-15",
				Err: &RowError{Line: 2, Field: "consent", Reason: outcome.MissingField, Detail: "empty or absent"}}},
		},
		{
			name:  "header only",
			input: hdr,
			want:  nil,
		},
		{
			name:  "leap day",
			input: hdr5 + "R-1,P-1,2000-02-29,yes,a.pdf\n",
			want:  []Row{ok(2, "R-1", "P-1", "2000-02-29", "a.pdf", "")},
		},
		{
			name:  "non-ASCII values",
			input: hdr5 + "R-é,P-ü,2024-01-15,yes,dossiers/référé.pdf\n",
			want:  []Row{ok(2, "R-é", "P-ü", "2024-01-15", "dossiers/référé.pdf", "")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readAll(t, tt.input)
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			for i := range got {
				got[i].Raw = nil // TestRaw checks it
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("rows:\n got %s\nwant %s", dump(got), dump(tt.want))
			}
		})
	}
}

// TestRaw checks that a row keeps what each known column said, trimmed,
// in the column table's order, even when the row is rejected.
func TestRaw(t *testing.T) {
	got, err := readAll(t, "path,consent,extra,referral_date,participant_id,source_id\n a.pdf ,YES,x,2024/01/15,P-1,R-1\n")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"R-1", "P-1", "2024/01/15", "YES", "a.pdf", ""}
	if len(got) != 1 || got[0].Err == nil || !reflect.DeepEqual(got[0].Raw, want) {
		t.Fatalf("rows %s: want one rejected row with Raw %q", dump(got), want)
	}
}

func dump(rows []Row) string {
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "\n  %+v", r)
		if r.Err != nil {
			fmt.Fprintf(&b, " err=%+v", *r.Err)
		}
	}
	return b.String()
}

func TestRowReasons(t *testing.T) {
	tests := []struct {
		name   string
		record string // under hdr, on line 2
		field  string
		reason outcome.Reason // "" for an accepted row
	}{
		{"missing source_id", ",P-1,2024-01-15,yes,a.pdf,", "source_id", outcome.MissingField},
		{"blank source_id", "  ,P-1,2024-01-15,yes,a.pdf,", "source_id", outcome.MissingField},
		{"missing participant_id", "R-1,,2024-01-15,yes,a.pdf,", "participant_id", outcome.MissingField},
		{"missing referral_date", "R-1,P-1,,yes,a.pdf,", "referral_date", outcome.MissingField},
		{"missing consent", "R-1,P-1,2024-01-15,,a.pdf,", "consent", outcome.MissingField},
		{"missing path", "R-1,P-1,2024-01-15,yes,,", "path", outcome.MissingField},
		{"missing path short record", "R-1,P-1,2024-01-15,yes", "path", outcome.MissingField},
		{"missing beats everything", "R-1,,2024-13-45,maybe,a.pdf,zz", "participant_id", outcome.MissingField},
		{"first missing in column order", ",P-1,2024-01-15,yes,,", "source_id", outcome.MissingField},
		{"date not a date", "R-1,P-1,yesterday,yes,a.pdf,", "referral_date", outcome.BadDate},
		{"date wrong order", "R-1,P-1,15-01-2024,yes,a.pdf,", "referral_date", outcome.BadDate},
		{"date no zero padding", "R-1,P-1,2024-1-5,yes,a.pdf,", "referral_date", outcome.BadDate},
		{"date slashes", "R-1,P-1,2024/01/15,yes,a.pdf,", "referral_date", outcome.BadDate},
		{"date month 13", "R-1,P-1,2024-13-01,yes,a.pdf,", "referral_date", outcome.BadDate},
		{"date month 0", "R-1,P-1,2024-00-10,yes,a.pdf,", "referral_date", outcome.BadDate},
		{"date day 0", "R-1,P-1,2024-01-00,yes,a.pdf,", "referral_date", outcome.BadDate},
		{"date april 31", "R-1,P-1,2024-04-31,yes,a.pdf,", "referral_date", outcome.BadDate},
		{"date not leap", "R-1,P-1,2023-02-29,yes,a.pdf,", "referral_date", outcome.BadDate},
		{"date century not leap", "R-1,P-1,1900-02-29,yes,a.pdf,", "referral_date", outcome.BadDate},
		{"date year zero", "R-1,P-1,0000-01-01,yes,a.pdf,", "referral_date", outcome.BadDate},
		{"date with time", "R-1,P-1,2024-01-15T10:00,yes,a.pdf,", "referral_date", outcome.BadDate},
		{"date signed", "R-1,P-1,+024-01-15,yes,a.pdf,", "referral_date", outcome.BadDate},
		{"bad date beats bad consent", "R-1,P-1,2024-02-30,maybe,a.pdf,zz", "referral_date", outcome.BadDate},
		{"consent unknown word", "R-1,P-1,2024-01-15,maybe,a.pdf,", "consent", outcome.BadConsent},
		{"consent 2", "R-1,P-1,2024-01-15,2,a.pdf,", "consent", outcome.BadConsent},
		{"consent kelvin look-alike", "R-1,P-1,2024-01-15,\u212Ay,a.pdf,", "consent", outcome.BadConsent},
		{"bad consent beats bad sha256", "R-1,P-1,2024-01-15,ja,a.pdf,zz", "consent", outcome.BadConsent},
		{"sha256 short", "R-1,P-1,2024-01-15,yes,a.pdf,abc123", "sha256", outcome.BadSHA256},
		{"sha256 long", "R-1,P-1,2024-01-15,yes,a.pdf," + sum + "0", "sha256", outcome.BadSHA256},
		{"sha256 not hex", "R-1,P-1,2024-01-15,yes,a.pdf," + sum[:63] + "g", "sha256", outcome.BadSHA256},
		{"sha256 prefixed", "R-1,P-1,2024-01-15,yes,a.pdf,sha256:" + sum[:57], "sha256", outcome.BadSHA256},
		{"bad sha256 beats no consent", "R-1,P-1,2024-01-15,no,a.pdf,xyz", "sha256", outcome.BadSHA256},
		{"no consent", "R-1,P-1,2024-01-15,no,a.pdf,", "consent", outcome.NoConsent},
		{"no consent 0", "R-1,P-1,2024-01-15,0,a.pdf," + sum, "consent", outcome.NoConsent},
		{"no consent FALSE", "R-1,P-1,2024-01-15,FALSE,a.pdf,", "consent", outcome.NoConsent},
		{"no consent n", "R-1,P-1,2024-01-15, N ,a.pdf,", "consent", outcome.NoConsent},
		{"accepted", "R-1,P-1,2024-01-15,yes,a.pdf," + sum, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows, err := readAll(t, hdr+tt.record+"\n")
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if len(rows) != 1 {
				t.Fatalf("got %d rows, want 1", len(rows))
			}
			row := rows[0]
			if tt.reason == "" {
				if row.Err != nil {
					t.Fatalf("got %v, want an accepted row", row.Err)
				}
				return
			}
			if row.Err == nil {
				t.Fatalf("got an accepted row, want %s on %s", tt.reason, tt.field)
			}
			if row.Err.Reason != tt.reason || row.Err.Field != tt.field || row.Err.Line != 2 {
				t.Errorf("got line %d %s on %s, want line 2 %s on %s",
					row.Err.Line, row.Err.Reason, row.Err.Field, tt.reason, tt.field)
			}
		})
	}
}

// TestRowErrorHidesValues shifts a participant ID into every other column
// and checks that no error message repeats it.
func TestRowErrorHidesValues(t *testing.T) {
	const secret = "P-SECRET-7731"
	records := []string{
		"R-1," + secret + ",2024-13-01,yes,a.pdf,",
		"R-1,P-1," + secret + ",yes,a.pdf,",
		"R-1,P-1,2024-01-15," + secret + ",a.pdf,",
		"R-1,P-1,2024-01-15,yes,a.pdf," + secret,
		"R-1," + secret + ",2024-01-15,no,a.pdf,",
		"R-1," + secret,
	}
	for _, rec := range records {
		rows, err := readAll(t, hdr+rec+"\n")
		if err != nil {
			t.Fatalf("%q: unexpected error: %v", rec, err)
		}
		if rows[0].Err == nil {
			t.Fatalf("%q: want a rejected row", rec)
		}
		if msg := rows[0].Err.Error(); strings.Contains(msg, secret) {
			t.Errorf("error message leaks a value: %s", msg)
		}
	}
}

func TestRowErrorMessage(t *testing.T) {
	e := &RowError{Line: 7, Field: "referral_date", Reason: outcome.BadDate, Detail: "month out of range"}
	want := "manifest line 7: column referral_date: bad_date: month out of range"
	if got := e.Error(); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestFileErrors(t *testing.T) {
	tests := []struct {
		name     string
		input    string
		rowsRead int    // rows returned before the error
		line     int    // FileError.Line
		msg      string // substring of FileError.Msg
		is       error  // errors.Is target, if any
	}{
		{name: "empty", input: "", line: 1, msg: "no header row"},
		{name: "BOM only", input: bom, line: 1, msg: "no header row"},
		{name: "blank lines only", input: "\n\r\n\n", line: 1, msg: "no header row"},
		{name: "data where the header should be", input: "R-1,P-1,2024-01-15,yes,a.pdf\n", line: 1, msg: "no header row"},
		{name: "missing one column", input: "source_id,participant_id,referral_date,consent\n", line: 1, msg: `missing required column path; the header names "source_id", "participant_id", "referral_date", "consent"`},
		{name: "missing several columns", input: "source_id,path,sha256\n", line: 1, msg: "missing required columns participant_id, referral_date, consent"},
		{name: "header after blank lines", input: "\n\nsource_id,participant_id\n", line: 3, msg: "missing required columns"},
		{name: "misspelled column", input: "source_id,participant,referral_date,consent,path\n", line: 1,
			msg: `missing required column participant_id; the header names "source_id", "participant", "referral_date", "consent", "path"`},
		{name: "spreadsheet names, one missing", input: "Source ID, Participant, Referral Date, Consent, Path\n", line: 1,
			msg: `missing required column participant_id; the header names "Source ID", "Participant", "Referral Date", "Consent", "Path"`},
		{name: "duplicate column", input: "source_id,participant_id,referral_date,consent,path,Consent\n", line: 1, msg: `column consent is named twice in the header: "consent" and "Consent"`},
		{name: "duplicate optional column", input: hdr5[:len(hdr5)-1] + ",sha256, SHA-256 \n", line: 1, msg: `column sha256 is named twice in the header: "sha256" and "SHA-256"`},
		{name: "duplicate column under another spelling", input: "source_id,Source ID,participant_id,referral_date,consent,path\n", line: 1, msg: `column source_id is named twice in the header: "source_id" and "Source ID"`},
		{name: "no separator the reader knows", input: "source_id|participant_id|referral_date|consent|path\nR-1|P-1|2024-01-15|yes|a.pdf\n", line: 1,
			msg: `no header row: the first row names none of the required columns source_id, participant_id, referral_date, consent, path (read as ','-separated: (a value, not shown))`},
		{name: "data row shown only where it reads as names", input: "R-1;P-1;2024-01-15;yes;docs/a.pdf;Notes\n", line: 1,
			msg: `(read as ';'-separated: (a value, not shown), (a value, not shown), (a value, not shown), "yes", (a value, not shown), "Notes")`},
		{name: "foreign header shown", input: "Quelle\tTeilnehmer\tDatum\tEinwilligung\tPfad\n", line: 1,
			msg: `(read as tab-separated: "Quelle", "Teilnehmer", "Datum", "Einwilligung", "Pfad")`},
		{name: "invalid UTF-8 in header", input: "source_id,participant_id,referral_date,consent,path,n\xffotes\n", line: 1, msg: "invalid UTF-8 in the header"},
		{name: "UTF-16 LE", input: "\xff\xfes\x00o\x00", line: 1, msg: "UTF-16"},
		{name: "UTF-16 BE", input: "\xfe\xff\x00s\x00o", line: 1, msg: "UTF-16"},
		{
			name:     "invalid UTF-8 in a row",
			input:    hdr5 + "R-1,P-1,2024-01-15,yes,a.pdf\nR-2,P-\xc3,2024-01-15,yes,b.pdf\n",
			rowsRead: 1, line: 3, msg: "invalid UTF-8 in column participant_id",
		},
		{
			name:     "invalid UTF-8 in an unknown column",
			input:    hdr5[:len(hdr5)-1] + ",notes\nR-1,P-1,2024-01-15,yes,a.pdf,\xe9t\xe9\n",
			rowsRead: 0, line: 2, msg: `invalid UTF-8 in column "notes"`,
		},
		{
			name:     "invalid UTF-8 on a later line of a quoted field",
			input:    hdr5 + "R-1,P-1,2024-01-15,yes,\"a\nb\nc\x80.pdf\"\n",
			rowsRead: 0, line: 4, msg: "invalid UTF-8 in column path",
		},
		{
			name:     "bare quote",
			input:    hdr5 + "R-1,P-1,2024-01-15,yes,a.pdf\nR-2,P-2,2024-01-16,yes,6\" ruler.pdf\n",
			rowsRead: 1, line: 3, msg: "bare \"", is: csv.ErrBareQuote,
		},
		{
			name:  "bare quote in header",
			input: "source_id,participant_id,referral_date,consent,pa\"th\n",
			line:  1, msg: "bare \"", is: csv.ErrBareQuote,
		},
		{
			name:     "text after closing quote",
			input:    hdr5 + "R-1,P-1,2024-01-15,yes,\"a.pdf\"x\n",
			rowsRead: 0, line: 2, msg: "CSV syntax", is: csv.ErrQuote,
		},
		{
			name:     "record over the cap",
			input:    hdr5 + "R-1,P-1,2024-01-15,yes,a.pdf\nR-2,P-2,2024-01-16,yes," + strings.Repeat("x", MaxRecordBytes+8192) + "\n",
			rowsRead: 1, line: 3, msg: "longer than 1048576 bytes",
		},
		{
			name:     "quote never closed over a huge file",
			input:    hdr5 + "R-1,P-1,2024-01-15,yes,\"" + strings.Repeat("a.pdf\n", MaxRecordBytes/4),
			rowsRead: 0, line: 2, msg: "a quote never closed",
		},
		{
			name:     "unterminated quote",
			input:    hdr5 + "R-1,P-1,2024-01-15,yes,a.pdf\nR-2,P-2,2024-01-16,yes,\"b.pdf\nR-3,P-3,2024-01-17,yes,c.pdf\n",
			rowsRead: 1, line: 4, msg: "record starts at line 3", is: csv.ErrQuote,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows, err := readAll(t, tt.input)
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Fatalf("got error %v (%T), want *FileError", err, err)
			}
			if len(rows) != tt.rowsRead {
				t.Errorf("got %d rows before the error, want %d", len(rows), tt.rowsRead)
			}
			if fe.Line != tt.line {
				t.Errorf("got line %d, want %d (%v)", fe.Line, tt.line, fe)
			}
			if !strings.Contains(fe.Msg, tt.msg) {
				t.Errorf("got message %q, want it to contain %q", fe.Msg, tt.msg)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("errors.Is(%v, %v) is false", err, tt.is)
			}
			if !strings.HasPrefix(fe.Error(), fmt.Sprintf("manifest line %d: ", tt.line)) {
				t.Errorf("Error() = %q does not name the line", fe.Error())
			}
		})
	}
}

// TestFileErrorSticky checks that a broken file keeps reporting the same
// error instead of resynchronising on whatever follows.
func TestFileErrorSticky(t *testing.T) {
	r, err := NewReader(strings.NewReader(hdr5 + "R-1,P-1,2024-01-15,yes,a\"b\nR-2,P-2,2024-01-16,yes,c.pdf\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, first := r.Next()
	var fe *FileError
	if !errors.As(first, &fe) {
		t.Fatalf("got %v, want *FileError", first)
	}
	for range 3 {
		if _, err := r.Next(); err != first {
			t.Fatalf("got %v after a file error, want the same error %v", err, first)
		}
	}
}

func TestIOError(t *testing.T) {
	boom := errors.New("disk on fire")
	src := io.MultiReader(strings.NewReader(hdr5+"R-1,P-1,2024-01-15,yes,a.pdf\n"), iotest.ErrReader(boom))
	r, err := NewReader(src)
	if err != nil {
		t.Fatal(err)
	}
	var got error
	for got == nil {
		_, got = r.Next()
	}
	var fe *FileError
	if errors.As(got, &fe) || !errors.Is(got, boom) {
		t.Errorf("got %v, want the wrapped I/O error and no *FileError", got)
	}

	if _, err := NewReader(iotest.ErrReader(boom)); !errors.Is(err, boom) {
		t.Errorf("NewReader: got %v, want the wrapped I/O error", err)
	}
}

// TestOneByteReads checks that the BOM is recognised however the bytes
// arrive.
func TestOneByteReads(t *testing.T) {
	in := bom + "source_id,participant_id,referral_date,consent,path\r\nR-1,P-1,2024-01-15,yes,a.pdf\r\n"
	r, err := NewReader(iotest.OneByteReader(strings.NewReader(in)))
	if err != nil {
		t.Fatal(err)
	}
	row, err := r.Next()
	if err != nil || row.Err != nil || row.SourceID != "R-1" {
		t.Fatalf("got %+v, %v", row, err)
	}
}

func TestParseConsent(t *testing.T) {
	tests := []struct {
		in      string
		want    bool
		wantErr bool
	}{
		{"yes", true, false}, {"YES", true, false}, {"Yes", true, false}, {" yes ", true, false},
		{"true", true, false}, {"True", true, false}, {"y", true, false}, {"Y", true, false}, {"1", true, false},
		{"no", false, false}, {"NO", false, false}, {"\tno\t", false, false},
		{"false", false, false}, {"FALSE", false, false}, {"n", false, false}, {"N", false, false}, {"0", false, false},
		{"", false, true}, {"maybe", false, true}, {"ja", false, true}, {"2", false, true},
		{"yes please", false, true}, {"\u212A", false, true}, {"ye\u017F", false, true}, {"01", false, true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.in), func(t *testing.T) {
			got, err := ParseConsent(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("error = %v, want error %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
			if err != nil && tt.in != "" && strings.Contains(err.Error(), tt.in) {
				t.Errorf("error %q quotes the value", err)
			}
		})
	}
}

// TestFixtures reads the shared fixtures that also seed FuzzReader.
func TestFixtures(t *testing.T) {
	type want struct {
		lines   []int            // Row.Line of each row
		reasons []outcome.Reason // Row.Err.Reason of each row, "" when accepted
		errLine int              // FileError line, 0 for none
	}
	tests := map[string]want{
		"good.csv":     {lines: []int{2, 3, 4}, reasons: []outcome.Reason{"", "", ""}},
		"bom_crlf.csv": {lines: []int{2, 4}, reasons: []outcome.Reason{"", outcome.NoConsent}},
		"quoted.csv":   {lines: []int{2, 3, 5, 8}, reasons: []outcome.Reason{"", "", outcome.NoConsent, ""}},
		"bad_rows.csv": {
			lines:   []int{2, 3, 4, 5, 6, 7, 8},
			reasons: []outcome.Reason{outcome.MissingField, outcome.BadDate, outcome.BadConsent, outcome.BadSHA256, outcome.NoConsent, outcome.MissingField, ""},
		},
		"no_header.csv":       {errLine: 1},
		"missing_column.csv":  {errLine: 1},
		"bare_quote.csv":      {lines: []int{2}, reasons: []outcome.Reason{""}, errLine: 3},
		"semicolon_excel.csv": {lines: []int{2, 3}, reasons: []outcome.Reason{"", outcome.BadConsent}},
		"tab.csv":             {lines: []int{2}, reasons: []outcome.Reason{""}},
	}
	for name, w := range tests {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(fixtureDir, name))
			if err != nil {
				t.Fatal(err)
			}
			rows, err := readAll(t, string(data))
			var fe *FileError
			switch {
			case w.errLine == 0 && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case w.errLine != 0 && !errors.As(err, &fe):
				t.Fatalf("got %v, want *FileError", err)
			case w.errLine != 0 && fe.Line != w.errLine:
				t.Errorf("got error on line %d, want %d", fe.Line, w.errLine)
			}
			var lines []int
			var reasons []outcome.Reason
			for _, r := range rows {
				lines = append(lines, r.Line)
				var reason outcome.Reason
				if r.Err != nil {
					reason = r.Err.Reason
				}
				reasons = append(reasons, reason)
			}
			if !reflect.DeepEqual(lines, w.lines) || !reflect.DeepEqual(reasons, w.reasons) {
				t.Errorf("got lines %v reasons %q, want lines %v reasons %q", lines, reasons, w.lines, w.reasons)
			}
		})
	}
}

// FuzzReader checks that no input panics the reader and that every row it
// returns is either rejected or complete and well-formed.
func FuzzReader(f *testing.F) {
	seeds, err := filepath.Glob(filepath.Join(fixtureDir, "*.csv"))
	if err != nil {
		f.Fatal(err)
	}
	if len(seeds) == 0 {
		f.Fatalf("no seed files in %s", fixtureDir)
	}
	for _, p := range seeds {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	// Line ends: CR only (old Mac OS), mixed, after a byte order mark, and
	// a CR inside a quoted field.
	two := []string{hdr5[:len(hdr5)-1], "R-1,P-1,2024-01-02,yes,a.pdf", "R-2,P-2,2024-01-03,no,b.pdf"}
	f.Add([]byte(strings.Join(two, "\r") + "\r"))
	f.Add([]byte(two[0] + "\r" + two[1] + "\n" + two[2] + "\r\n"))
	f.Add([]byte(bom + strings.Join(two, "\r")))
	f.Add([]byte(two[0] + "\r\r\n" + `R-1,P-1,2024-01-02,yes,"a` + "\r" + `""b.pdf"` + "\r" + two[2]))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			checkFileError(t, err)
			return
		}
		mark := 0
		if bytes.HasPrefix(data, utf8BOM) {
			mark = len(utf8BOM)
		}
		prev := 0
		for {
			row, err := r.Next()
			if err == io.EOF {
				return
			}
			if err != nil {
				checkFileError(t, err)
				return
			}
			if row.Line <= prev {
				t.Fatalf("row line %d after line %d", row.Line, prev)
			}
			prev = row.Line
			// The row read again from its offset, as an Index does, is
			// the same row.
			again, err := readRowAt(bytes.NewReader(data[mark+int(r.start):]), r.Comma(), r.idx, r.header, row.Line)
			if err != nil || !reflect.DeepEqual(again, row) {
				t.Fatalf("row on line %d read again from offset %d: %+v, %v; want %+v", row.Line, r.start, again, err, row)
			}
			if row.Err != nil {
				checkRowError(t, row)
				continue
			}
			if row.SourceID == "" || row.ParticipantID == "" || row.ReferralDate == "" || row.Path == "" || !row.Consent {
				t.Fatalf("accepted row with a required field unset: %+v", row)
			}
			if checkDate(row.ReferralDate) != "" {
				t.Fatalf("accepted row with a bad date %q", row.ReferralDate)
			}
			if row.SHA256 != "" && (checkSHA256(row.SHA256) != "" || row.SHA256 != strings.ToLower(row.SHA256)) {
				t.Fatalf("accepted row with a bad sha256 %q", row.SHA256)
			}
		}
	})
}

func checkFileError(t *testing.T, err error) {
	t.Helper()
	var fe *FileError
	if !errors.As(err, &fe) {
		t.Fatalf("got %v (%T), want *FileError", err, err)
	}
	if fe.Line < 1 || fe.Msg == "" {
		t.Fatalf("malformed file error %+v", fe)
	}
}

func checkRowError(t *testing.T, row Row) {
	t.Helper()
	switch row.Err.Reason {
	case outcome.MissingField, outcome.BadDate, outcome.BadConsent, outcome.BadSHA256, outcome.NoConsent:
	default:
		t.Fatalf("unknown reason %q", row.Err.Reason)
	}
	if row.Err.Line != row.Line || row.Err.Field == "" {
		t.Fatalf("malformed row error %+v for row on line %d", row.Err, row.Line)
	}
	if row.ParticipantID != "" && strings.Contains(row.Err.Error(), row.ParticipantID) {
		// Short IDs ("1", "P") can appear in any message by chance; only
		// distinctive ones prove a leak.
		if len(row.ParticipantID) >= 8 {
			t.Fatalf("row error %q contains the participant ID", row.Err.Error())
		}
	}
}

// benchManifest builds a manifest of n valid rows, with a few quoted
// fields and an unknown column so the reader does its usual work.
func benchManifest(n int) []byte {
	var b bytes.Buffer
	b.WriteString(bom + "source_id,participant_id,referral_date,consent,path,sha256,notes\r\n")
	for i := range n {
		fmt.Fprintf(&b, "R-%06d,P-%07d,2024-%02d-%02d,yes,\"archive/box %d/r%06d.pdf\",%s,\"scanned, batch %d\"\r\n",
			i, i*7, i%12+1, i%28+1, i/100, i, sum, i%10)
	}
	return b.Bytes()
}

func BenchmarkReader(b *testing.B) {
	data := benchManifest(10_000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for {
			row, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			if row.Err != nil {
				b.Fatal(row.Err)
			}
			n++
		}
		if n != 10_000 {
			b.Fatalf("read %d rows, want 10000", n)
		}
	}
}
