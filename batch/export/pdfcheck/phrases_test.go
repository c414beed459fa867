package pdfcheck

import "testing"

func TestPhraseRecall(t *testing.T) {
	for _, c := range []struct {
		name, got, want string
		found, of       int
	}{
		{"same text", "a b c d", "a b c d", 2, 2},
		{"other white space", "a\n b\t\tc\fd", "a b c d", 2, 2},
		{"lines reordered", "c d e\na b c", "a b c\nc d e", 2, 2},
		{"trigrams stay within a line", "a b x y c d", "a b\nc d", 0, 0},
		{"a word split", "a b c d", "a bc d", 0, 1},
		{"whole words only", "xa b cx", "a b c", 0, 1},
		{"a last word longer", "a b cd", "a b c", 0, 1},
		{"a line break after a hyphen joins", "a b multi-\ntrack c", "a b multi-track c", 2, 2},
		{"a hyphen that ends the artifact's line", "a b state-of-the-art c d", "a b state-of-the-\nart c d", 2, 2},
		{"a broken word joined without its hyphen", "x later kokend water 1 dag y", "x later kokend wa-\nter 1 dag", 3, 3},
		{"a lone hyphen breaks no word", "a b c d e", "a b -\nd e f", 0, 2},
		{"one word missing", "a b d e", "a b c d e", 0, 3},
		{"short lines have none", "a b", "a b", 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := PhraseRecall(c.got, c.want)
			if r.Found != c.found || r.Of != c.of {
				t.Errorf("PhraseRecall = %d of %d, want %d of %d", r.Found, r.Of, c.found, c.of)
			}
		})
	}
}

func TestRecallRate(t *testing.T) {
	if r := (Recall{}).Rate(); r != 1 {
		t.Errorf("no phrase: rate %v, want 1", r)
	}
	r := Recall{Found: 1, Of: 4}
	r.Add(Recall{Found: 2, Of: 4})
	if r.Rate() != 0.375 {
		t.Errorf("rate %v, want 0.375", r.Rate())
	}
}
