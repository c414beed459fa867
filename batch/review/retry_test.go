package review

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/ocr/page"
)

// TestRetryPolicyCascade: `review retry` takes the latest run's cascade
// unless told: --cascade turns it on, --no-cascade (set as no_cascade)
// off, and a --dpi without --cascade reads at that resolution only. A run
// of a build that stored no_cascade false read under the cascade.
func TestRetryPolicyCascade(t *testing.T) {
	j, err := journal.Open(filepath.Join(t.TempDir(), layout.JournalFile))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	stored := fmt.Sprintf(`{"format":%d,"policy":{"lang":"eng","dpi":300,"first_dpi":200,"no_cascade":false}}`, layout.SettingsFormat)
	if _, err := j.StartRun(journal.Owner("t"), stored, "{}"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		over page.Policy
		set  []string
		want bool
	}{
		{"no flags: the run's cascade", page.Policy{}, nil, true},
		{"--no-cascade", page.Policy{}, []string{"no_cascade"}, false},
		{"--dpi alone", page.Policy{DPI: 400}, []string{"dpi"}, false},
		{"--dpi with --cascade", page.Policy{DPI: 400, Cascade: true}, []string{"dpi", "cascade"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := retryPolicy(j, tt.over, tt.set)
			if err != nil || p.Cascade != tt.want {
				t.Errorf("retryPolicy: cascade %t, %v; want %t", p.Cascade, err, tt.want)
			}
		})
	}
}
