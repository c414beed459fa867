package manifest

import (
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// This file writes a manifest scaffold for a folder of PDFs (refbatch
// manifest DIR): one row per file, its source_id from the file name, its
// SHA-256 and its path, the other columns empty for a person to fill.

// ScaffoldHeader is the scaffold's header: the manifest's columns.
var ScaffoldHeader = []string{"source_id", "participant_id", "referral_date", "consent", "path", "sha256"}

// CollisionError refuses a folder two of whose files would take the same
// source_id (their names differ only in case or extension, or they sit
// in different subfolders).
type CollisionError struct {
	SourceID string
	First    string
	Second   string
}

func (e *CollisionError) Error() string {
	return fmt.Sprintf("%s and %s would both be source_id %q", e.First, e.Second, e.SourceID)
}

// Scaffold writes to w a manifest for every regular file named *.pdf
// (any case) beneath dir, in path order: source_id the file name without
// its extension, path relative to dir with forward slashes, sha256 its
// bytes' SHA-256; participant_id, referral_date and consent empty. Two
// files whose source_ids are equal ignoring case are refused with a
// *CollisionError before anything is written; it returns the rows
// written.
func Scaffold(dir string, w io.Writer) (int, error) {
	var paths []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() && strings.EqualFold(filepath.Ext(path), ".pdf") {
			paths = append(paths, path)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	sort.Strings(paths)
	seen := map[string]string{}
	for _, p := range paths {
		id := sourceIDOf(p)
		if first, ok := seen[strings.ToLower(id)]; ok {
			return 0, &CollisionError{SourceID: id, First: first, Second: p}
		}
		seen[strings.ToLower(id)] = p
	}
	cw := csv.NewWriter(w)
	cw.Write(ScaffoldHeader)
	for _, p := range paths {
		sum, err := fileSHA256(p)
		if err != nil {
			return 0, err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return 0, err
		}
		cw.Write([]string{sourceIDOf(p), "", "", "", filepath.ToSlash(rel), sum})
	}
	cw.Flush()
	return len(paths), cw.Error()
}

// sourceIDOf is the source_id a file's name gives: the name without its
// extension.
func sourceIDOf(path string) string {
	base := filepath.Base(path)
	return strings.TrimSuffix(base, filepath.Ext(base))
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("reading %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
