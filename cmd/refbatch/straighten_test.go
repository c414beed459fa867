package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExportStraighten: export --straighten --bag of a page turned in
// the image and skewed (eval's R-0010, read at 100 dpi with the page
// steps) says which page it redrew, keeps the source beside the PDF as
// <name>~source.pdf, byte for byte, and the bag's manifest covers it; an
// export without the flag keeps no such file.
func TestExportStraighten(t *testing.T) {
	reads(t)
	dir := t.TempDir()
	key := filepath.Join(dir, "id.txt")
	kg := refbatch(t, nil, "keygen", "--out", key)
	if kg.code != 0 {
		t.Fatalf("keygen: %d %s", kg.code, kg.stderr)
	}
	src, err := os.ReadFile(filepath.Join(repoRoot(t), "testdata", "eval", "docs", "R-0010.pdf"))
	if err != nil {
		t.Skipf("the eval corpus's R-0010 is absent: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "R-0010.pdf"), src, 0o600); err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(dir, "manifest.csv")
	rows := "source_id,participant_id,referral_date,consent,path\nR-0010,P-290751,2022-02-13,yes,R-0010.pdf\n"
	if err := os.WriteFile(manifest, []byte(rows), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	run := refbatch(t, nil, "run", "--recipient", strings.TrimSpace(kg.stdout), "--out", out, "--workers", "1",
		"--dpi", "100", "--page-timeout", "60s", manifest)
	if run.code != exitOK && run.code != exitNeedsPerson {
		t.Fatalf("run: exit %d\n%s%s", run.code, run.stdout, run.stderr)
	}
	for _, straight := range []bool{true, false} {
		dest := filepath.Join(dir, map[bool]string{true: "straight", false: "plain"}[straight])
		args := []string{"export", "--out", out, "-i", key, "--to", dest, "--bag", "--state", "done,review", "--json", "--format", "pdf"}
		if straight {
			args = append(args, "--straighten")
		}
		r := refbatch(t, nil, args...)
		if r.code != exitOK {
			t.Fatalf("export --straighten=%v: exit %d\n%s%s", straight, r.code, r.stdout, r.stderr)
		}
		var ev struct {
			Event        string `json:"event"`
			Straightened []int  `json:"straightened_pages"`
		}
		for _, line := range strings.Split(r.stdout, "\n") {
			if json.Unmarshal([]byte(line), &ev) == nil && ev.Event == "exported" {
				break
			}
		}
		kept, err := os.ReadFile(filepath.Join(dest, "data", "R-0010", "R-0010~source.pdf"))
		switch {
		case !straight && err == nil:
			t.Errorf("export without --straighten kept the source beside the PDF")
		case !straight:
		case len(ev.Straightened) != 1 || ev.Straightened[0] != 1:
			t.Errorf("pages straightened %v, want [1]\n%s", ev.Straightened, r.stdout)
		case err != nil || !bytes.Equal(kept, src):
			t.Errorf("the source is not kept beside the PDF byte for byte: %v", err)
		}
		manifestFile, _ := os.ReadFile(filepath.Join(dest, "manifest-sha256.txt"))
		if straight && !strings.Contains(string(manifestFile), "data/R-0010/R-0010~source.pdf") {
			t.Errorf("the bag's manifest does not list the source kept:\n%s", manifestFile)
		}
		if errs := validateBag(dest); len(errs) > 0 {
			t.Errorf("export --straighten=%v: the bag does not validate: %v", straight, errs)
		}
	}
}
