package review

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
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
			p, err := retryPolicy(j, tt.over, tt.set, nil)
			if err != nil || p.Cascade != tt.want {
				t.Errorf("retryPolicy: cascade %t, %v; want %t", p.Cascade, err, tt.want)
			}
		})
	}
}

// TestRetryLanguageChecked: a retry that sets the language is checked by
// the function the caller passes (ocr.CheckLanguages in the CLI and the
// desk), and refused without one; a retry that does not set it is not
// checked.
func TestRetryLanguageChecked(t *testing.T) {
	j, err := journal.Open(filepath.Join(t.TempDir(), layout.JournalFile))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	missing := errors.New("missing")
	var asked []string
	check := func(lang string, orientation bool) error {
		asked = append(asked, fmt.Sprintf("%s %t", lang, orientation))
		return missing
	}
	var le *LanguageError
	if _, err := retryPolicy(j, page.Policy{Lang: "eng+zzz"}, []string{"lang"}, check); !errors.Is(err, missing) || !errors.As(err, &le) {
		t.Errorf("retry --lang: %v, want the check's error as a *LanguageError", err)
	}
	if want := []string{"eng+zzz true"}; !slices.Equal(asked, want) {
		t.Errorf("checked %q, want %q", asked, want)
	}
	if _, err := retryPolicy(j, page.Policy{Lang: "eng"}, []string{"lang"}, nil); err == nil {
		t.Error("retry --lang without a check: no error, want a refusal")
	}
	if _, err := retryPolicy(j, page.Policy{DPI: 400}, []string{"dpi"}, check); err != nil || len(asked) != 1 {
		t.Errorf("retry --dpi: %v, %d checks; want no error and no check", err, len(asked)-1)
	}
}
