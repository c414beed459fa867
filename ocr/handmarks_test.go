package ocr

import (
	"testing"
)

// TestBaselineWanderDescenders: a line of print whose every fourth
// letter descends stands on its line: the descenders are left out of the
// fit, not only of the mean. Fitted with them, the line sat below the
// other letters, which then strayed from it by an eighth of their height,
// as a hand's do, and a letterhead with a "J", a "p" and a "y" was taken
// for writing.
func TestBaselineWanderDescenders(t *testing.T) {
	var print, hand [][4]int
	for i := range 20 {
		bottom := 100
		if i%4 == 3 {
			bottom = 108 // a descender
		}
		print = append(print, [4]int{20 * i, bottom - 20, 20*i + 15, bottom})
		hand = append(hand, [4]int{20 * i, 80 + []int{0, 3, -2, 4, -3}[i%5], 20*i + 15, 100 + []int{0, 3, -2, 4, -3}[i%5]})
	}
	if w := levelWander(print) / 20; w > 0.01 {
		t.Errorf("print with descenders wanders %.3f of its height, want none", w)
	}
	if w := levelWander(hand) / 20; w < capsWander {
		t.Errorf("a hand's letters, each on its own baseline, wander %.3f, want %v or more", w, capsWander)
	}
}

// TestUnreadNearIgnoresLinesAndPrint: under a signature, the unread ink of
// its flourish (a line many times wider than tall) and a capital of its
// printed name (a third taller than the print's median glyph, which
// lower-case letters set) are not the rest of a note; a word-sized piece
// of the same ink, unread, is.
func TestUnreadNearIgnoresLinesAndPrint(t *testing.T) {
	const w, h = 600, 300
	sig := [4]int{100, 100, 400, 140}
	for _, tc := range []struct {
		name  string
		piece [4]int
		want  bool
	}{
		{"a flourish under it", [4]int{60, 150, 420, 162}, false},
		{"a capital of the printed name", [4]int{80, 150, 97, 168}, false},
		{"a written word", [4]int{150, 150, 210, 178}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			look := &handLook{f: 1, wdpi: 100, small: &grayImage{w: w, h: h}, mask: make([]byte, w*h), printH: 14}
			b := tc.piece
			for y := b[1]; y < b[3]; y++ {
				for x := b[0]; x < b[2]; x++ {
					look.mask[y*w+x] = 1
				}
			}
			look.lines = []handLine{{box: b, comps: [][4]int{b}, inks: []int{(b[2] - b[0]) * (b[3] - b[1])}, ink: 1}}
			if got := look.unreadNear(sig, 1, nil, make([]byte, w*h)); got != tc.want {
				t.Errorf("unreadNear = %v, want %v", got, tc.want)
			}
		})
	}
}
