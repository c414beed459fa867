package batch

import (
	"strings"
	"testing"

	"github.com/refbatch/refbatch/ocr"
)

func page(text string, confs ...float64) ocr.PageResult {
	p := ocr.PageResult{Text: text}
	for i, c := range confs {
		p.Words = append(p.Words, ocr.Word{Text: "word" + string(rune('a'+i)), Conf: c})
	}
	return p
}

// pageWords builds a page from (word, confidence) pairs.
func pageWords(text string, pairs ...any) ocr.PageResult {
	p := ocr.PageResult{Text: text}
	for i := 0; i < len(pairs); i += 2 {
		p.Words = append(p.Words, ocr.Word{Text: pairs[i].(string), Conf: float64(pairs[i+1].(int))})
	}
	return p
}

func TestValidate(t *testing.T) {
	o := Options{}.withDefaults()
	tests := []struct {
		name   string
		pages  []ocr.PageResult
		id     string
		state  string
		reason string
		band   string
	}{
		{"good text with the ID", []ocr.PageResult{page("Participant ID: P-123456", 95, 90, 90)}, "P-123456", "done", "", "high"},
		{"ID split by OCR whitespace", []ocr.PageResult{page("Participant ID: P- 123456", 95, 95, 95)}, "P-123456", "done", "", "high"},
		{"em dash read for the hyphen", []ocr.PageResult{page("Participant ID: P—123456", 95, 95, 95)}, "P-123456", "done", "", "high"},
		{"ID on a later page", []ocr.PageResult{page("cover", 90), page("id p-123456", 90, 90)}, "P-123456", "done", "", "high"},
		{"medium band still done", []ocr.PageResult{page("P-123456", 70, 70, 70)}, "P-123456", "done", "", "medium"},
		{"no words at all", []ocr.PageResult{page(""), page("  ")}, "P-1", "review", "empty_text", "low"},
		{"noise in a picture is no text", []ocr.PageResult{pageWords("ih By ye", "ih", 65, "By", 64, "ye", 61, "qzx", 20)}, "P-1", "review", "empty_text", "low"},
		{"low confidence wins over a missing ID", []ocr.PageResult{page("garbage", 20, 30, 70, 70, 70)}, "P-1", "review", "low_confidence", "low"},
		{"ID not found", []ocr.PageResult{page("Participant ID: P-123457", 95, 95, 95)}, "P-123456", "review", "id_not_found", "high"},
		{"O for 0 is not forgiven", []ocr.PageResult{page("P-12345O", 95, 95, 95)}, "P-123450", "review", "id_not_found", "high"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := validate(tc.pages, tc.id, o)
			if string(v.state) != tc.state || v.reason != tc.reason || v.band != tc.band {
				t.Errorf("got %s/%s band %s, want %s/%s band %s", v.state, v.reason, v.band, tc.state, tc.reason, tc.band)
			}
		})
	}
}

func TestSafeName(t *testing.T) {
	tests := []struct{ id, want string }{
		{"R-0001", "R-0001"},
		{"a.b_c", "a.b_c"},
	}
	for _, tc := range tests {
		if got := safeName(tc.id); got != tc.want {
			t.Errorf("safeName(%q) = %q, want %q", tc.id, got, tc.want)
		}
	}
	hostile := []string{"../etc/passwd", ".hidden", "a/b", "a b", "é", "", strings.Repeat("x", 200)}
	seen := map[string]string{}
	for _, id := range hostile {
		got := safeName(id)
		if strings.ContainsAny(got, "/ ") || strings.HasPrefix(got, ".") || got == "" || len(got) > 80 {
			t.Errorf("safeName(%q) = %q is not a safe file name", id, got)
		}
		if other, ok := seen[got]; ok {
			t.Errorf("safeName(%q) and safeName(%q) collide: %q", id, other, got)
		}
		seen[got] = id
	}
}
