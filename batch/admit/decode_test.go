package admit

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

// TestDecodePipeline: a stream's filters applied up to its image codec,
// the rest as the renderer reads it, and what is left to the codec.
func TestDecodePipeline(t *testing.T) {
	t.Parallel()
	f := func(names ...string) []types.PDFFilter {
		var out []types.PDFFilter
		for _, n := range names {
			out = append(out, types.PDFFilter{Name: n})
		}
		return out
	}
	png := types.PDFFilter{Name: "FlateDecode", DecodeParms: types.Dict{"Predictor": types.Integer(12), "Columns": types.Integer(2)}}
	for _, c := range []struct {
		name    string
		raw     []byte
		filters []types.PDFFilter
		want    string
		codec   string
	}{
		{"none", []byte("q Q"), nil, "q Q", ""},
		{"ASCII hex", []byte("41 42>"), f("ASCIIHexDecode"), "AB", ""},
		{"abbreviated", []byte("41 42>"), f("AHx"), "AB", ""},
		{"ASCII85", []byte("87cURD]i,\"Ebo80~>"), f("A85"), "Hello World!", ""},
		{"run length", []byte{2, 'a', 'b', 'c', 254, 'x', 128}, f("RL"), "abcxxx", ""},
		{"flate", deflate([]byte("q Q")), f("Fl"), "q Q", ""},
		{"flate that does not start", []byte("not zlib"), f("FlateDecode"), "", ""},
		{"a PNG predictor", deflate([]byte{0, 1, 2, 2, 1, 1}), []types.PDFFilter{png}, "\x01\x02\x02\x03", ""},
		{"a filter no one knows", []byte("q Q"), f("Crypt", "NoSuchDecode"), "q Q", ""},
		{"two in a row", deflate([]byte("41 42>")), f("FlateDecode", "ASCIIHexDecode"), "AB", ""},
		{"up to the codec", []byte("41 42>"), f("ASCIIHexDecode", "DCTDecode", "FlateDecode"), "AB", "DCTDecode"},
		{"JPEG 2000", []byte("x"), f("JPXDecode"), "x", "JPXDecode"},
		{"JBIG2", []byte("x"), f("JBIG2Decode"), "x", "JBIG2Decode"},
		{"CCITT", []byte("x"), f("CCF"), "x", "CCITTFaxDecode"},
	} {
		r, cd, err := decode(c.raw, c.filters, &budget{left: 1 << 20})
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		got, err := io.ReadAll(r)
		if err != nil || string(got) != c.want || cd.name != c.codec {
			t.Errorf("%s: %q, %v, codec %q; want %q, codec %q", c.name, got, err, cd.name, c.want, c.codec)
		}
	}
	for _, c := range []struct {
		columns int
		err     error
	}{{4 << 20, nil}, {4<<20 + 1, errPredictorRow}} {
		p := types.PDFFilter{Name: "FlateDecode", DecodeParms: types.Dict{"Predictor": types.Integer(12), "Columns": types.Integer(c.columns)}}
		if _, _, err := decode(deflate(nil), []types.PDFFilter{p}, &budget{left: 1 << 20}); !errors.Is(err, c.err) {
			t.Errorf("a predictor row of %d bytes: %v; want %v", c.columns, err, c.err)
		}
	}
}

// TestBudgetReader: a file's decode budget may be spent to the byte, not
// past it, and once past it every read fails.
func TestBudgetReader(t *testing.T) {
	t.Parallel()
	b := &budget{left: 4}
	if got, err := io.ReadAll(budgetReader{strings.NewReader("abcd"), b}); err != nil || string(got) != "abcd" {
		t.Errorf("to the byte: %q, %v", got, err)
	}
	b = &budget{left: 3}
	if _, err := io.ReadAll(budgetReader{strings.NewReader("abcd"), b}); !errors.Is(err, errOverBudget) {
		t.Errorf("a byte past: %v; want over the budget", err)
	}
	if n, err := (budgetReader{strings.NewReader("e"), b}).Read(make([]byte, 1)); n != 0 || !errors.Is(err, errOverBudget) {
		t.Errorf("a read once past: %d, %v; want none, over the budget", n, err)
	}
	if _, err := readAll(budgetReader{strings.NewReader("abcd"), &budget{left: 2}}, &budget{left: 100}); !errors.Is(err, errOverBudget) {
		t.Errorf("readAll past the budget: %v", err)
	}
	if got, err := readAll(io.MultiReader(strings.NewReader("ab"), iotestErr{}), &budget{left: 100}); err != nil || string(got) != "ab" {
		t.Errorf("readAll of a broken stream: %q, %v; want what came before, no error", got, err)
	}
}

type iotestErr struct{}

func (iotestErr) Read([]byte) (int, error) { return 0, errors.New("broken") }
