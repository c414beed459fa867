package finished

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/refbatch/refbatch/batch"
	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/report"
)

func TestMain(m *testing.M) {
	if code, ok := ChildMain(); ok {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// TestRunLeavesChosenStates: a batch of chosen rows ends with each in the
// state its text and its manifest fields choose, through the real write
// path, with no OCR.
func TestRunLeavesChosenStates(t *testing.T) {
	dir := t.TempDir()
	noDate := Good("B-2", "P-200002", "2024-03-14")
	noDate.Lines = noDate.Lines[:2]
	doubted := Good("B-3", "P-200003", "2024-03-14")
	doubted.Lines = append(doubted.Lines, "batchtest:conf=70")
	crash := Good("B-4", "P-200004", "2024-03-14")
	crash.Lines = append(crash.Lines, "batchtest:crash")
	badDate := Good("B-5", "P-200005", "2024-02-30")
	medium := Good("B-6", "P-200006", "2024-03-14")
	medium.Lines = append(medium.Lines, "batchtest:conf=85")
	manifest, err := Write(dir, []Row{Good("B-1", "P-200001", "2024-03-14"), noDate, doubted, crash, badDate, medium, Good("B-1", "P-200001", "2024-03-14")})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	o := batch.Options{Manifest: manifest, Out: out, Plaintext: true, Settings: layout.Settings{}}
	o.Attempts = 1
	if _, err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, report.JSONFile))
	if err != nil {
		t.Fatal(err)
	}
	var rep report.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	// Each row once, in manifest order (B-1's second row, a duplicate,
	// last), with its band where it has one.
	want := []string{"B-1 done high", "B-2 review/date_not_found high", "B-3 review/low_confidence low", "B-4 review/attempts_exhausted ",
		"B-5 rejected/bad_date ", "B-6 done medium", "B-1 duplicate high"}
	for i, r := range rep.Rows {
		got := r.SourceID + " " + string(r.State)
		if r.Reason != "" {
			got += "/" + string(r.Reason)
		}
		got += " " + string(r.Band)
		if i >= len(want) || got != want[i] {
			t.Errorf("row %d: %q, want %q", i, got, want[min(i, len(want)-1)])
		}
	}
	if len(rep.Rows) != len(want) {
		t.Errorf("%d rows in the report, want %d", len(rep.Rows), len(want))
	}
	if rep.Run.Versions["tesseract"] != Versions.Tesseract {
		t.Errorf("the report's engine versions %+v are not the stand-in's", rep.Run.Versions)
	}
}
