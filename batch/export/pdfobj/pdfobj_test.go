package pdfobj

import "testing"

// TestUsesCMYK: DeviceCMYK set by a content stream's operators is found,
// and not in strings, comments or an inline image's data.
func TestUsesCMYK(t *testing.T) {
	t.Parallel()
	for c, want := range map[string]bool{
		"q 0 0 0 1 k 0 0 10 10 re f Q": true,
		"0 0 0 1 K":                    true,
		"/DeviceCMYK cs 0 0 0 1 sc":    true,
		"BI /W 1 /H 1 /CS /CMYK /BPC 8 ID \x00\x00\x00\xff EI": true,
		"1 0 0 rg 0 g /CS0 cs 1 sc":                            false,
		"BT (a k b) Tj ET % 0 0 0 1 k":                         false,
		"BI /W 1 /H 1 /CS /G /BPC 8 ID k EI Q":                 false,
		"[(k)] TJ <6b> Tj":                                     false,
	} {
		if got := UsesCMYK([]byte(c)); got != want {
			t.Errorf("UsesCMYK(%q) = %v, want %v", c, got, want)
		}
	}
}
