package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/refbatch/refbatch/batch/export/pdfcheck"
)

// exportBatch runs a three-document batch with encrypted artifacts, the
// sources copied beside its manifest so a test may alter one: the
// sample's first three rows, as tiny referrals except those named in
// scanned, which keep the sample's scans (a tiny referral, drawn in an
// unembedded font, is never PDF/A: a test of what export writes keeps a
// scan, one of its processes needs none). The third document's source_id
// needs a safe name. It returns the output folder, the identity file and
// the manifest.
func exportBatch(t *testing.T, scanned ...string) (out, key, manifestPath string) {
	t.Helper()
	dir := t.TempDir()
	key = filepath.Join(dir, "id.txt")
	kg := refbatch(t, nil, "keygen", "--out", key)
	if kg.code != 0 {
		t.Fatalf("keygen: %d %s", kg.code, kg.stderr)
	}
	sample := sampleDir(t)
	rows := readCSV(t, filepath.Join(sample, "manifest.csv"))
	var b strings.Builder
	b.WriteString("source_id,participant_id,referral_date,consent,path\n")
	if err := os.Mkdir(filepath.Join(dir, "docs"), 0o700); err != nil {
		t.Fatal(err)
	}
	for i, id := range []string{"R-0001", "R-0002", "R-0003"} {
		for _, r := range rows {
			if r["source_id"] != id {
				continue
			}
			data, err := os.ReadFile(filepath.Join(sample, r["path"]))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(scanned, id) {
				r["participant_id"], r["referral_date"] = fmt.Sprintf("P-%06d", 900000+i), "2024-03-14"
				data = tinyReferral(900+i, r["participant_id"], r["referral_date"])
			}
			name := filepath.Join("docs", id+".pdf")
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
				t.Fatal(err)
			}
			sid := id
			if i == 2 {
				sid = `R/0003 "x"` // quoted in the CSV below
			}
			fmt.Fprintf(&b, "%q,%s,%s,yes,%s\n", sid, r["participant_id"], r["referral_date"], name)
		}
	}
	manifestPath = filepath.Join(dir, "manifest.csv")
	if err := os.WriteFile(manifestPath, []byte(strings.ReplaceAll(b.String(), `\"`, `""`)), 0o600); err != nil {
		t.Fatal(err)
	}
	out = filepath.Join(dir, "out")
	// The reading is not what export is tested on: the page steps off,
	// one worker, 72 DPI, or 100 when a scan is read (at 72 its
	// confidence is on the edge of the low band).
	dpi := "72"
	if len(scanned) > 0 {
		dpi = "100"
	}
	args := append([]string{"run", "--recipient", strings.TrimSpace(kg.stdout), "--out", out, "--workers", "1",
		"--dpi", dpi, "--page-timeout", "60s"}, noPageSteps...)
	if r := refbatch(t, nil, append(args, manifestPath)...); r.code != 0 {
		t.Fatalf("run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	return out, key, manifestPath
}

// TestExport exports a batch as a bag and checks what an archive would:
// the text is show's, the ALTO validates against the official schema, the
// bag validates with a reader that shares no code with refbatch, a
// tampered file is caught, a rerun resumes, and a changed source is a
// finding that stops only its own document.
func TestExport(t *testing.T) {
	reads(t)
	out, key, manifestPath := exportBatch(t, "R-0002")
	dest := filepath.Join(filepath.Dir(out), "bag")

	t.Run("usage", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			args []string
		}{
			{"no identity", []string{"--to", dest}},
			{"dest inside out", []string{"-i", key, "--to", filepath.Join(out, "export")}},
			{"dest is out", []string{"-i", key, "--to", out}},
			{"bad format", []string{"-i", key, "--to", dest, "--format", "hocr"}},
			{"bad state", []string{"-i", key, "--to", dest, "--state", "rejected"}},
			{"bad mode", []string{"-i", key, "--to", dest, "--mode", "0400"}},
			{"bad title-from", []string{"-i", key, "--to", dest, "--title-from", "participant"}},
		} {
			r := refbatch(t, nil, append([]string{"export", "--out", out}, tc.args...)...)
			if r.code != exitUsage || !strings.Contains(r.stderr, "refbatch: hint:") {
				t.Errorf("%s: exit %d, want 2 with a hint\n%s", tc.name, r.code, r.stderr)
			}
		}
		if _, err := os.Stat(filepath.Join(out, "export")); err == nil {
			t.Error("a refused export created its folder inside --out")
		}
		if _, err := os.Stat(dest); err == nil {
			t.Error("a refused export created its folder")
		}
	})

	r := refbatch(t, nil, "export", "--out", out, "-i", key, "--to", dest, "--bag", "--mode", "0640", "--json")
	if r.code != 0 {
		t.Fatalf("export: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var events []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var e map[string]any
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("stdout line is not JSON: %q", line)
		}
		events = append(events, e)
	}
	if len(events) != 4 || events[3]["event"] != "summary" || events[3]["exported"] != 3.0 || events[3]["exit"] != 0.0 {
		t.Fatalf("events: %v", events)
	}
	for _, row := range readCSV(t, manifestPath) {
		if strings.Contains(r.stdout+r.stderr, row["participant_id"]) {
			t.Errorf("export's output names participant %s", row["participant_id"])
		}
	}

	for _, id := range []string{"R-0001", "R-0002", `R/0003 "x"`} {
		show := refbatch(t, nil, "show", "--out", out, "-i", key, id)
		dir := filepath.Join(dest, "data", safeFileName(t, dest, id))
		txt, err := os.ReadFile(filepath.Join(dir, safeFileName(t, dest, id)+".txt"))
		if err != nil || withFinalNewline(string(txt)) != show.stdout || !strings.HasSuffix(show.stdout, "\n") {
			t.Errorf("%s: the exported text is not show's, less the final newline show adds (%v)", id, err)
		}
		var prov map[string]any
		b, _ := os.ReadFile(filepath.Join(dir, "provenance.json"))
		if err := json.Unmarshal(b, &prov); err != nil || prov["source_id"] != id || prov["state"] != "done" || prov["artifact_sha256"] == "" {
			t.Errorf("%s: provenance.json %v (%v)", id, prov, err)
		}
		validateALTO(t, filepath.Join(dir, safeFileName(t, dest, id)+".alto.xml"))
	}
	assertExportModes(t, dest, 0o640, 0o750)
	if errs := validateBag(dest); len(errs) > 0 {
		t.Fatalf("the bag does not validate: %v", errs)
	}
	info, _ := os.ReadFile(filepath.Join(dest, "bag-info.txt"))
	for _, want := range []string{"External-Identifier: refbatch-", "Bag-Software-Agent: refbatch ", "Bagging-Date: ", "Refbatch-Document-Count: 3"} {
		if !strings.Contains(string(info), want) {
			t.Errorf("bag-info.txt lacks %q:\n%s", want, info)
		}
	}

	t.Run("pdfa", func(t *testing.T) { exportPDFA(t, out, key) })

	// A tampered payload file is caught; rerunning export repairs it,
	// leaving the files that were right as they were.
	victim := filepath.Join(dest, "data", "R-0002", "R-0002.txt")
	if err := os.WriteFile(victim, []byte("tampered"), 0o640); err != nil {
		t.Fatal(err)
	}
	if errs := validateBag(dest); len(errs) == 0 {
		t.Fatal("the validator missed a tampered payload file")
	}
	// An interrupted export: no tag manifest, a temp file left behind.
	os.Remove(filepath.Join(dest, "tagmanifest-sha256.txt"))
	stray := filepath.Join(dest, "data", "R-0001", ".tmp-refbatch-123")
	os.WriteFile(stray, []byte("partial"), 0o600)
	r = refbatch(t, nil, "export", "--out", out, "-i", key, "--to", dest, "--bag", "--mode", "0640")
	if r.code != 0 || !strings.Contains(r.stdout, "exported 3 of 3 documents") {
		t.Fatalf("rerun: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// Written: the repaired file and the two manifests (removed when an
	// export starts); already right: the other 11 payload files (a PDF,
	// ALTO and text per document, and the provenance.json beside them,
	// less the repaired one), report.json, metadata.csv, bagit.txt and
	// bag-info.txt.
	if !strings.Contains(r.stdout, "3 files written, 15 already there") {
		t.Errorf("rerun did not resume: %s", r.stdout)
	}
	if _, err := os.Stat(stray); err == nil {
		t.Error("the rerun left the interrupted export's temp file")
	}
	if errs := validateBag(dest); len(errs) > 0 {
		t.Fatalf("the rerun's bag does not validate: %v", errs)
	}

	// A source changed since admission: its document is a finding and is
	// not exported; the others are; exit 1.
	src := filepath.Join(filepath.Dir(manifestPath), "docs", "R-0001.pdf")
	f, _ := os.OpenFile(src, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("\n%%changed\n")
	f.Close()
	flat := filepath.Join(filepath.Dir(out), "flat")
	r = refbatch(t, nil, "export", "--out", out, "-i", key, "--to", flat, "--format", "txt")
	if r.code != exitFailure || !strings.Contains(r.stdout, "source_changed") || !strings.Contains(r.stdout, "source_id=R-0001") ||
		!strings.Contains(r.stdout, "exported 2 of 3 documents") {
		t.Fatalf("changed source: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(flat, "R-0001.txt")); err == nil {
		t.Error("a document whose source changed was exported")
	}
	if _, err := os.Stat(filepath.Join(flat, "R-0002.txt")); err != nil {
		t.Error("the documents after a finding were not exported")
	}
	assertExportModes(t, flat, 0o600, 0o700)
}

// safeFileName finds the name export gave a source_id: its provenance.json
// names it.
func safeFileName(t *testing.T, bag, id string) string {
	t.Helper()
	dirs, _ := os.ReadDir(filepath.Join(bag, "data"))
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(bag, "data", d.Name(), "provenance.json"))
		if err != nil {
			continue
		}
		var p struct {
			SourceID string `json:"source_id"`
		}
		if json.Unmarshal(b, &p) == nil && p.SourceID == id {
			if strings.ContainsAny(d.Name(), `/ "`) {
				t.Errorf("unsafe file name %q", d.Name())
			}
			return d.Name()
		}
	}
	t.Fatalf("no folder for %s", id)
	return ""
}

// sharedDir is ../shared beside the repository (REFBATCH_SHARED_DIR
// overrides it, for a worktree placed elsewhere).
func sharedDir(t *testing.T) string {
	if d := os.Getenv("REFBATCH_SHARED_DIR"); d != "" {
		return d
	}
	return filepath.Join(repoRoot(t), "..", "shared")
}

func validateALTO(t *testing.T, path string) {
	t.Helper()
	schema := filepath.Join(sharedDir(t), "schemas", "alto-4-4.xsd")
	if _, err := os.Stat(schema); err != nil {
		t.Logf("skipping ALTO validation: %s absent", schema)
		return
	}
	if _, err := exec.LookPath("xmllint"); err != nil {
		t.Log("skipping ALTO validation: xmllint not installed (Debian: libxml2-utils)")
		return
	}
	if out, err := exec.Command("xmllint", "--nonet", "--noout", "--schema", schema, path).CombinedOutput(); err != nil {
		t.Errorf("%s does not validate: %v\n%s", filepath.Base(path), err, out)
	}
}

func assertExportModes(t *testing.T, dir string, file, folder os.FileMode) {
	t.Helper()
	filepath.Walk(dir, func(path string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if strings.HasPrefix(fi.Name(), ".tmp") {
			t.Errorf("temp file left: %s", path)
		}
		want := file
		if fi.IsDir() {
			want = folder
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %#o, want %#o", path, fi.Mode().Perm(), want)
		}
		return nil
	})
}

// validateBag checks a BagIt bag (RFC 8493) without refbatch's code: the
// declaration, every payload file against manifest-sha256.txt and the
// manifest against the payload, Payload-Oxum, and the tag manifest.
func validateBag(bag string) []error {
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	decl, err := os.ReadFile(filepath.Join(bag, "bagit.txt"))
	if err != nil || !strings.HasPrefix(string(decl), "BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n") {
		fail("bagit.txt: %q %v", decl, err)
	}
	listed := readChecksums(filepath.Join(bag, "manifest-sha256.txt"), fail)
	var octets, files int64
	filepath.Walk(filepath.Join(bag, "data"), func(path string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(bag, path)
		rel = filepath.ToSlash(rel)
		octets += fi.Size()
		files++
		want, ok := listed[rel]
		if !ok {
			fail("%s is not in the manifest", rel)
			return nil
		}
		delete(listed, rel)
		if got := fileSHA256(path); got != want {
			fail("%s: sha256 %s, manifest %s", rel, got, want)
		}
		return nil
	})
	for p := range listed {
		fail("%s is in the manifest but missing", p)
	}
	info, _ := os.ReadFile(filepath.Join(bag, "bag-info.txt"))
	oxum := ""
	for _, line := range strings.Split(string(info), "\n") {
		if v, ok := strings.CutPrefix(line, "Payload-Oxum: "); ok {
			oxum = v
		}
	}
	if want := strconv.FormatInt(octets, 10) + "." + strconv.FormatInt(files, 10); oxum != want {
		fail("Payload-Oxum %q, the payload is %s", oxum, want)
	}
	tags := readChecksums(filepath.Join(bag, "tagmanifest-sha256.txt"), fail)
	for _, name := range []string{"bagit.txt", "bag-info.txt", "manifest-sha256.txt"} {
		if got := fileSHA256(filepath.Join(bag, name)); tags[name] != got {
			fail("tag file %s: sha256 %s, tag manifest %q", name, got, tags[name])
		}
	}
	return errs
}

func readChecksums(path string, fail func(string, ...any)) map[string]string {
	m := map[string]string{}
	f, err := os.Open(path)
	if err != nil {
		fail("%s: %v", filepath.Base(path), err)
		return m
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		sum, p, ok := strings.Cut(s.Text(), "  ")
		if !ok || len(sum) != 64 {
			fail("%s: bad line %q", filepath.Base(path), s.Text())
			continue
		}
		m[p] = sum
	}
	return m
}

func fileSHA256(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "unreadable"
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestExportChildFailures: the export's PDF child crashes on one document
// and hangs on another (faults injected into the real child); the export
// names both as export_failed with how the child failed, exports the
// third, exits 1, and leaves neither temp files, nor files of the failed
// documents, nor a child running. Then a child out of memory, with only
// the ALTO asked for, is the same.
func TestExportChildFailures(t *testing.T) {
	t.Parallel()
	out, key, manifestPath := exportBatch(t)
	docs := filepath.Join(filepath.Dir(manifestPath), "docs")
	crash, hang, fill := faultKey(t, filepath.Join(docs, "R-0001.pdf")), faultKey(t, filepath.Join(docs, "R-0002.pdf")), faultKey(t, filepath.Join(docs, "R-0003.pdf"))
	dest := filepath.Join(filepath.Dir(out), "bag")
	faults := "REFBATCH_TEST_EXPORT_FAULTS=crash=" + crash + ";hang=" + hang
	r := refbatch(t, []string{faults},
		"export", "--out", out, "-i", key, "--to", dest, "--bag", "--pdf-timeout", "250ms")
	if r.code != exitFailure || !strings.Contains(r.stdout, "exported 1 of 3 documents") {
		t.Fatalf("export: exit %d, want 1 with one document exported\n%s%s", r.code, r.stdout, r.stderr)
	}
	for id, how := range map[string]string{"R-0001": "the PDF child crashed (SIGSEGV) twice", "R-0002": "the PDF child did not finish in time twice"} {
		if !regexp.MustCompile(`export_failed .*source_id=` + id + `  \(` + regexp.QuoteMeta(how) + `\)`).MatchString(r.stdout) {
			t.Errorf("%s: no export_failed finding saying %q:\n%s", id, how, r.stdout)
		}
	}
	for _, row := range readCSV(t, manifestPath) {
		if strings.Contains(r.stdout+r.stderr, row["participant_id"]) {
			t.Errorf("export's output names participant %s", row["participant_id"])
		}
	}
	third := safeFileName(t, dest, `R/0003 "x"`)
	var files []string
	filepath.WalkDir(dest, func(path string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			rel, _ := filepath.Rel(dest, path)
			files = append(files, filepath.ToSlash(rel))
		}
		return err
	})
	want := []string{"bag-info.txt", "bagit.txt", "data/report.json", "data/metadata.csv",
		"data/" + third + "/" + third + ".alto.xml", "data/" + third + "/" + third + ".pdf", "data/" + third + "/" + third + ".txt", "data/" + third + "/provenance.json",
		"manifest-sha256.txt", "tagmanifest-sha256.txt"}
	slices.Sort(files)
	slices.Sort(want)
	if !slices.Equal(files, want) {
		t.Errorf("files in the bag:\n%s\nwant:\n%s", strings.Join(files, "\n"), strings.Join(want, "\n"))
	}
	if errs := validateBag(dest); len(errs) > 0 {
		t.Errorf("the bag of the documents exported does not validate: %v", errs)
	}
	if pids := exportChildren(t, faults); len(pids) > 0 {
		t.Errorf("export children still running: %v", pids)
	}

	flat := filepath.Join(filepath.Dir(out), "alto")
	r = refbatch(t, []string{"REFBATCH_TEST_EXPORT_FAULTS=alloc=" + fill}, "export", "--out", out, "-i", key, "--to", flat, "--format", "alto", "--pdf-memory", "200000000")
	if r.code != exitFailure || !strings.Contains(r.stdout, "exported 2 of 3 documents") ||
		!strings.Contains(r.stdout, `source_id=R/0003 "x"  (the PDF child ran out of memory)`) {
		t.Fatalf("out of memory: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	entries, _ := os.ReadDir(flat)
	if len(entries) != 2 {
		t.Errorf("%d files in the export, want the ALTO of 2 documents", len(entries))
	}
}

// exportChildren lists the export children of this test's binary still
// running with env (NAME=value) in their environment: the entry a test
// gave its export, which the children inherit, so that the children of
// another test's export running beside it are not counted.
func exportChildren(t *testing.T, env string) []string {
	t.Helper()
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	var pids []string
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil || !bytes.HasPrefix(b, []byte(binary+"\x00"+exportChildCommand)) {
			continue
		}
		environ, err := os.ReadFile(filepath.Join(filepath.Dir(p), "environ"))
		if err == nil && slices.Contains(strings.Split(string(environ), "\x00"), env) {
			pids = append(pids, filepath.Base(filepath.Dir(p)))
		}
	}
	return pids
}

// exportPDFA: --pdfa exports every document as PDF/A-2b or says why not,
// and each PDF/A passes pdfcheck's clauses; --title-from file titles it
// with the source file's name.
func exportPDFA(t *testing.T, out, key string) {
	dest := filepath.Join(filepath.Dir(out), "pdfa")
	r := refbatch(t, nil, "export", "--out", out, "-i", key, "--to", dest, "--format", "pdf", "--pdfa", "--title-from", "file", "--json")
	// Exit 5 when a PDF could not be PDF/A; --pdfa=best-effort accepts it.
	if r.code != 0 && r.code != exitNotPDFA {
		t.Fatalf("export --pdfa: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if be := refbatch(t, nil, "export", "--out", out, "-i", key, "--to", dest, "--format", "pdf", "--pdfa=best-effort", "--title-from", "file", "-q"); be.code != 0 {
		t.Errorf("export --pdfa=best-effort: exit %d\n%s%s", be.code, be.stdout, be.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	var sum struct {
		PDFA    int `json:"pdfa"`
		NotPDFA []struct {
			SourceID string `json:"source_id"`
			Reason   string `json:"reason"`
		} `json:"not_pdfa"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &sum); err != nil || sum.PDFA+len(sum.NotPDFA) != 3 || sum.PDFA == 0 {
		t.Fatalf("summary: %+v (%v)\n%s", sum, err, r.stdout)
	}
	notPDFA := map[string]bool{}
	for _, n := range sum.NotPDFA {
		if n.Reason == "" {
			t.Errorf("%s is not PDF/A with no reason", n.SourceID)
		}
		notPDFA[n.SourceID] = true
	}
	for _, id := range []string{"R-0001", "R-0002"} {
		pdf, err := os.ReadFile(filepath.Join(dest, id+".pdf"))
		if err != nil {
			t.Fatal(err)
		}
		if !notPDFA[id] {
			if p := pdfcheck.PDFA(pdf); len(p) > 0 {
				t.Errorf("%s: PDF/A clauses broken: %v", id, p)
			}
		}
		if !bytes.Contains(pdf, []byte("<rdf:li xml:lang=\"x-default\">"+id+"</rdf:li>")) {
			t.Errorf("%s: the XMP title is not the source file's name", id)
		}
	}
}
