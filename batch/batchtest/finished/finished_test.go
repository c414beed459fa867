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
	manifest, err := Write(dir, []Row{Good("B-1", "P-200001", "2024-03-14"), noDate, doubted, crash, badDate})
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
	want := map[string]string{"B-1": "done", "B-2": "review/date_not_found", "B-3": "review/low_confidence", "B-4": "review/attempts_exhausted", "B-5": "rejected/bad_date"}
	for _, r := range rep.Rows {
		got := string(r.State)
		if r.Reason != "" {
			got += "/" + string(r.Reason)
		}
		if got != want[r.SourceID] {
			t.Errorf("%s: %s, want %s", r.SourceID, got, want[r.SourceID])
		}
		delete(want, r.SourceID)
	}
	if len(want) > 0 {
		t.Errorf("rows missing from the report: %v", want)
	}
}
