package admit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/refbatch/refbatch/ocr/page"
	"github.com/refbatch/refbatch/report/outcome"
)

// The test binary doubles as the admission child: testPool's children
// re-execute it with ADMIT_TEST_CHILD=1.
func TestMain(m *testing.M) {
	if os.Getenv("ADMIT_TEST_CHILD") == "1" {
		os.Exit(ServeMain())
	}
	os.Exit(m.Run())
}

// testPool is a pool of real admission children, closed with the test.
func testPool(t testing.TB, cfg PoolConfig) *Pool {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Path, cfg.Env = exe, append(cfg.Env, "ADMIT_TEST_CHILD=1")
	p := NewPool(cfg)
	t.Cleanup(func() { p.Close() })
	return p
}

// check is Check through a pool, with a background context.
func check(p *Pool, root, path, sha string, lim Limits) (*Doc, error) {
	return Check(context.Background(), root, path, sha, lim, p)
}

// testRoot builds a root folder holding the committed fixtures plus the
// files that must be made at test time, and an "outside" folder next to it
// for escapes. It returns both paths, unresolved.
func testRoot(t *testing.T) (root, outside string) {
	t.Helper()
	base := t.TempDir()
	root = filepath.Join(base, "root")
	outside = filepath.Join(base, "outside")
	for _, d := range []string{root, outside, filepath.Join(root, "sub"), filepath.Join(root, "a-dir.pdf")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(path string, b []byte) {
		t.Helper()
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name := range fixtures {
		b, err := os.ReadFile(filepath.Join(fixtureDir, name))
		if err != nil {
			t.Fatalf("%v (run with -update to write the fixtures)", err)
		}
		write(filepath.Join(root, name), b)
	}
	good := goodPDF()
	write(filepath.Join(outside, "secret.pdf"), good)
	write(filepath.Join(root, "empty.pdf"), nil)
	write(filepath.Join(root, "pages-200.pdf"), manyPages(200))
	write(filepath.Join(root, "pages-201.pdf"), manyPages(201))
	write(filepath.Join(root, "enc-aes-empty.pdf"), encryptPDF(t, good, "", true, 256))
	write(filepath.Join(root, "enc-aes-user.pdf"), encryptPDF(t, good, "user-secret", true, 256))
	write(filepath.Join(root, "enc-rc4-empty.pdf"), encryptPDF(t, good, "", false, 128))
	write(filepath.Join(root, "enc-rc4-user.pdf"), encryptPDF(t, good, "user-secret", false, 128))
	if err := syscall.Mkfifo(filepath.Join(root, "fifo.pdf"), 0o644); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{
		"link-inside.pdf":      "good.pdf",
		"link-outside.pdf":     "../outside/secret.pdf",
		"link-outside-abs.pdf": filepath.Join(outside, "secret.pdf"),
		"dangling-inside.pdf":  "sub/nope.pdf",
		"dangling-outside.pdf": "../outside/nope.pdf",
		"loop-a.pdf":           "loop-b.pdf",
		"loop-b.pdf":           "loop-a.pdf",
		"escape":               "../outside",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	return root, outside
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func TestCheck(t *testing.T) {
	root, outside := testRoot(t)
	pool := testPool(t, PoolConfig{})
	goodSHA := sha256Hex(goodPDF())
	small := DefaultLimits()
	small.MaxBytes = 100
	fiveMpx := DefaultLimits()
	fiveMpx.Page.MaxPagePixels = 5_000_000
	bigImages := DefaultLimits()
	bigImages.Page.MaxPagePixels = 500_000_000

	tests := []struct {
		name   string
		path   string
		sha    string
		lim    Limits
		reason outcome.Reason // "" means admitted
		file   string         // for an admitted file: the file Doc.Path must name, relative to root
		dpi    []int          // for an admitted file: Doc.PageDPI, whose length is the page count
	}{
		// Admitted.
		{name: "good", path: "good.pdf", file: "good.pdf", dpi: []int{300}},
		{name: "expected hash", path: "good.pdf", sha: goodSHA, file: "good.pdf", dpi: []int{300}},
		{name: "expected hash in upper case", path: "good.pdf", sha: strings.ToUpper(goodSHA), file: "good.pdf", dpi: []int{300}},
		{name: "dot-dot that stays inside", path: "sub/../good.pdf", file: "good.pdf", dpi: []int{300}},
		{name: "absolute path inside root", path: filepath.Join(root, "good.pdf"), file: "good.pdf", dpi: []int{300}},
		{name: "symlink inside root", path: "link-inside.pdf", file: "good.pdf", dpi: []int{300}},
		{name: "inherited rotate and crop box", path: "rotated.pdf", file: "rotated.pdf", dpi: []int{300, 300}},
		{name: "rotated pages under a lower cap", path: "rotated.pdf", lim: fiveMpx, file: "rotated.pdf", dpi: []int{227, 300}},
		{name: "30-inch page rendered at a lower dpi", path: "large-page.pdf", file: "large-page.pdf", dpi: []int{235}},
		{name: "broken xref repaired", path: "broken-xref.pdf", file: "broken-xref.pdf", dpi: []int{300}},
		{name: "startxref into an object repaired", path: "bad-startxref.pdf", file: "bad-startxref.pdf", dpi: []int{300}},
		{name: "junk before the header", path: "junk-header.pdf", file: "junk-header.pdf", dpi: []int{300}},
		{name: "200 pages", path: "pages-200.pdf", file: "pages-200.pdf", dpi: slices.Repeat([]int{300}, 200)},
		{name: "huge image under a higher cap", path: "huge-image.pdf", lim: bigImages, file: "huge-image.pdf", dpi: []int{300}},

		// 1. Path.
		{name: "empty path", path: "", reason: outcome.MissingFile},
		{name: "missing file", path: "nope.pdf", reason: outcome.MissingFile},
		{name: "missing file in missing folder", path: "nosuch/nope.pdf", reason: outcome.MissingFile},
		{name: "file used as a folder", path: "good.pdf/nope.pdf", reason: outcome.MissingFile},
		{name: "dangling symlink inside", path: "dangling-inside.pdf", reason: outcome.MissingFile},
		{name: "symlink loop", path: "loop-a.pdf", reason: outcome.Unreadable},
		{name: "dot-dot escape", path: "../outside/secret.pdf", reason: outcome.PathOutsideRoot},
		{name: "absolute path outside", path: filepath.Join(outside, "secret.pdf"), reason: outcome.PathOutsideRoot},
		{name: "absolute missing path outside", path: filepath.Join(outside, "nope.pdf"), reason: outcome.PathOutsideRoot},
		{name: "symlink escaping the root", path: "link-outside.pdf", reason: outcome.PathOutsideRoot},
		{name: "absolute symlink escaping the root", path: "link-outside-abs.pdf", reason: outcome.PathOutsideRoot},
		{name: "dangling symlink outside", path: "dangling-outside.pdf", reason: outcome.PathOutsideRoot},
		{name: "folder symlink escaping the root", path: "escape/secret.pdf", reason: outcome.PathOutsideRoot},
		{name: "missing file behind a folder symlink", path: "escape/nope.pdf", reason: outcome.PathOutsideRoot},
		{name: "directory", path: "a-dir.pdf", reason: outcome.NotPDF},
		{name: "root itself", path: ".", reason: outcome.NotPDF},
		{name: "fifo", path: "fifo.pdf", reason: outcome.NotPDF},

		// 2. Size.
		{name: "empty file", path: "empty.pdf", reason: outcome.EmptyFile},
		{name: "over the byte cap", path: "good.pdf", lim: small, reason: outcome.TooLarge},

		// 3. Hash.
		{name: "hash mismatch", path: "good.pdf", sha: strings.Repeat("0", 64), reason: outcome.HashMismatch},
		{name: "expected hash not hex", path: "good.pdf", sha: "not-a-hash", reason: outcome.HashMismatch},

		// 4. Signature.
		{name: "png renamed .pdf", path: "png.pdf", reason: outcome.NotPDF},
		{name: "header after 1024 bytes", path: "late-header.pdf", reason: outcome.NotPDF},

		// 5. Encryption.
		{name: "aes-256 empty user password", path: "enc-aes-empty.pdf", reason: outcome.Encrypted},
		{name: "aes-256 user password", path: "enc-aes-user.pdf", reason: outcome.Encrypted},
		{name: "rc4-128 empty user password", path: "enc-rc4-empty.pdf", reason: outcome.Encrypted},
		{name: "rc4-128 user password", path: "enc-rc4-user.pdf", reason: outcome.Encrypted},
		{name: "direct encrypt dictionary", path: "direct-encrypt.pdf", reason: outcome.Encrypted},

		// 5½. Streams pdfcpu would decode in full.
		{name: "metadata decompression bomb", path: "bomb-metadata.pdf", reason: outcome.MalformedPDF},
		{name: "object stream decompression bomb", path: "bomb-objstm.pdf", reason: outcome.MalformedPDF},
		{name: "startxref at a decompression bomb", path: "bomb-xref.pdf", reason: outcome.MalformedPDF},

		// 6. Validation.
		{name: "signature then prose", path: "prose.pdf", reason: outcome.MalformedPDF},
		{name: "truncated", path: "truncated.pdf", reason: outcome.MalformedPDF},

		// 7. Page count.
		{name: "no pages", path: "no-pages.pdf", reason: outcome.MalformedPDF},
		{name: "page-count bomb", path: "pages-201.pdf", reason: outcome.TooManyPages},

		// 8. Page size.
		{name: "giant MediaBox", path: "giant-page.pdf", reason: outcome.PageTooLarge},
		{name: "UserUnit makes the page giant", path: "userunit.pdf", reason: outcome.PageTooLarge},

		// 9. Images.
		{name: "20000x20000 bitonal image in 3 KB", path: "huge-image.pdf", reason: outcome.PageTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := check(pool, root, tt.path, tt.sha, tt.lim)
			if tt.reason != "" {
				r, ok := IsRejection(err)
				if !ok {
					t.Fatalf("Check() = %+v, %v; want a %s rejection", doc, err, tt.reason)
				}
				if r.Reason != tt.reason {
					t.Fatalf("Check() rejected with %q; want %s", r, tt.reason)
				}
				if r.Detail == "" || strings.Contains(r.Detail, root) || strings.Contains(r.Detail, filepath.Base(tt.path)) && tt.path != "" && tt.path != "." {
					t.Errorf("detail %q is empty or names the path", r.Detail)
				}
				// A file refused once read comes with its hash, for the
				// journal, but never with pages.
				if doc != nil && (doc.Pages != 0 || doc.SHA256 != sha256Hex(mustRead(t, filepath.Join(root, tt.path)))) {
					t.Errorf("Check() returned %+v with a %s rejection", doc, tt.reason)
				}
				return
			}
			if err != nil {
				t.Fatalf("Check() error = %v; want admitted", err)
			}
			want, err := filepath.EvalSymlinks(filepath.Join(root, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(want)
			if err != nil {
				t.Fatal(err)
			}
			if doc.Path != want || doc.Size != int64(len(b)) || doc.SHA256 != sha256Hex(b) {
				t.Errorf("Check() = {Path %s, Size %d, SHA256 %s}; want {%s, %d, %s}",
					doc.Path, doc.Size, doc.SHA256, want, len(b), sha256Hex(b))
			}
			if doc.Pages != len(tt.dpi) || !slices.Equal(doc.PageDPI, tt.dpi) {
				t.Errorf("Check() pages = %d, dpi %v; want %d, %v", doc.Pages, doc.PageDPI, len(tt.dpi), tt.dpi)
			}
		})
	}
}

// TestCheckRootSymlink checks that a root reached through a symlink works
// with relative and absolute manifest paths, and that Doc.Path is resolved.
func TestCheckRootSymlink(t *testing.T) {
	root, _ := testRoot(t)
	pool := testPool(t, PoolConfig{})
	link := filepath.Join(t.TempDir(), "root-link")
	if err := os.Symlink(root, link); err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(filepath.Join(root, "good.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"good.pdf", filepath.Join(link, "good.pdf"), filepath.Join(root, "good.pdf")} {
		doc, err := check(pool, link, path, "", DefaultLimits())
		if err != nil {
			t.Fatalf("Check(%s) error = %v", path, err)
		}
		if doc.Path != real {
			t.Errorf("Check(%s).Path = %s; want %s", path, doc.Path, real)
		}
	}
}

// TestCheckUnexpectedErrors checks that problems that are not the file's
// fault are plain errors, never rejections, and that a file that exists
// but cannot be read is the row's problem: unreadable.
func TestCheckUnexpectedErrors(t *testing.T) {
	root, _ := testRoot(t)
	pool := testPool(t, PoolConfig{})
	tests := []struct {
		name string
		root string
		path string
		lim  Limits
	}{
		{name: "missing root", root: filepath.Join(root, "no-such-root"), path: "good.pdf"},
		{name: "min dpi above dpi", root: root, path: "good.pdf", lim: Limits{Page: page.Policy{DPI: 100, MinDPI: 200}}},
		{name: "negative byte cap", root: root, path: "good.pdf", lim: Limits{MaxBytes: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := check(pool, tt.root, tt.path, "", tt.lim)
			if err == nil {
				t.Fatal("Check() error = nil; want an unexpected error")
			}
			if r, ok := IsRejection(err); ok {
				t.Fatalf("Check() = rejection %v; want a plain error", r)
			}
		})
	}
	t.Run("unreadable file", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("root reads anything, so EACCES cannot be provoked here; cmd/refbatch tests it as another user")
		}
		if err := os.WriteFile(filepath.Join(root, "locked.pdf"), goodPDF(), 0o000); err != nil {
			t.Fatal(err)
		}
		_, err := check(pool, root, "locked.pdf", "", DefaultLimits())
		if r, ok := IsRejection(err); !ok || r.Reason != outcome.Unreadable || strings.Contains(r.Detail, "locked") {
			t.Fatalf("Check() = %v; want an unreadable rejection naming no path", err)
		}
	})
}

// TestCheckWritesNothing points the user's home and config dir at an empty
// folder and checks that admitting, rejecting and decrypting-to-detect
// leave it empty: pdfcpu's config dir must never be created.
func TestCheckWritesNothing(t *testing.T) {
	root, _ := testRoot(t)
	pool := testPool(t, PoolConfig{})
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	for _, path := range []string{"good.pdf", "enc-aes-empty.pdf", "enc-rc4-user.pdf", "prose.pdf", "huge-image.pdf"} {
		if _, err := check(pool, root, path, "", DefaultLimits()); err != nil {
			if _, ok := IsRejection(err); !ok {
				t.Fatalf("Check(%s) error = %v", path, err)
			}
		}
	}
	ents, err := os.ReadDir(home)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 0 {
		t.Errorf("admission wrote %v under the home folder", ents)
	}
}

// TestSources checks the bounded reads of a source: a file swapped, after
// admission, for a FIFO, a symlink to /dev/zero, a huge sparse file or a
// symlink out of the root is refused at once, by reason, without blocking
// or reading more than the cap.
func TestSources(t *testing.T) {
	root, _ := testRoot(t)
	sparse := filepath.Join(root, "sparse.pdf")
	f, err := os.Create(sparse)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(20 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Symlink("/dev/zero", filepath.Join(root, "zero.pdf")); err != nil {
		t.Fatal(err)
	}
	good := goodPDF()
	tests := []struct {
		name   string
		path   string
		max    int64
		reason outcome.Reason
	}{
		{name: "good", path: "good.pdf", max: 1 << 20},
		{name: "exactly the cap", path: "good.pdf", max: int64(len(good))},
		{name: "fifo", path: "fifo.pdf", max: 1 << 20, reason: outcome.NotPDF},
		{name: "dev zero", path: "zero.pdf", max: 1 << 20, reason: outcome.PathOutsideRoot},
		{name: "20 GiB sparse file", path: "sparse.pdf", max: 64 << 20, reason: outcome.TooLarge},
		{name: "over the cap", path: "good.pdf", max: 10, reason: outcome.TooLarge},
		{name: "symlink out of the root", path: "link-outside.pdf", max: 1 << 20, reason: outcome.PathOutsideRoot},
		{name: "missing", path: "nope.pdf", max: 1 << 20, reason: outcome.MissingFile},
		{name: "directory", path: "a-dir.pdf", max: 1 << 20, reason: outcome.NotPDF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := ReadSource(root, tt.path, tt.max)
			sum, n, herr := HashSource(root, tt.path, tt.max)
			if tt.reason == "" {
				if err != nil || herr != nil || sha256Hex(data) != sha256Hex(good) || sum != sha256Hex(good) || n != int64(len(good)) {
					t.Fatalf("ReadSource: %d bytes, %v; HashSource: %s %d, %v", len(data), err, sum, n, herr)
				}
				return
			}
			for _, e := range []error{err, herr} {
				if r, ok := IsRejection(e); !ok || r.Reason != tt.reason {
					t.Errorf("got %v; want a %s rejection", e, tt.reason)
				}
			}
		})
	}
	// A source in place when the root is not known (an old journal) is
	// still read only as a regular file.
	if _, _, err := HashSource("", filepath.Join(root, "fifo.pdf"), 1<<20); err == nil {
		t.Errorf("HashSource of a FIFO without a root: no error")
	}
	if sum, n, err := HashSource("", filepath.Join(root, "good.pdf"), 1<<20); err != nil || sum != sha256Hex(good) || n != int64(len(good)) {
		t.Errorf("HashSource of a regular file without a root: %s %d, %v", sum, n, err)
	}
	// A file shorter than a read's first buffer is read whole.
	tiny := []byte("%PDF-1.4\n%%EOF\n")
	if err := os.WriteFile(filepath.Join(root, "tiny.pdf"), tiny, 0o644); err != nil {
		t.Fatal(err)
	}
	if data, err := ReadSource(root, "tiny.pdf", 1<<20); err != nil || !bytes.Equal(data, tiny) {
		t.Errorf("ReadSource of %d bytes: %q, %v", len(tiny), data, err)
	}
}

// TestSourceSwappedForSymlinkAfterResolve replaces the resolved file by a
// symlink out of the root between Resolve and the open, as a hostile
// sender racing admission would: the open through os.Root refuses it.
func TestSourceSwappedForSymlinkAfterResolve(t *testing.T) {
	root, outside := testRoot(t)
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(real, "swap.pdf")
	if err := os.Symlink(filepath.Join(outside, "secret.pdf"), target); err != nil {
		t.Fatal(err)
	}
	r, err := os.OpenRoot(real)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	_, err = r.OpenFile("swap.pdf", sourceFlags, 0)
	if rej, ok := IsRejection(openError(err)); !ok || rej.Reason != outcome.PathOutsideRoot {
		t.Errorf("open through the root: %v; want path_outside_root", openError(err))
	}
}

func TestResolve(t *testing.T) {
	root, _ := testRoot(t)
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path   string
		want   string // relative to the resolved root, when admitted
		reason outcome.Reason
	}{
		{path: "good.pdf", want: "good.pdf"},
		{path: "link-inside.pdf", want: "good.pdf"},
		{path: "a-dir.pdf", want: "a-dir.pdf"}, // Resolve does not look at the file type
		{path: "nope.pdf", reason: outcome.MissingFile},
		{path: "link-outside.pdf", reason: outcome.PathOutsideRoot},
		{path: "dangling-outside.pdf", reason: outcome.PathOutsideRoot},
		{path: "../root/good.pdf", want: "good.pdf"},
		{path: "../outside/secret.pdf", reason: outcome.PathOutsideRoot},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			got, err := Resolve(root, tt.path)
			if tt.reason != "" {
				if r, ok := IsRejection(err); !ok || r.Reason != tt.reason {
					t.Fatalf("Resolve() = %q, %v; want %s", got, err, tt.reason)
				}
				return
			}
			if want := filepath.Join(realRoot, tt.want); err != nil || got != want {
				t.Fatalf("Resolve() = %q, %v; want %q", got, err, want)
			}
		})
	}
}

// TestBackslashHint: a missing path written with Windows separators says
// so, without naming the path.
func TestBackslashHint(t *testing.T) {
	root, _ := testRoot(t)
	for path, hint := range map[string]bool{`sub\good.pdf`: true, `good.pdf\`: true, "sub/nope.pdf": false} {
		_, err := Resolve(root, path)
		r, ok := IsRejection(err)
		if !ok || r.Reason != outcome.MissingFile {
			t.Fatalf("%s: got %v, want missing_file", path, err)
		}
		if got := strings.Contains(r.Detail, "use / not backslash"); got != hint {
			t.Errorf("%s: detail %q", path, r.Detail)
		}
		if strings.Contains(r.Detail, "good") {
			t.Errorf("%s: detail names the path: %q", path, r.Detail)
		}
	}
}

func TestEncryptScans(t *testing.T) {
	tests := []struct {
		name            string
		data            string
		trailer, anyKey bool
	}{
		{name: "indirect in a classic trailer", data: "trailer\n<< /Size 3 /Encrypt 5 0 R /Root 1 0 R >>", trailer: true, anyKey: true},
		{name: "direct in a classic trailer", data: "trailer<</Encrypt<</Filter/Standard>>/Root 1 0 R>>", trailer: true, anyKey: true},
		{name: "xref stream", data: "%PDF-1.5\n7 0 obj\n<< /Type /XRef /Encrypt 6 0 R /Size 8 >>\nstream\n...\nendstream\nendobj\nstartxref\n9\n%%EOF", trailer: true, anyKey: true},
		{name: "no encrypt", data: "trailer\n<< /Size 3 /Root 1 0 R >>\nstartxref\n0\n%%EOF"},
		{name: "encrypt in a non-trailer dictionary", data: "1 0 obj << /Encrypt 5 0 R >> endobj\ntrailer << /Root 1 0 R >>", anyKey: true},
		{name: "EncryptMetadata is another key", data: "trailer << /EncryptMetadata false >>"},
		{name: "name in text", data: "BT (/Encrypt) Tj ET /Encrypt Do"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := trailerHasEncrypt([]byte(tt.data)); got != tt.trailer {
				t.Errorf("trailerHasEncrypt() = %t; want %t", got, tt.trailer)
			}
			if got := mentionsEncrypt([]byte(tt.data)); got != tt.anyKey {
				t.Errorf("mentionsEncrypt() = %t; want %t", got, tt.anyKey)
			}
		})
	}
}

func TestScrub(t *testing.T) {
	tests := []struct{ in, want string }{
		{in: "pdfcpu: Catalog: missing root dict", want: "pdfcpu: Catalog: missing root dict"},
		{in: "dereferenceInteger: wrong type <(Jane Doe, NHS 123)>", want: "dereferenceInteger: wrong type"},
		{in: "corrupt dict: <<\n<Title, (secret)>\n>>", want: "corrupt dict"},
		{in: "missing \"Pages\"", want: "missing"},
		{in: "(all quoted)", want: "no detail"},
	}
	for _, tt := range tests {
		if got := scrub(errors.New(tt.in)); got != tt.want {
			t.Errorf("scrub(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}
