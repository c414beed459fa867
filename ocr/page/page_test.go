package page

import (
	"errors"
	"math"
	"testing"
)

// TestFitDPI is the one table of the render-resolution rule, which
// admission and the OCR worker both follow.
func TestFitDPI(t *testing.T) {
	def := Default()
	with := func(dpi, minDPI int, maxPixels int64) Policy {
		return Policy{DPI: dpi, MinDPI: minDPI, MaxPagePixels: maxPixels}
	}
	tests := []struct {
		name     string
		p        Policy
		wPt, hPt float64
		want     int
		wantOK   bool
	}{
		{"letter fits at 300", def, 612, 792, 300, true},
		{"empty page", def, 0, 0, 300, true},
		{"a negative size counts as empty", def, -5, 792, 300, true},
		{"exactly 50 Mpx at 250 dpi", def, 72 * 20, 72 * 40, 250, true},
		{"30 inches square is lowered to fit", def, 2160, 2160, 235, true},
		{"just fits at the minimum", def, 72 * 47, 72 * 47, 150, true},
		{"over the cap even at the minimum", def, 72 * 48, 72 * 48, 0, false},
		{"hugemono's page", def, 8400, 8400, 0, false},
		{"exactly at the cap", with(100, 50, 10_000), 72, 72, 100, true},
		{"one pixel over the cap", with(100, 50, 9_999), 72, 72, 99, true},
		{"the minimum itself fits", with(100, 50, 2_500), 72, 72, 50, true},
		{"just under the minimum", with(100, 50, 2_499), 72, 72, 0, false},
		{"rounding outwards counts", with(300, 150, 2552*3300), 612.5, 792, 299, true},
		{"MuPDF's tolerance rounds a hair over down", with(72, 72, 100), 10.0000001, 10, 72, true},
		{"long thin page", with(300, 72, 10_000_000), 100, 20000, 160, true},
		{"a minimum above the dpi fits nothing", with(100, 150, 50_000_000), 612, 792, 0, false},
		{"no cap fits only empty pages", with(300, 150, 0), 612, 792, 0, false},
		{"not a number", def, math.NaN(), 792, 0, false},
		{"infinite", def, math.Inf(1), 792, 0, false},
		{"minus infinity", def, math.Inf(-1), 792, 0, false},
		{"infinite beside empty", def, math.Inf(1), 0, 0, false},
		{"too large for any integer", def, 1e300, 1e300, 0, false},
		{"a dpi no int64 pixel count holds", with(math.MaxInt32, math.MaxInt32-2, math.MaxInt64), 1e9, 1e9, 0, false},
		{"tiny page at a very high dpi", with(12277, 2396, 552_000_000), 0.0068, 3.76e6, 10570, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.p.FitDPI(tt.wPt, tt.hPt)
			if got != tt.want || ok != tt.wantOK {
				t.Fatalf("FitDPI(%g, %g) under %+v = %d, %t; want %d, %t", tt.wPt, tt.hPt, tt.p, got, ok, tt.want, tt.wantOK)
			}
			if !ok {
				return
			}
			if px := Pixels(tt.wPt, tt.hPt, got); px > float64(tt.p.MaxPagePixels) {
				t.Errorf("%g pixels at %d dpi, over the cap %d", px, got, tt.p.MaxPagePixels)
			}
			if got < tt.p.DPI {
				if px := Pixels(tt.wPt, tt.hPt, got+1); px <= float64(tt.p.MaxPagePixels) {
					t.Errorf("%d dpi fits too (%g pixels): not the highest", got+1, px)
				}
			}
		})
	}
}

func TestPixels(t *testing.T) {
	tests := []struct {
		w, h float64
		dpi  int
		want float64
	}{
		{612, 792, 300, 2550 * 3300},
		{612, 792, 72, 612 * 792},
		{612.5, 792, 300, 2553 * 3300},
		{0, 792, 300, 0},
		{10.0000001, 10, 72, 100},
	}
	for _, tt := range tests {
		if got := Pixels(tt.w, tt.h, tt.dpi); got != tt.want {
			t.Errorf("Pixels(%g, %g, %d) = %g; want %g", tt.w, tt.h, tt.dpi, got, tt.want)
		}
	}
}

func TestWithDefaults(t *testing.T) {
	tests := []struct {
		name string
		p    Policy
		want Policy
	}{
		{"zero", Policy{}, Policy{Lang: "eng", DPI: 300, MinDPI: 150, MaxPagePixels: 50_000_000, FirstDPI: 200, CoverConfidence: 30}},
		{"a low dpi lowers the minimum", Policy{DPI: 100}, Policy{Lang: "eng", DPI: 100, MinDPI: 100, MaxPagePixels: 50_000_000, FirstDPI: 200, CoverConfidence: 30}},
		{"set fields are kept", Policy{Lang: "deu", DPI: 200, MinDPI: 120, MaxPagePixels: 1, NoDeskew: true, FirstDPI: 100, Cascade: true, CoverConfidence: 55},
			Policy{Lang: "deu", DPI: 200, MinDPI: 120, MaxPagePixels: 1, NoDeskew: true, FirstDPI: 100, Cascade: true, CoverConfidence: 55}},
		{"invalid values are kept for Validate", Policy{DPI: -1, MaxPagePixels: -1, FirstDPI: -1, CoverConfidence: -1},
			Policy{Lang: "eng", DPI: -1, MinDPI: -1, MaxPagePixels: -1, FirstDPI: -1, CoverConfidence: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.WithDefaults(); got != tt.want {
				t.Errorf("WithDefaults() = %+v; want %+v", got, tt.want)
			}
		})
	}
	if Default() != (Policy{}).WithDefaults() {
		t.Errorf("Default() = %+v", Default())
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		p       Policy
		setting string // "" when valid
	}{
		{"defaults", Default(), ""},
		{"dpi at the minimum", Policy{Lang: "eng", DPI: 150, MinDPI: 150, MaxPagePixels: 1, FirstDPI: 200}, ""},
		{"several languages", Policy{Lang: "eng+deu", DPI: 300, MinDPI: 150, MaxPagePixels: 1, FirstDPI: 200}, ""},
		{"zero policy", Policy{}, "dpi"},
		{"negative dpi", Policy{Lang: "eng", DPI: -300, MinDPI: 150, MaxPagePixels: 1}, "dpi"},
		{"minimum above dpi", Policy{Lang: "eng", DPI: 100, MinDPI: 150, MaxPagePixels: 1}, "min_dpi"},
		{"zero minimum", Policy{Lang: "eng", DPI: 100, MaxPagePixels: 1}, "min_dpi"},
		{"zero cap", Policy{Lang: "eng", DPI: 300, MinDPI: 150}, "max_page_pixels"},
		{"negative cap", Policy{Lang: "eng", DPI: 300, MinDPI: 150, MaxPagePixels: -1}, "max_page_pixels"},
		{"no language", Policy{DPI: 300, MinDPI: 150, MaxPagePixels: 1}, "lang"},
		{"an empty language among several", Policy{Lang: "eng+", DPI: 300, MinDPI: 150, MaxPagePixels: 1}, "lang"},
		{"an empty language first", Policy{Lang: "+eng", DPI: 300, MinDPI: 150, MaxPagePixels: 1}, "lang"},
		{"a first resolution above the dpi reads once", Policy{Lang: "eng", DPI: 150, MinDPI: 150, MaxPagePixels: 1, FirstDPI: 200}, ""},
		{"zero first resolution", Policy{Lang: "eng", DPI: 300, MinDPI: 150, MaxPagePixels: 1}, "first_dpi"},
		{"cover confidence over 100", Policy{Lang: "eng", DPI: 300, MinDPI: 150, MaxPagePixels: 1, FirstDPI: 200, CoverConfidence: 101}, "cover_confidence"},
		{"negative cover confidence", Policy{Lang: "eng", DPI: 300, MinDPI: 150, MaxPagePixels: 1, FirstDPI: 200, CoverConfidence: -1}, "cover_confidence"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.p.Validate()
			var se *SettingError
			switch {
			case tt.setting == "" && err != nil:
				t.Fatalf("Validate() = %v; want nil", err)
			case tt.setting == "":
			case !errors.As(err, &se):
				t.Fatalf("Validate() = %v; want a *SettingError for %s", err, tt.setting)
			case se.Setting != tt.setting:
				t.Fatalf("Validate() = %v; want it about %s", err, tt.setting)
			}
		})
	}
}

// TestRecorded pins the names a policy is recorded under: they are in
// every report and artifact written so far, and the policy version is a
// hash of them.
func TestRecorded(t *testing.T) {
	p := Policy{Lang: "eng", DPI: 300, MinDPI: 150, MaxPagePixels: 7, NoDeskew: true, ForceOCR: true, FirstDPI: 200, Cascade: true, CoverConfidence: 40}
	want := []Setting{
		{"lang", "eng"}, {"dpi", 300}, {"min_dpi", 150}, {"max_page_pixels", int64(7)}, {"force_ocr", true},
		{"orientation", true}, {"deskew", false}, {"despeckle", true}, {"coverage", true},
		{"first_dpi", 200}, {"cascade", true}, {"recovery", true}, {"cover_confidence", 40},
	}
	got := p.Recorded()
	if len(got) != len(want) {
		t.Fatalf("Recorded() = %v; want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("Recorded()[%d] = %#v; want %#v", i, got[i], want[i])
		}
	}
}

// TestFirstPassDPI: a page is read first at FirstDPI only when that is
// under the resolution it renders at, and only under the cascade, which
// is off by default.
func TestFirstPassDPI(t *testing.T) {
	cascade := Default()
	cascade.Cascade = true
	tests := []struct {
		name string
		p    Policy
		dpi  int
		want int
	}{
		{"the default reads once", Default(), 300, 300},
		{"the cascade reads 300 dpi pages first at 200", cascade, 300, 200},
		{"a page lowered under the first resolution reads once", cascade, 180, 180},
		{"a page at the first resolution reads once", cascade, 200, 200},
		{"no cascade reads once", Policy{FirstDPI: 200}, 300, 300},
		{"an unset first resolution reads once", Policy{}, 300, 300},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.FirstPassDPI(tt.dpi); got != tt.want {
				t.Errorf("FirstPassDPI(%d) = %d; want %d", tt.dpi, got, tt.want)
			}
		})
	}
}

func TestOverlay(t *testing.T) {
	run := Policy{Lang: "deu", DPI: 60, MinDPI: 60, NoDeskew: true}
	got, err := run.Overlay(Policy{DPI: 400, Lang: "eng", ForceOCR: true}, []string{"dpi", "force_ocr"})
	if err != nil {
		t.Fatal(err)
	}
	want := Policy{Lang: "deu", DPI: 400, MinDPI: 60, NoDeskew: true, ForceOCR: true}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if _, err := run.Overlay(Policy{}, []string{"workers"}); err == nil {
		t.Error("a name the policy does not have was taken")
	}
}
