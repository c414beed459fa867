package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"image"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pdfcpu/pdfcpu/pkg/api"

	"github.com/refbatch/refbatch/manifest"
)

func TestMain(m *testing.M) {
	api.DisableConfigDir()
	os.Exit(m.Run())
}

func TestFastFlags(t *testing.T) {
	tests := []struct {
		name, help string
		want       []string
	}{
		{"none", "   --dpi value  render resolution (default: 300)\n   --no-id-check  skip the ID check (default: false)\n", nil},
		{"no- flags", "   --no-orientation  skip page orientation (default: false)\n   --no-deskew  skip deskew (default: false)\n",
			[]string{"--no-orientation", "--no-deskew"}},
		{"boolean defaulting to true", "   --orientation  detect page orientation (default: true)\n   --deskew  straighten pages (default: true)\n",
			[]string{"--orientation=false", "--deskew=false"}},
		{"boolean defaulting to false is not switched", "   --deskew  straighten pages (default: false)\n", nil},
		{"one flag for both", "   --no-rotate-deskew  skip both (default: false)\n", []string{"--no-rotate-deskew"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := fastFlags(tt.help); !slices.Equal(got, tt.want) {
				t.Errorf("fastFlags = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestImagePDF(t *testing.T) {
	tests := []struct {
		name  string
		pages int
	}{
		{"one page", 1},
		{"pages sharing one image", 5},
	}
	dir := t.TempDir()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := tinyPDF("Referral P-000001", 150)
			if err != nil {
				t.Fatal(err)
			}
			if tt.pages > 1 {
				img := image.NewGray(image.Rect(0, 0, 300, 60))
				if data, err = imagePDF(img, 150, tt.pages); err != nil {
					t.Fatal(err)
				}
			}
			p := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-")+".pdf")
			if err := os.WriteFile(p, data, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := api.ValidateFile(p, nil); err != nil {
				t.Fatalf("pdfcpu rejects it: %v", err)
			}
			n, err := api.PageCountFile(p)
			if err != nil || n != tt.pages {
				t.Errorf("%d pages (%v), want %d", n, err, tt.pages)
			}
		})
	}
	if _, err := imagePDF(nil, 150, 0); err == nil {
		t.Error("a PDF of no pages was written")
	}
}

func TestRepeatManifest(t *testing.T) {
	p := filepath.Join(t.TempDir(), "manifest.csv")
	files := []string{"tiny-1.pdf", "tiny-2.pdf", "tiny-3.pdf"}
	if err := writeRepeatManifest(p, 10, files); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := manifest.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	paths := map[string]bool{}
	for {
		row, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if row.Err != nil {
			t.Fatalf("line %d: %v", row.Line, row.Err)
		}
		ids[row.SourceID] = true
		paths[row.Path] = true
	}
	if len(ids) != 10 || len(paths) != len(files) {
		t.Errorf("%d source_ids over %d files, want 10 over %d", len(ids), len(paths), len(files))
	}
}

func TestMeasure(t *testing.T) {
	tests := []struct {
		name     string
		script   string
		exit     int
		children bool
	}{
		{"a child that lives", "sleep 0.3 & wait", 0, true},
		{"a failing command", "echo bad >&2; exit 3", 3, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := measure(context.Background(), exec.Command("sh", "-c", tt.script), true)
			if err != nil {
				t.Fatal(err)
			}
			if u.ExitCode != tt.exit {
				t.Errorf("exit %d, want %d", u.ExitCode, tt.exit)
			}
			if u.MaxRSS <= 0 {
				t.Errorf("ru_maxrss %d", u.MaxRSS)
			}
			if tt.children && (u.PeakChildRSS <= 0 || u.PeakParentRSS <= 0 || u.Wall < 300*time.Millisecond) {
				t.Errorf("child peak %d, parent peak %d, wall %s: the tree was not polled", u.PeakChildRSS, u.PeakParentRSS, u.Wall)
			}
			if tt.exit != 0 && !strings.Contains(u.Stderr, "bad") {
				t.Errorf("stderr %q lost", u.Stderr)
			}
		})
	}
}

func TestOwnProcess(t *testing.T) {
	f, ok := statFields(os.Getpid())
	if !ok || f[1] != strconv.Itoa(os.Getppid()) {
		t.Fatalf("stat fields %q, want ppid %d", f, os.Getppid())
	}
	if _, ok := ownCPU(os.Getpid()); !ok {
		t.Error("own CPU time unread")
	}
	if hwm, ok := vmHWM(os.Getpid()); !ok || hwm <= 0 {
		t.Errorf("VmHWM %d, %v", hwm, ok)
	}
	if busy, ok := machineBusy(); !ok || busy <= 0 {
		t.Errorf("machine busy %s, %v", busy, ok)
	}
}

func TestAcceptance(t *testing.T) {
	// The wall figures are what a loaded machine leaves; the limit is by
	// CPU, and so are the figures set against it.
	run := func(ppm, cpuPPM float64, parent, worker int64) *runResult {
		return &runResult{PagesPerMinute: ppm, CPUPagesPerMinute: cpuPPM, PeakParentRSS: parent, PeakWorkerRSS: worker, RSSSource: "polled"}
	}
	r := &results{
		Settings: benchSetting{DPI: 300},
		Default:  run(50, 70, 40*mib, 280*mib),
		Fast:     run(52, 72, 40*mib, 280*mib),
		Limit:    &limitResult{PagesPerMinute: 77},
		OCRmyPDF: &ocrmypdfResult{PagesPerMinute: 24},
		Long:     &longResult{Pages: 150, Workers: 2, Ratio: 0.55},
		Rows: &rowsResult{Small: &runResult{Rows: 2400}, Big: &runResult{Rows: 24000}, ParentRSSRatio: 1.3,
			SmallResume: &runResult{Rows: 2400, WallS: 1.2}},
	}
	r.computeRatios()
	got := map[string]bool{}
	for _, c := range r.Acceptance {
		got[strings.SplitN(c.Criterion, " (", 2)[0]] = c.Pass
	}
	want := map[string]bool{
		"refbatch, page steps off / limit":        true,  // 0.935
		"refbatch default / limit":                true,  // 0.909
		"refbatch default / OCRmyPDF":             true,  // 2.1
		"parent peak RSS at 300 DPI":              true,  // 40 MiB
		"largest worker peak RSS at 300 DPI":      true,  // 280 MiB
		"parent peak RSS, 24000 rows / 2400 rows": false, // 1.3
		"150-page document, 2 workers / 1 worker": true,  // 0.55
		"resuming a finished 2400-row batch":      true,  // 1.2 s
	}
	for k, v := range want {
		if p, ok := got[k]; !ok || p != v {
			t.Errorf("%s: pass %v (present %v), want %v", k, p, ok, v)
		}
	}
	var out bytes.Buffer
	r.writeTable(&out)
	if !strings.Contains(out.String(), "FAIL  parent peak RSS, 24000 rows / 2400 rows") {
		t.Errorf("table does not show the failed check:\n%s", out.String())
	}
}

func TestParseFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr bool
	}{
		{"corpus required", nil, true},
		{"defaults", []string{"--corpus", "c"}, false},
		{"subsets", []string{"--corpus", "c", "--subsets", "20, 40"}, false},
		{"bad subset", []string{"--corpus", "c", "--subsets", "x"}, true},
		{"stray argument", []string{"--corpus", "c", "more"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseFlags(tt.args, io.Discard)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err %v, want error %v", err, tt.wantErr)
			}
			if err == nil && (o.JSON != filepath.Join("bench-out", "bench.json") || o.LongDPI != o.DPI) {
				t.Errorf("derived defaults: json %q, long dpi %d", o.JSON, o.LongDPI)
			}
		})
	}
}

func TestExportChecks(t *testing.T) {
	r := &results{
		Export: &exportResult{Documents: 105, Exported: 105, WallS: 2, OCRWallS: 60, Share: 2.0 / 60, PeakRSS: 42 * mib,
			CPUS: 3, OCRCPUS: 100, CPUShare: 0.03},
		DefaultResume: &runResult{PeakParentRSS: 40 * mib},
		TinyExport:    &exportResult{Documents: 2400, Exported: 2400, WallS: 9, PeakRSS: 55 * mib},
		Rows:          &rowsResult{SmallResume: &runResult{PeakParentRSS: 50 * mib}},
	}
	var got []check
	r.exportChecks(func(name string, v float64, target string, pass bool) {
		got = append(got, check{Criterion: name, Value: v, Target: target, Pass: pass})
	})
	if len(got) != 4 || !got[0].Pass || !got[1].Pass || got[1].Value != 0.03 || !got[2].Pass || got[2].Value != 1.05 || !got[3].Pass || got[3].Value != 1.1 {
		t.Errorf("checks: %+v", got)
	}
	s, err := lastSummary(strings.NewReader(`{"event":"exported"}` + "\n" + `{"event":"summary","documents":3,"exported":2,"files_written":7,"bytes":10}` + "\n"))
	if err != nil || s.Documents != 3 || s.Exported != 2 || s.Written != 7 {
		t.Errorf("lastSummary = %+v, %v", s, err)
	}
	if _, err := lastSummary(strings.NewReader("refbatch: error: x\n")); err == nil {
		t.Error("lastSummary accepted output without a summary")
	}
}

// TestExportCheckUsage: export-check's usage errors exit 2 and its help 0,
// before anything runs.
func TestExportCheckUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"help", []string{"--help"}, 0},
		{"no --out", nil, 2},
		{"an argument", []string{"--out", "x", "extra"}, 2},
		{"unknown flag", []string{"--bogus"}, 2},
		{"no workers", []string{"--out", "x", "--workers", "0"}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := exportCheckMain(context.Background(), tt.args, &stdout, &stderr); code != tt.code {
				t.Errorf("exit %d, want %d; stderr %s", code, tt.code, stderr.String())
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout %q, want nothing", stdout.String())
			}
		})
	}
}

// TestSourcePrefix: the source is the PDF's first bytes only when they
// hash to the artifact's source SHA-256.
func TestSourcePrefix(t *testing.T) {
	src := []byte("%PDF-1.4 source")
	out := append(slices.Clone(src), " update"...)
	sum := sha256.Sum256(src)
	sha := hex.EncodeToString(sum[:])
	if got, ok := sourcePrefix(out, int64(len(src)), sha); !ok || !bytes.Equal(got, src) {
		t.Errorf("the source's own prefix: %q, %v", got, ok)
	}
	for _, size := range []int64{0, int64(len(src)) - 1, int64(len(out)) + 1} {
		if _, ok := sourcePrefix(out, size, sha); ok {
			t.Errorf("size %d: accepted", size)
		}
	}
}
