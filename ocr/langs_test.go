package ocr

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestLanguages asks the real library where its data is and what it
// holds: eng and osd, which refbatch needs, are installed wherever its
// tests run.
func TestLanguages(t *testing.T) {
	dir, langs, err := Languages()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "eng.traineddata")); err != nil {
		t.Errorf("data folder %s: %v", dir, err)
	}
	for _, l := range []string{"eng", OSDLanguage} {
		if !slices.Contains(langs, l) {
			t.Errorf("installed languages %v lack %s", langs, l)
		}
	}
}

func TestCheckLanguages(t *testing.T) {
	_, installed, err := Languages()
	if err != nil {
		t.Fatal(err)
	}
	const absent = "qqa" // an ISO 639 code reserved for local use: no traineddata has it
	tests := []struct {
		lang        string
		orientation bool
		missing     []string
	}{
		{"eng", true, nil},
		{"eng+~" + absent, false, nil},
		{absent, false, []string{absent}},
		{"eng+" + absent + "+" + absent, true, []string{absent}},
		{absent + "+qqb", false, []string{absent, "qqb"}},
	}
	for _, tt := range tests {
		err := CheckLanguages(tt.lang, tt.orientation)
		var le *LanguageError
		switch {
		case tt.missing == nil && err != nil:
			t.Errorf("%s: %v", tt.lang, err)
		case tt.missing != nil && !errors.As(err, &le):
			t.Errorf("%s: got %v, want a *LanguageError", tt.lang, err)
		case tt.missing != nil && (!slices.Equal(le.Missing, tt.missing) || !slices.Equal(le.Installed, installed) || le.Dir == ""):
			t.Errorf("%s: got %+v, want missing %v", tt.lang, le, tt.missing)
		}
	}

	// TESSDATA_PREFIX moves the folder, for the check as for the workers.
	empty := t.TempDir() + "/"
	t.Setenv("TESSDATA_PREFIX", empty)
	err = CheckLanguages("eng", true)
	var le *LanguageError
	if !errors.As(err, &le) || le.Dir != empty || len(le.Installed) != 0 || !slices.Equal(le.Missing, []string{"eng", OSDLanguage}) {
		t.Errorf("with an empty TESSDATA_PREFIX: got %v", err)
	}
}
