package main

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/refbatch/refbatch/ocr"
)

// TestManifestDiagnostics runs `refbatch run` over manifests as people
// make them in a spreadsheet, each with the sample's files: what the
// command exits with, what it says on stderr (and stdout), and which rows
// it recorded. A file-level problem, wherever it is, stops the run before
// any row is admitted, so there is no output folder at all.
func TestManifestDiagnostics(t *testing.T) {
	const (
		// R-0006 is the sample's smallest document; R-0002 and R-0004
		// carry the dates a spreadsheet rewrites.
		good  = "R-0006,P-790373,2022-05-04,yes,docs/R-0006.pdf"
		noYes = "R-0003,P-590334,2021-02-21,no,docs/R-0003.pdf"
	)
	semi := func(row string) string { return strings.ReplaceAll(row, ",", ";") }
	tab := func(row string) string { return strings.ReplaceAll(row, ",", "\t") }
	tests := []struct {
		name     string
		manifest string
		code     int
		stderr   []string
		stdout   []string
		// rows maps each source_id recorded to "state reason"; nil means
		// the run stopped before it made the output folder.
		rows map[string]string
	}{
		{
			name:     "semicolons, spreadsheet names and trailing blank rows",
			manifest: "Source ID;Participant ID;Referral Date;Consent;Path;SHA-256\r\n" + semi(good) + ";\r\n;;;;;\r\n;;;;;\r\n",
			code:     exitOK,
			stderr:   []string{`msg="manifest: reading ';'-separated columns"`},
			stdout:   []string{"rows         1\n", "blank rows   2  skipped: every column empty"},
			rows:     map[string]string{"R-0006": "done "},
		},
		{
			name:     "tabs",
			manifest: "source_id\tparticipant_id\treferral_date\tconsent\tpath\n" + tab(noYes) + "\n",
			code:     exitOK, // no_consent needs no action
			stderr:   []string{`msg="manifest: reading tab-separated columns"`, `reason=no_consent detail="column consent: consent is no" why="Consent is no: not imported.`},
			rows:     map[string]string{"R-0003": "rejected no_consent"},
		},
		{
			name:     "commas and a header with spaces after them",
			manifest: "Source ID, Participant ID, Referral Date, Consent, Path\n" + noYes + "\n",
			code:     exitOK, // no_consent needs no action
			rows:     map[string]string{"R-0003": "rejected no_consent"},
		},
		{
			name:     "a required column missing shows the header found",
			manifest: "Source ID,Participant,Date,Consent,Path\n" + good + "\n",
			code:     exitUsage,
			stderr: []string{
				`refbatch: error: manifest line 1: missing required columns participant_id, referral_date; the header names "Source ID", "Participant", "Date", "Consent", "Path"`,
				"refbatch: hint: name the columns source_id, participant_id, referral_date, consent, path (and optionally sha256) in the first row",
			},
		},
		{
			name:     "a data row where the header should be is not echoed",
			manifest: good + "\n" + noYes + "\n",
			code:     exitUsage,
			stderr: []string{"refbatch: error: manifest line 1: no header row: the first row names none of the required columns source_id, participant_id, referral_date, consent, path (read as ','-separated: (a value, not shown), (a value, not shown), (a value, not shown), \"yes\", (a value, not shown))",
				"refbatch: hint:"},
		},
		{
			name:     "a separator it does not know",
			manifest: "source_id|participant_id|referral_date|consent|path\n" + strings.ReplaceAll(good, ",", "|") + "\n",
			code:     exitUsage,
			stderr:   []string{"no header row", "refbatch: hint: ", "separate them with ',', ';' or a tab"},
		},
		{
			name:     "a column named twice under two spellings",
			manifest: "source_id,participant_id,referral_date,consent,path,Source-ID\n" + good + ",R-1\n",
			code:     exitUsage,
			stderr:   []string{`refbatch: error: manifest line 1: column source_id is named twice in the header: "source_id" and "Source-ID"`},
		},
		{
			name:     "Windows-1252 on the last line stops the run before any work",
			manifest: hdr5 + good + "\n" + noYes + "\nR-0020,P-123456,2024-01-04,yes,docs/caf\xe9.pdf\n",
			code:     exitUsage,
			stderr: []string{"refbatch: error: manifest line 4: invalid UTF-8 in column path",
				`refbatch: hint: the manifest is not UTF-8 (Windows-1252, as Excel's plain "CSV" saves it?): save it as "CSV UTF-8 (Comma delimited)" in Excel`},
		},
		{
			name:     "a broken quote on the last line stops the run before any work",
			manifest: hdr5 + good + "\n" + noYes + "\nR-0020,P-123456,2024-01-04,yes,docs/6\" ruler.pdf\n",
			code:     exitUsage,
			stderr:   []string{`refbatch: error: manifest line 4: CSV syntax: bare " in an unquoted field`, `refbatch: hint: put a field that holds the separator`},
		},
		{
			name:     "a UTF-16 file",
			manifest: "\xff\xfes\x00o\x00u\x00",
			code:     exitUsage,
			stderr:   []string{"refbatch: error: manifest line 1: invalid UTF-8: the manifest looks like UTF-16", `"CSV UTF-8 (Comma delimited)"`},
		},
		{
			name:     "a path with backslashes",
			manifest: hdr5 + `R-0002,P-701538,2022-11-21,yes,docs\R-0002.pdf` + "\n",
			code:     exitNeedsPerson,
			stderr:   []string{`reason=missing_file detail="the file does not exist; the path holds a backslash: use / not backslash between folders"`},
			stdout:   []string{`missing_file  The file is not there. Add the file at the path, or fix the path (folders are separated by /, not \).`},
			rows:     map[string]string{"R-0002": "rejected missing_file"},
		},
		{
			name: "dates as a spreadsheet writes them",
			manifest: hdr5 + "R-0002,P-701538,21/11/2022,yes,docs/R-0002.pdf\nR-0004,P-499081,2019-7-11,yes,docs/R-0004.pdf\n" +
				"R-0005,P-154350,7 July 2020,yes,docs/R-0005.pdf\n",
			code: exitNeedsPerson,
			stderr: []string{`line=2 source_id=R-0002 reason=bad_date detail="column referral_date: want YYYY-MM-DD" why="referral_date is not a real YYYY-MM-DD date. Write the date as YYYY-MM-DD, a day that exists (2024-02-30 does not)."`,
				"line=3 source_id=R-0004 reason=bad_date", "line=4 source_id=R-0005 reason=bad_date"},
			stdout: []string{"rejected   3  bad_date 3", "bad_date  referral_date is not a real YYYY-MM-DD date. Write the date as YYYY-MM-DD"},
			rows:   map[string]string{"R-0002": "rejected bad_date", "R-0004": "rejected bad_date", "R-0005": "rejected bad_date"},
		},
		{
			name:     "CR-only line ends (old Mac OS) are read as line ends",
			manifest: "source_id,participant_id,referral_date,consent,path,sha256\r" + noYes + ",\r" + `R-0002,P-701538,2022-11-21,yes,docs\R-0002.pdf` + "\r",
			code:     exitNeedsPerson,
			stderr:   []string{"line=2 source_id=R-0003 reason=no_consent", "line=3 source_id=R-0002 reason=missing_file"},
			stdout:   []string{"rows         2\n"},
			rows:     map[string]string{"R-0003": "rejected no_consent", "R-0002": "rejected missing_file"},
		},
		{
			name:     "mixed line ends after a byte order mark",
			manifest: "\xef\xbb\xbf" + strings.ReplaceAll(hdr5, "\n", "\r") + noYes + "\n\r" + `R-0002,P-701538,2022-11-21,yes,docs\R-0002.pdf` + "\r\n",
			code:     exitNeedsPerson,
			stderr:   []string{"line=2 source_id=R-0003 reason=no_consent", "line=4 source_id=R-0002 reason=missing_file"},
			rows:     map[string]string{"R-0003": "rejected no_consent", "R-0002": "rejected missing_file"},
		},
		{
			name:     "a header and no rows is refused, not an empty batch",
			manifest: hdr5,
			code:     exitUsage,
			stderr:   []string{"refbatch: error: manifest: no rows below the header", "refbatch: hint: "},
		},
		{
			name:     "a header and blank rows only is refused",
			manifest: hdr5 + ",,,,\n,,,,\n",
			code:     exitUsage,
			stderr:   []string{"refbatch: error: manifest: no rows below the header (2 blank records skipped: every column empty)"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			manifest := filepath.Join(dir, "manifest.csv")
			if err := os.WriteFile(manifest, []byte(tc.manifest), 0o600); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "out")
			// runArgs's 72 DPI: R-0006, the one document read, still
			// reads done.
			r := refbatch(t, nil, append(runArgs(out, "--root", sampleDir(t)), manifest)...)
			if r.code != tc.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, tc.code, r.stdout, r.stderr)
			}
			for _, s := range tc.stderr {
				if !strings.Contains(r.stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, r.stderr)
				}
			}
			for _, s := range tc.stdout {
				if !strings.Contains(r.stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, r.stdout)
				}
			}
			for _, id := range []string{"P-790373", "P-590334", "P-123456", "P-701538"} {
				if strings.Contains(r.stderr, id) || strings.Contains(r.stdout, id) {
					t.Errorf("the output names participant ID %s", id)
				}
			}
			if tc.rows == nil {
				if _, err := os.Stat(out); !os.IsNotExist(err) {
					t.Errorf("the output folder exists (%v): the run did work", err)
				}
				if strings.Contains(r.stderr, "row admitted") || strings.Contains(r.stderr, "row rejected") {
					t.Errorf("rows were admitted:\n%s", r.stderr)
				}
				return
			}
			got := map[string]string{}
			for _, row := range readReport(t, out).Rows {
				got[row.SourceID] = string(row.State) + " " + string(row.Reason)
			}
			if !maps.Equal(got, tc.rows) {
				t.Errorf("rows recorded %v, want %v", got, tc.rows)
			}
		})
	}
}

// hdr5 is the manifest header without the optional sha256.
const hdr5 = "source_id,participant_id,referral_date,consent,path\n"

// TestLanguageCheckedFirst: a --lang whose traineddata is not installed
// stops the run before any row is admitted, with exit 2, the installed
// languages and the Debian package to install.
func TestLanguageCheckedFirst(t *testing.T) {
	_, installed, err := ocr.Languages()
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(installed, "fra") {
		t.Skip("French is installed here")
	}
	manifest := filepath.Join(sampleDir(t), "manifest.csv")
	for _, lang := range []string{"fra", "eng+fra"} {
		t.Run(lang, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			r := refbatch(t, nil, append(sampleArgs(out, "--lang", lang), manifest)...)
			if r.code != exitUsage {
				t.Errorf("exit %d, want 2\n%s", r.code, r.stderr)
			}
			for _, s := range []string{
				"refbatch: error: no Tesseract data for fra in ",
				"(installed: " + strings.Join(installed, ", ") + ")",
				"refbatch: hint: install Debian's package: sudo apt-get install tesseract-ocr-fra; or set TESSDATA_PREFIX to the folder that holds fra.traineddata",
			} {
				if !strings.Contains(r.stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, r.stderr)
				}
			}
			if strings.Contains(r.stderr, "row admitted") || strings.Contains(r.stderr, "run started") {
				t.Errorf("the run started:\n%s", r.stderr)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("the output folder exists (%v)", err)
			}
		})
	}
}
