package manifest

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestStdinManifest: the bytes ReadStdin kept are the manifest "-" for
// every reader, an index's Row included; more than MaxStdinBytes is
// refused.
func TestStdinManifest(t *testing.T) {
	csv := "source_id,participant_id,referral_date,consent,path\nR-1,P-1,2024-01-01,yes,a.pdf\nR-2,P-2,2024-01-02,yes,b.pdf\n"
	sum, err := ReadStdin(strings.NewReader(csv))
	if err != nil || len(sum) != 64 {
		t.Fatalf("ReadStdin: %q, %v", sum, err)
	}
	st, err := ScanFile(Stdin)
	if err != nil || st.Rows != 2 {
		t.Fatalf("ScanFile(-): %d rows, %v; want 2", st.Rows, err)
	}
	x, err := NewIndex(Stdin)
	if err != nil {
		t.Fatal(err)
	}
	row, ok, err := x.Row(3)
	if err != nil || !ok || row.SourceID != "R-2" {
		t.Errorf("Row(3) of -: %+v, %v, %v", row, ok, err)
	}
	if _, err := ReadStdin(bytes.NewReader(make([]byte, MaxStdinBytes+1))); !errors.Is(err, ErrStdinTooLarge) {
		t.Errorf("a manifest over the limit: %v, want ErrStdinTooLarge", err)
	}
}
