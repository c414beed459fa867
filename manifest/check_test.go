package manifest

import (
	"strings"
	"testing"
)

// TestASCIILower: exactly A to Z are lowered, the first capital included
// wherever it is; their neighbours in ASCII (@ [ ` {) and look-alikes
// such as the Kelvin sign are left as they are.
func TestASCIILower(t *testing.T) {
	for in, want := range map[string]string{
		"A": "a", "Z": "z", "AZ": "az", "aZ": "az", "xAy": "xay", "consent YES": "consent yes",
		"@[`{": "@[`{", "az09": "az09", "\u212aelvin": "\u212aelvin", "": "",
	} {
		if got := asciiLower(in); got != want {
			t.Errorf("asciiLower(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestCheckSHA256Names: a digest with a byte that is not hex is refused
// naming that byte from 1; all of 0-9, a-f and A-F are hex.
func TestCheckSHA256Names(t *testing.T) {
	ok := strings.Repeat("0123456789abcdefABCDEF", 3)[:64]
	if msg := checkSHA256(ok); msg != "" {
		t.Errorf("checkSHA256(%s) = %q, want none", ok, msg)
	}
	for _, c := range "g/:@G`" {
		bad := ok[:2] + string(c) + ok[3:]
		if msg := checkSHA256(bad); !strings.Contains(msg, "byte 3 is not hex") {
			t.Errorf("checkSHA256 with %q third: %q, want byte 3 named", c, msg)
		}
	}
}

// TestValidPrefix: the length of the longest valid UTF-8 prefix, to the
// first byte that is not, and the whole string when all of it is.
func TestValidPrefix(t *testing.T) {
	for in, want := range map[string]int{"": 0, "abc": 3, "\xff": 0, "ab\xffcd": 2, "é\xff": 2, "é": 2, "a\xc3": 1} {
		if got := validPrefix(in); got != want {
			t.Errorf("validPrefix(%q) = %d, want %d", in, got, want)
		}
	}
}

// TestLooksLikeName: letters, spaces, _ and - only, up to 40 of them.
func TestLooksLikeName(t *testing.T) {
	for in, want := range map[string]bool{
		"participant_id": true, " Referral date ": true, strings.Repeat("a", 40): true, strings.Repeat("a", 41): false,
		"": false, "  ": false, "P-0001": false, "a.pdf": false, "2024-01-02": false,
	} {
		if got := looksLikeName(in); got != want {
			t.Errorf("looksLikeName(%q) = %v, want %v", in, got, want)
		}
	}
}
