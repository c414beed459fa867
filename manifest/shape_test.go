package manifest

import (
	"slices"
	"testing"
)

func TestShapedLike(t *testing.T) {
	for _, tc := range []struct {
		name, text, id string
		want           []string
	}{
		{"another ID", "Patient ID: P-701538, seen 2024", "P-000000", []string{"P-701538"}},
		{"the ID itself is not a candidate", "ID P-000000 and p-000000", "P-000000", nil},
		{"none printed", "Dear colleague, please see Mrs Smith.", "P-000000", nil},
		{"inside a longer code", "REF-P-7015389", "P-000000", nil},
		{"twice, once listed", "P-111111 P-111111 Q-222222", "P-000000", []string{"P-111111", "Q-222222"}},
		{"letters only match nothing", "Smith Jones", "ABCDE", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ShapedLike(tc.text, tc.id); !slices.Equal(got, tc.want) {
				t.Errorf("ShapedLike = %q, want %q", got, tc.want)
			}
		})
	}
	if s := Shape("P-701538"); s != "A-999999" {
		t.Errorf("Shape = %q", s)
	}
}

func TestDates(t *testing.T) {
	got := Dates("Referred 14/03/2024, seen 2024-03-20 and on 3 April 2024; March 5, 2024. Tel 0161 555 0101")
	want := []string{"14/03/2024", "2024-03-20", "3 April 2024", "March 5, 2024"}
	if !slices.Equal(got, want) {
		t.Errorf("Dates = %q, want %q", got, want)
	}
}
