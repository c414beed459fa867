package main

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/refbatch/refbatch/batch/handover"
)

// TestExportPDFARealCorpus is issue 48's fifth acceptance: export --pdfa
// of the real corpus (read cheaply, without ID checks: what is exported
// is the point) exits 5 naming how many PDFs could not be PDF/A, each
// with its reason in words and what to do; --pdfa=best-effort exits 0;
// the bag's metadata.csv lists every document exported with its manifest
// fields, and bag-info.txt says so.
func TestExportPDFARealCorpus(t *testing.T) {
	t.Parallel()
	corpus := corpusDir(t)
	dir := t.TempDir()
	files, err := filepath.Glob(filepath.Join(corpus, "*.pdf"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no PDFs in %s: %v", corpus, err)
	}
	var b strings.Builder
	b.WriteString("source_id,participant_id,referral_date,consent,path\n")
	ids := map[string]string{}
	for i, f := range files {
		id := strings.TrimSuffix(filepath.Base(f), ".pdf")
		ids[id] = fmt.Sprintf("P-%06d", i)
		fmt.Fprintf(&b, "%s,%s,2024-01-%02d,yes,%s\n", id, ids[id], 1+i%28, filepath.Base(f))
	}
	manifest := filepath.Join(dir, "manifest.csv")
	if err := os.WriteFile(manifest, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if r := refbatch(t, nil, append(runArgs(out, "--root", corpus, "--no-id-check"), manifest)...); r.code != exitOK && r.code != exitNeedsPerson {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	strict := refbatch(t, nil, "export", "--out", out, "--to", filepath.Join(dir, "strict"), "--bag", "--pdfa", "--state", "done,review", "-q")
	m := regexp.MustCompile(`error: (\d+) of (\d+) PDFs are not PDF/A`).FindStringSubmatch(strict.stderr)
	if strict.code != exitNotPDFA || m == nil || m[1] == "0" {
		t.Fatalf("export --pdfa: exit %d, want 5 naming the count\n%s%s", strict.code, strict.stdout, strict.stderr)
	}
	if n := strings.Count(strict.stdout, "not PDF/A: "); fmt.Sprint(n) != m[1] || strings.Count(strict.stdout, "    what to do: ") != n {
		t.Errorf("%s not PDF/A, %d listed with what to do:\n%s", m[1], n, strict.stdout)
	}
	bag := filepath.Join(dir, "bag")
	be := refbatch(t, nil, "export", "--out", out, "--to", bag, "--bag", "--pdfa=best-effort", "--state", "done,review", "-q")
	if be.code != exitOK {
		t.Fatalf("export --pdfa=best-effort: exit %d\n%s%s", be.code, be.stdout, be.stderr)
	}
	f, err := os.Open(filepath.Join(bag, "data", handover.MetadataFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(recs[0], []string{"source_id", "participant_id", "referral_date", "state", "decision", "decision_note"}) {
		t.Errorf("metadata header %q", recs[0])
	}
	exported := 0
	if _, err := fmt.Sscanf(be.stdout[strings.LastIndex(be.stdout, "exported "):], "exported %d of", &exported); err != nil || exported == 0 || exported != len(recs)-1 {
		t.Errorf("%d documents exported, %d in metadata.csv (%v)", exported, len(recs)-1, err)
	}
	for _, r := range recs[1:] {
		if r[1] != ids[r[0]] || !strings.HasPrefix(r[2], "2024-01-") || (r[3] != "done" && r[3] != "review") {
			t.Errorf("metadata %q, want %s's ID %s and date", r, r[0], ids[r[0]])
		}
	}
	info, err := os.ReadFile(filepath.Join(bag, "bag-info.txt"))
	if err != nil || !strings.Contains(string(info), "data/metadata.csv lists each document's source_id, participant_id, referral_date") {
		t.Errorf("bag-info.txt does not name the metadata: %s %v", info, err)
	}
}
