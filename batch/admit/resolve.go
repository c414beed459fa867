package admit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/refbatch/refbatch/report/outcome"
)

// maxSymlinkHops bounds how many dangling symlinks Resolve follows by hand,
// so that a chain of links ends in a rejection rather than a stack
// overflow; a loop ends as soon as a link comes round again.
const maxSymlinkHops = 255

// loopError is resolveLoose's report of a symlink loop (or a chain longer
// than maxSymlinkHops): at is the link where it gave up.
type loopError struct{ at string }

func (e *loopError) Error() string { return "too many levels of symbolic links" }

// Resolve applies the path-inside-root rule alone and returns the file's
// absolute path with every symlink evaluated: the path to open afterwards.
//
// A relative path is joined to root (".." is applied lexically, as
// filepath.Join does); an absolute path is accepted only inside root. The
// joined path must lie inside root as written and, once the symlinks of both
// root and path are resolved, still inside the resolved root: otherwise the
// result is a *Rejection with outcome.PathOutsideRoot. A path that does not
// exist is resolved as far as it goes (a dangling symlink is followed to its
// target), so a missing file inside root is outcome.MissingFile while a
// dangling symlink pointing outside is outcome.PathOutsideRoot. A symlink
// loop (the path itself, or a folder on it) is outcome.Unreadable with the
// detail "the path is a symlink loop": the file is not missing, it cannot
// be reached; a loop whose links lead outside the root is
// outcome.PathOutsideRoot.
//
// Resolve does not look at what the path names (a directory passes): that
// is Check's job. A root that cannot be resolved, or a permission or I/O
// error on the way, is returned as a plain error, never as a Rejection.
func Resolve(root, path string) (string, error) {
	if path == "" {
		return "", reject(outcome.MissingFile, "the path is empty")
	}
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return "", fmt.Errorf("resolving root: %w", err)
	}
	realRoot, err := filepath.EvalSymlinks(absRoot)
	if err != nil {
		return "", fmt.Errorf("resolving root: %w", err)
	}

	joined := filepath.Clean(path)
	if !filepath.IsAbs(joined) {
		joined = filepath.Join(absRoot, joined)
	}
	if !within(absRoot, joined) && !within(realRoot, joined) {
		return "", reject(outcome.PathOutsideRoot, "the path leads outside the root")
	}

	resolved, exists, err := resolveLoose(joined, map[string]bool{})
	var loop *loopError
	switch {
	case errors.As(err, &loop) && !within(absRoot, loop.at) && !within(realRoot, loop.at):
		return "", reject(outcome.PathOutsideRoot, "the path resolves outside the root through a symlink")
	case loop != nil:
		return "", reject(outcome.Unreadable, "the path is a symlink loop")
	case err != nil:
		return "", fmt.Errorf("resolving path: %w", err)
	}
	if !within(realRoot, resolved) {
		return "", reject(outcome.PathOutsideRoot, "the path resolves outside the root through a symlink")
	}
	if !exists {
		if strings.Contains(path, `\`) {
			// A path copied from Windows: on Linux \ is part of a name.
			return "", reject(outcome.MissingFile, "the file does not exist; the path holds a backslash: use / not backslash between folders")
		}
		return "", reject(outcome.MissingFile, "%s", missingDetail(joined))
	}
	return resolved, nil
}

// resolveLoose evaluates the symlinks of p as far as the file system allows.
// For an existing p it is filepath.EvalSymlinks. For a missing p it resolves
// the longest existing prefix, follows dangling symlinks to their targets,
// and appends the rest, reporting exists=false. A symlink loop on the way
// is a *loopError: seen holds the links followed by hand so far, and a
// link met twice is a loop (found after a few evaluations of it, not
// maxSymlinkHops: each is up to 255 of the kernel's).
func resolveLoose(p string, seen map[string]bool) (resolved string, exists bool, err error) {
	if seen[p] || len(seen) > maxSymlinkHops {
		return "", false, &loopError{at: p}
	}
	r, evalErr := filepath.EvalSymlinks(p)
	if evalErr == nil {
		return r, true, nil
	}
	fi, err := os.Lstat(p)
	switch {
	case err == nil && fi.Mode()&fs.ModeSymlink != 0:
		// A dangling symlink or one in a loop: follow it by hand.
		target, err := os.Readlink(p)
		if err != nil {
			return "", false, err
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(p), target)
		}
		seen[p] = true
		return resolveLoose(target, seen)
	case err == nil:
		// p exists and is no symlink, yet it could not be resolved.
		if missingPathError(evalErr) {
			return p, false, nil
		}
		return "", false, evalErr
	case missingPathError(err):
		parent := filepath.Dir(p)
		if parent == p {
			return p, false, nil
		}
		rp, _, err := resolveLoose(parent, seen)
		if err != nil {
			return "", false, err
		}
		return filepath.Join(rp, filepath.Base(p)), false, nil
	default:
		return "", false, err
	}
}

// missingPathError reports whether err means the path names no file
// (rather than that the file could not be reached, such as EACCES or EIO).
func missingPathError(err error) bool {
	return errors.Is(err, fs.ErrNotExist) ||
		errors.Is(err, syscall.ENOTDIR) ||
		errors.Is(err, syscall.ELOOP) ||
		errors.Is(err, syscall.ENAMETOOLONG) ||
		errors.Is(err, syscall.EINVAL)
}

// within reports whether p is dir or lies under it; both must be clean and
// absolute.
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	if err != nil || filepath.IsAbs(rel) {
		return false
	}
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
