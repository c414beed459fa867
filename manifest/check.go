package manifest

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/refbatch/refbatch/report/outcome"
)

// This file checks one row's values, in the order of precedence the
// package doc gives.

// check validates vals in the documented order of precedence and fills the
// parsed fields of row. It returns the first problem found.
func check(row *Row, vals *[numColumns]string) *RowError {
	for c := range numRequired {
		if vals[c] == "" {
			return &RowError{Field: columnNames[c], Reason: outcome.MissingField, Detail: "empty or absent"}
		}
	}
	if detail := checkDate(vals[colReferralDate]); detail != "" {
		return &RowError{Field: ColReferralDate, Reason: outcome.BadDate, Detail: detail}
	}
	consent, err := ParseConsent(vals[colConsent])
	if err != nil {
		return &RowError{Field: ColConsent, Reason: outcome.BadConsent, Detail: err.Error()}
	}
	row.Consent = consent
	if sum := vals[colSHA256]; sum != "" {
		if detail := checkSHA256(sum); detail != "" {
			return &RowError{Field: ColSHA256, Reason: outcome.BadSHA256, Detail: detail}
		}
		row.SHA256 = asciiLower(sum)
	}
	if !consent {
		return &RowError{Field: ColConsent, Reason: outcome.NoConsent, Detail: "consent is no"}
	}
	return nil
}

// errBadConsent leaves the value out on purpose (see the package doc).
var errBadConsent = errors.New("consent must be yes/no, true/false, y/n or 1/0")

// ParseConsent reads a consent value: yes/no, true/false, y/n or 1/0, in any
// case, with surrounding white space ignored. Anything else is an error that
// does not quote s.
func ParseConsent(s string) (bool, error) {
	switch asciiLower(strings.TrimSpace(s)) {
	case "yes", "true", "y", "1":
		return true, nil
	case "no", "false", "n", "0":
		return false, nil
	}
	return false, errBadConsent
}

// checkDate returns "" when s is a real calendar date written YYYY-MM-DD,
// otherwise what is wrong with it. time.Parse would do, but this spells out
// the rules and reports the problem without echoing the value.
func checkDate(s string) string {
	const form = "want YYYY-MM-DD"
	if len(s) != len("2006-01-02") || s[4] != '-' || s[7] != '-' {
		return form
	}
	num := func(p string) (int, bool) {
		n := 0
		for i := 0; i < len(p); i++ {
			if p[i] < '0' || p[i] > '9' {
				return 0, false
			}
			n = n*10 + int(p[i]-'0')
		}
		return n, true
	}
	y, ok1 := num(s[0:4])
	mo, ok2 := num(s[5:7])
	d, ok3 := num(s[8:10])
	switch {
	case !ok1 || !ok2 || !ok3:
		return form
	case y == 0:
		return "year 0000 does not exist"
	case mo < 1 || mo > 12:
		return "month out of range"
	case d < 1 || d > daysIn(mo, y):
		return "day out of range for the month"
	}
	return ""
}

func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// checkSHA256 returns "" when s is 64 hex digits, otherwise what is wrong.
func checkSHA256(s string) string {
	if len(s) != 64 {
		return fmt.Sprintf("want 64 hex digits, got %d bytes", len(s))
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return fmt.Sprintf("want 64 hex digits, byte %d is not hex", i+1)
		}
	}
	return ""
}

// asciiLower lowercases ASCII letters only. strings.ToLower would also fold
// look-alikes such as the Kelvin sign into ASCII, accepting values that do
// not spell a column name or a consent word.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// validPrefix returns the length of the longest valid UTF-8 prefix of s.
func validPrefix(s string) int {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return len(s)
}
