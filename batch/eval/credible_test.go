package eval

import "testing"

func TestPageWords(t *testing.T) {
	got := pageWords([]WordRead{{"Reason", 95}, {"for", 91}, {"for", 90}, {"Sey", 22}, {" ", 10}}, "Reason for referral")
	want := []scoredWord{{95, 6, true}, {91, 3, true}, {90, 3, false}, {22, 3, false}}
	if len(got) != len(want) {
		t.Fatalf("got %v; want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("word %d: got %+v; want %+v", i, got[i], want[i])
		}
	}
}

func TestSuggestCover(t *testing.T) {
	words := []scoredWord{
		{96, 10, true}, {90, 10, true}, {70, 5, true}, {45, 4, true},
		{60, 2, false}, {38, 6, false}, {20, 5, false}, {5, 3, false},
	}
	c, ok := SuggestCover(words)
	if !ok {
		t.Fatal("no suggestion")
	}
	// At 39 only the misread word at 60 (2 characters) is on the wrong
	// side; under it the one at 38 is too, above 45 the right one at 45.
	if c.Conf != 39 || c.RightChars != 29 || c.WrongChars != 16 || c.RightUnder != 0 || c.WrongAbove != 2.0/16 {
		t.Errorf("got %+v", c)
	}
	if _, ok := SuggestCover(nil); ok {
		t.Error("a suggestion without words")
	}
}
