package main

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/refbatch/refbatch/batch/journal/journaltest"
	"github.com/refbatch/refbatch/batch/standing"
	"github.com/refbatch/refbatch/report/outcome"
)

// TestManifestIsASpreadsheet is issue 48's first acceptance: a batch of
// six rows, then its manifest sorted by another column, one row deleted,
// one inserted at the top and one appended. The rerun into the same --out
// reads only the two new rows, every other row keeps its verdict at its
// new line, the deleted row (the one in review) is withdrawn: listed by
// status and the report, out of exit 4. verify proves the custody log.
// On both journals: SQLite, and PostgreSQL when REFBATCH_TEST_POSTGRES
// names one.
func TestManifestIsASpreadsheet(t *testing.T) {
	t.Parallel()
	journaltest.Each(t, testManifestIsASpreadsheet)
}

func testManifestIsASpreadsheet(t *testing.T, be journaltest.Backend) {
	dir := t.TempDir()
	var rows [][4]string
	for i := 1; i <= 6; i++ {
		rows = append(rows, tinyRow(t, dir, "S-"+string(rune('0'+i)), i))
	}
	rows[2][1] = "P-000000" // S-3: the letter prints another ID, review id_not_found
	manifest := writeRows(t, dir, rows)
	out := filepath.Join(dir, "out")
	b := onBackend(t, be, out)
	if r := refbatch(t, nil, b.run("--workers", "1", manifest)...); r.code != exitNeedsPerson {
		t.Fatalf("first run: exit %d, want 4\n%s", r.code, r.stderr)
	}

	// Sorted by participant_id, descending; S-3 deleted; S-0 inserted at
	// the top, S-7 appended.
	edited := slices.Clone(rows)
	edited = slices.Delete(edited, 2, 3)
	slices.SortFunc(edited, func(a, b [4]string) int { return strings.Compare(b[1], a[1]) })
	edited = append([][4]string{tinyRow(t, dir, "S-0", 10)}, edited...)
	edited = append(edited, tinyRow(t, dir, "S-7", 7))
	writeRows(t, dir, edited)

	r := refbatch(t, nil, b.run("--workers", "1", "--json", manifest)...)
	if r.code != exitOK {
		t.Fatalf("rerun: exit %d, want 0 (the row in review was deleted)\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var read []string
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var e struct {
			Event    string `json:"event"`
			SourceID string `json:"source_id"`
		}
		if json.Unmarshal([]byte(l), &e) == nil && e.Event == "started" {
			read = append(read, e.SourceID)
		}
	}
	slices.Sort(read)
	if !slices.Equal(read, []string{"S-0", "S-7"}) {
		t.Errorf("the rerun read %v, want only the new rows S-0 and S-7", read)
	}
	rep := readReport(t, out)
	lines := map[string]int{}
	for i, row := range edited {
		lines[row[0]] = i + 2
	}
	var withdrawn []string
	for _, row := range rep.Rows {
		if row.Withdrawn {
			withdrawn = append(withdrawn, row.SourceID)
			if row.ManifestLine != 4 || row.State != outcome.Review {
				t.Errorf("withdrawn %s: line %d, %s; want line 4, review as it was", row.SourceID, row.ManifestLine, row.State)
			}
			continue
		}
		if row.ManifestLine != lines[row.SourceID] || row.State != outcome.Done {
			t.Errorf("%s: line %d %s, want line %d done", row.SourceID, row.ManifestLine, row.State, lines[row.SourceID])
		}
		if row.Attempts != 1 {
			t.Errorf("%s: %d attempts, want 1 (moved rows keep their work)", row.SourceID, row.Attempts)
		}
	}
	if !slices.Equal(withdrawn, []string{"S-3"}) || rep.Summary.Withdrawn != 1 || rep.Summary.Rows != 7 || rep.Summary.NeedPerson != 0 {
		t.Errorf("withdrawn %v, summary rows %d withdrawn %d need person %d; want S-3, 7, 1, 0",
			withdrawn, rep.Summary.Rows, rep.Summary.Withdrawn, rep.Summary.NeedPerson)
	}
	s := refbatch(t, nil, append([]string{"status", "--json"}, b.args()...)...)
	var st standing.Status
	if err := json.Unmarshal([]byte(s.stdout), &st); err != nil {
		t.Fatalf("status --json: %v\n%s", err, s.stdout)
	}
	if len(st.Withdrawn) != 1 || st.Withdrawn[0].SourceID != "S-3" || st.Withdrawn[0].Line != 4 || st.State != "complete" {
		t.Errorf("status: withdrawn %+v, state %s", st.Withdrawn, st.State)
	}
	if text := refbatch(t, nil, append([]string{"status"}, b.args()...)...); !regexp.MustCompile(`(?m)^withdrawn +S-3 +line 4 `).MatchString(text.stdout) {
		t.Errorf("status does not list S-3 as withdrawn:\n%s", text.stdout)
	}
	if v := refbatch(t, nil, append([]string{"verify"}, b.args()...)...); v.code != exitOK {
		t.Errorf("verify: exit %d\n%s\n%s", v.code, v.stdout, v.stderr)
	}
	// Export leaves the withdrawn document out unless asked.
	export := func(extra ...string) result {
		args := append([]string{"export", "--to", filepath.Join(dir, "export"+strings.Join(extra, "")), "--format", "txt", "--state", "done,review"}, b.args()...)
		return refbatch(t, nil, append(args, extra...)...)
	}
	if e := export(); e.code != exitOK || !strings.Contains(e.stdout, "exported 7 of 7 documents") || !strings.Contains(e.stdout, "1 withdrawn from the manifest left out") {
		t.Errorf("export: exit %d\n%s%s", e.code, e.stdout, e.stderr)
	}
	if e := export("--withdrawn"); e.code != exitOK || !strings.Contains(e.stdout, "exported 8 of 8 documents") {
		t.Errorf("export --withdrawn: exit %d\n%s%s", e.code, e.stdout, e.stderr)
	}
	// The row back: restored as it was, in review again.
	writeRows(t, dir, append(edited, rows[2]))
	r = refbatch(t, nil, b.run("--workers", "1", manifest)...)
	if r.code != exitNeedsPerson || !strings.Contains(r.stdout, "1 back in the manifest (S-3), restored as it was") {
		t.Errorf("S-3 back: exit %d, want 4\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}
