package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// oneDocBatch runs a one-page, one-row batch with encrypted artifacts,
// read with tinyFlags on one worker (the text is not checked, only where
// it goes: the row ends done or in review, as the reading goes). It
// returns the test's folder, the output folder and the identity file.
func oneDocBatch(t *testing.T) (dir, out, key string) {
	t.Helper()
	dir = t.TempDir()
	key = filepath.Join(dir, "id.txt")
	kg := refbatch(t, nil, "keygen", "--out", key)
	if kg.code != 0 {
		t.Fatalf("keygen: %d %s", kg.code, kg.stderr)
	}
	data, err := os.ReadFile(filepath.Join(sampleDir(t), "docs", "R-0002.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "R-0002.pdf"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(dir, "manifest.csv")
	csv := "source_id,participant_id,referral_date,consent,path\nR-0002,P-701538,2022-11-21,yes,R-0002.pdf\n"
	if err := os.WriteFile(manifest, []byte(csv), 0o600); err != nil {
		t.Fatal(err)
	}
	out = filepath.Join(dir, "out")
	args := append([]string{"run", "--recipient", strings.TrimSpace(kg.stdout), "--out", out, "--workers", "1"}, tinyFlags...)
	r := refbatch(t, nil, append(args, manifest)...)
	if r.code != 0 && r.code != exitNeedsPerson {
		t.Fatalf("run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	return dir, out, key
}

// listing is every entry under dir (links not followed) with its type,
// size and, for a regular file, its SHA-256: two listings are equal when
// nothing was written there.
func listing(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.Walk(dir, func(path string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		fmt.Fprintf(&b, "%s %v %d", rel, fi.Mode(), fi.Size())
		if fi.Mode().IsRegular() {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(data)
			b.WriteString(" " + hex.EncodeToString(sum[:]))
		}
		b.WriteString("\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestExportRefusesLinkInDest is failure 2 of issue 28: with
// DEST/data/<source_id> planted as a symbolic link to OUT/artifacts,
// `export --bag --format txt` wrote the decrypted text and
// provenance.json into the encrypted store. Now the export stops at the
// link, names it and exits 1; nothing is written through it, and no
// plaintext lands anywhere.
func TestExportRefusesLinkInDest(t *testing.T) {
	t.Parallel()
	dir, out, key := oneDocBatch(t)
	show := refbatch(t, nil, "show", "--out", out, "-i", key, "R-0002")
	if show.code != 0 {
		t.Fatalf("show: exit %d\n%s", show.code, show.stderr)
	}
	secrets := []string{"P-701538"}
	for _, line := range strings.Split(show.stdout, "\n") {
		if line = strings.TrimSpace(line); len(line) >= 12 {
			secrets = append(secrets, line)
		}
	}
	dest := filepath.Join(dir, "bag")
	if err := os.MkdirAll(filepath.Join(dest, "data"), 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dest, "data", "R-0002")
	if err := os.Symlink(filepath.Join(out, "artifacts"), link); err != nil {
		t.Fatal(err)
	}
	before := listing(t, filepath.Join(out, "artifacts"))

	r := refbatch(t, nil, "export", "--out", out, "-i", key, "--to", dest, "--bag", "--format", "txt", "--state", "done,review")
	if r.code != exitFailure {
		t.Errorf("export through a planted link: exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	t.Logf("export said:\n%s%s", r.stdout, r.stderr)
	if !strings.Contains(r.stderr, filepath.Join("data", "R-0002")) || !strings.Contains(r.stderr, "symbolic link") {
		t.Errorf("the error does not name the link:\n%s", r.stderr)
	}
	if after := listing(t, filepath.Join(out, "artifacts")); after != before {
		t.Errorf("export wrote into the artifacts folder:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	// No plaintext anywhere: not in the output folder, not in the bag,
	// not beside them. The manifest names the participant, and the
	// journal may: they are not export's.
	err := filepath.Walk(dir, func(path string, fi os.FileInfo, err error) error {
		if err != nil || !fi.Mode().IsRegular() {
			return err
		}
		switch name := filepath.Base(path); {
		case name == "manifest.csv", strings.HasPrefix(name, "journal.db"):
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, s := range secrets {
			if bytes.Contains(data, []byte(s)) {
				rel, _ := filepath.Rel(dir, path)
				t.Errorf("%s holds document text (%d bytes of it)", rel, len(s))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the planted link was replaced or removed: %v %v", fi, err)
	}
}

// TestExportRefusesDestInOut: a --to that is a folder of --out by another
// path (a link to it, a bind mount of it) is refused with exit 2 before
// anything is made or decrypted; the bind mount only the check by device
// and inode sees.
func TestExportRefusesDestInOut(t *testing.T) {
	t.Parallel()
	dir, out, key := oneDocBatch(t)
	arts := filepath.Join(out, "artifacts")
	link := filepath.Join(dir, "link")
	if err := os.Symlink(arts, link); err != nil {
		t.Fatal(err)
	}
	dests := map[string]string{"link": filepath.Join(link, "bag")}
	if at := filepath.Join(dir, "mnt"); os.Mkdir(at, 0o700) == nil && syscall.Mount(arts, at, "", syscall.MS_BIND, "") == nil {
		t.Cleanup(func() {
			if err := syscall.Unmount(at, 0); err != nil {
				t.Errorf("unmounting %s: %v", at, err)
			}
		})
		dests["bind mount"] = filepath.Join(at, "bag")
	} else {
		t.Log("cannot bind-mount here: the bind mount case is skipped")
	}
	before := listing(t, arts)
	for name, dest := range dests {
		r := refbatch(t, nil, "export", "--out", out, "-i", key, "--to", dest, "--bag", "--format", "txt", "--state", "done,review")
		if r.code != exitUsage || !strings.Contains(r.stderr, "inside") {
			t.Errorf("%s: exit %d, want 2 saying --to is inside --out\n%s%s", name, r.code, r.stdout, r.stderr)
		}
	}
	if after := listing(t, arts); after != before {
		t.Errorf("a refused export wrote into the artifacts folder:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// TestRunRefusesLinkedArtifacts: an artifacts folder planted as a link
// (to a folder others can read, say) is refused at the start of a run,
// naming it, and nothing is written through it.
func TestRunRefusesLinkedArtifacts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out, elsewhere := filepath.Join(dir, "out"), filepath.Join(dir, "elsewhere")
	for _, d := range []string{out, elsewhere} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(elsewhere, filepath.Join(out, "artifacts")); err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(dir, "manifest.csv")
	csv := "source_id,participant_id,referral_date,consent,path\nR-1,P-1,2024-01-01,yes,missing.pdf\n"
	if err := os.WriteFile(manifest, []byte(csv), 0o600); err != nil {
		t.Fatal(err)
	}
	r := refbatch(t, nil, append(runArgs(out), manifest)...)
	if r.code != exitFailure || !strings.Contains(r.stderr, filepath.Join(out, "artifacts")+" is a symbolic link") {
		t.Errorf("run with a linked artifacts folder: exit %d, want 1 naming the link\n%s%s", r.code, r.stdout, r.stderr)
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) > 0 {
		t.Errorf("the run wrote %s through the link", entries[0].Name())
	}
}
