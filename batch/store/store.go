// Package store is refbatch's artifacts folder: the one place where document
// text is written to disk.
//
// A Store is a single flat folder (mode 0700) of artifact files (mode 0600).
// When it is opened with age recipients every artifact is encrypted to all of
// them and the folder holds only ciphertext; with no recipients it holds
// plaintext (refbatch's --plaintext).
//
// Put is the handoff of a finished document. It never exposes a partly written
// artifact under its final name:
//
//  1. the bytes are encrypted while they are written to a temp file with a
//     random name (TempPrefix + random) in the store's folder, mode 0600;
//  2. the temp file is fsynced and closed, then renamed to the artifact's
//     name, and the folder is fsynced so that the rename survives a crash;
//  3. the destination is read back and its SHA-256 (of the bytes on disk,
//     i.e. of the ciphertext when encrypted) is returned for the journal.
//
// Steps 1 and 2 are WriteFiles, the package's one way to write a file
// atomically, which refbatch also uses for its reports and eval.json. On any
// error before the rename the temp file is removed. A crash can still leave
// a temp file behind; SweepTemp removes those and is meant to run at start,
// before any Put. Disk-full errors keep syscall.ENOSPC in their chain
// so that callers can tell them apart with IsNoSpace.
//
// Artifact names are plain file names: no path separators and no leading
// dot, which also keeps them apart from temp files.
//
// Root is how the package writes anywhere: a folder held open, beneath
// which every name is resolved without following a symbolic link
// (openat2 with RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS, or a walk that does
// the same on kernels without it). The store, WriteFiles, refbatch's
// reports and its export all write through one, so a link planted in a
// folder refbatch writes in is an error naming it, never a way out.
package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"filippo.io/age"
)

// ageMagic is the first line of every binary age file.
const ageMagic = "age-encryption.org/v1\n"

// ErrNoIdentities is returned by Read for an encrypted artifact when no
// identity was given.
var ErrNoIdentities = errors.New("artifact is encrypted and no identity was given")

// Store is an artifacts folder. Its methods may be called from several
// goroutines at once, as long as they do not Put the same name concurrently.
type Store struct {
	dir string
	// root is the folder, held open, for a store opened with Open; nil
	// for OpenReadOnly's, which writes nothing.
	root       *Root
	recipients []age.Recipient
	// ctx, when set (StopWith), ends a read in progress.
	ctx context.Context
}

// Open opens the artifacts folder dir, creating it (and its parents) with mode
// 0700 if needed, and tightening an existing folder to 0700 if it was looser.
// With nil or empty recipients artifacts are stored in plaintext.
//
// The folder is held open until Close, and everything the store writes
// goes through it, beneath it: dir's last part must be a folder, not a
// link to one (a *LinkError), while the path to its parent is followed
// as given.
func Open(dir string, recipients []age.Recipient) (*Store, error) {
	if dir == "" {
		return nil, errors.New("opening artifacts folder: empty path")
	}
	parent, base := filepath.Dir(dir), filepath.Base(dir)
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return nil, fmt.Errorf("creating artifacts folder: %w", err)
	}
	p, err := OpenRoot(parent)
	if err != nil {
		return nil, fmt.Errorf("opening artifacts folder: %w", err)
	}
	defer p.Close()
	if err := p.MkdirAll(base, 0o700); err != nil {
		return nil, fmt.Errorf("creating artifacts folder: %w", err)
	}
	root, err := p.OpenRoot(base)
	if err != nil {
		return nil, fmt.Errorf("opening artifacts folder: %w", err)
	}
	root.dir = dir
	fi, err := root.f.Stat()
	if err == nil && fi.Mode().Perm()&^0o700 != 0 {
		if err = root.f.Chmod(0o700); err != nil {
			err = fmt.Errorf("restricting artifacts folder to 0700: %w", err)
		}
	}
	if err != nil {
		root.Close()
		return nil, err
	}
	s := &Store{dir: dir, root: root}
	if len(recipients) > 0 {
		s.recipients = append([]age.Recipient(nil), recipients...)
	}
	return s, nil
}

// Close lets the folder of a store opened with Open go; the store writes
// nothing after it.
func (s *Store) Close() error {
	if s.root == nil {
		return nil
	}
	return s.root.Close()
}

// OpenReadOnly opens the artifacts folder dir for reading (Read, Hash,
// List): it creates nothing and changes no mode. A missing folder is a
// store with no artifacts, so that a reader reports the artifacts the
// journal names as missing rather than failing.
func OpenReadOnly(dir string) (*Store, error) {
	if dir == "" {
		return nil, errors.New("opening artifacts folder: empty path")
	}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &Store{dir: dir}, nil
	case err != nil:
		return nil, fmt.Errorf("opening artifacts folder: %w", err)
	case !fi.IsDir():
		return nil, fmt.Errorf("opening artifacts folder: %s is not a folder", dir)
	}
	return &Store{dir: dir}, nil
}

// Dir returns the store's folder as given to Open.
func (s *Store) Dir() string { return s.dir }

// Encrypted reports whether Put encrypts artifacts.
func (s *Store) Encrypted() bool { return len(s.recipients) > 0 }

// SweepTemp removes the temp files that a crash left in the folder (those
// of WriteFiles, and of earlier builds, which started with ".tmp-") and
// returns how many it removed. A Put in progress, in this process or
// another, holds its temp file's lock, and the sweep leaves it alone (see
// the package's SweepTemp).
func (s *Store) SweepTemp() (removed int, err error) {
	if s.root == nil {
		return 0, errReadOnly
	}
	return s.root.sweep(legacyTempPrefix)
}

// errReadOnly: a write to a store opened with OpenReadOnly.
var errReadOnly = errors.New("the artifacts folder was opened read-only")

// afterPut, when set (by tests), runs between Put's publishing of a file
// and its reading back: where a filesystem that lies would be met.
var afterPut func(path string)

// Put writes plaintext as the artifact name, atomically, encrypted when the
// store has recipients, and returns the SHA-256 (hex) of the file as read
// back from disk. An artifact is never overwritten: when one of that name
// exists, Put leaves it as it is and fails with ErrExists.
// On error no file named name is left half-written and the temp file is
// removed; if the error came after the rename (folder fsync, re-read) the
// complete artifact stays in place.
func (s *Store) Put(name string, plaintext []byte) (sha256hex string, err error) {
	sum, _, err := s.PutSized(name, plaintext)
	return sum, err
}

// PutSized is Put, and also returns the artifact's size on disk as read
// back, which the journal records so that a reader refuses a file of
// another size before it reads a byte.
func (s *Store) PutSized(name string, plaintext []byte) (sha256hex string, size int64, err error) {
	if s.root == nil {
		return "", 0, fmt.Errorf("writing artifact %s: %w", name, errReadOnly)
	}
	written := sha256.New()
	err = s.root.writeFiles(".", []string{name}, 0o600, false, func(ws []io.Writer) error {
		return s.encode(io.MultiWriter(ws[0], written), plaintext)
	})
	if err != nil {
		return "", 0, fmt.Errorf("writing artifact %s: %w", name, err)
	}
	if afterPut != nil {
		afterPut(filepath.Join(s.dir, name))
	}
	// The hash recorded in the journal must be of what is on disk, not of
	// what we meant to write; comparing the two catches a store that lies.
	onDisk, size, err := s.hashSized(name, AnySize)
	if err != nil {
		return "", 0, err
	}
	if want := hexSum(written); onDisk != want {
		return "", 0, fmt.Errorf("artifact %s reads back as sha256 %s, wrote %s", name, onDisk, want)
	}
	return onDisk, size, nil
}

// encode writes plaintext to w, through age when the store encrypts.
func (s *Store) encode(w io.Writer, plaintext []byte) error {
	if !s.Encrypted() {
		_, err := w.Write(plaintext)
		return err
	}
	enc, err := age.Encrypt(w, s.recipients...)
	if err != nil {
		return fmt.Errorf("starting encryption: %w", err)
	}
	if _, err := enc.Write(plaintext); err != nil {
		return fmt.Errorf("encrypting: %w", err)
	}
	if err := enc.Close(); err != nil {
		return fmt.Errorf("finishing encryption: %w", err)
	}
	return nil
}

// List returns the names of the files in the folder, sorted, temp files
// included. Subfolders are left out.
func (s *Store) List() ([]string, error) {
	entries, err := os.ReadDir(s.dir) // sorted by name
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // a read-only store of a folder that is gone
	}
	if err != nil {
		return nil, fmt.Errorf("listing artifacts folder: %w", err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if !e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// walkBatch is how many folder entries Walk reads at a time.
const walkBatch = 512

// Walk calls fn with the name of every file in the folder, temp files
// included, in the folder's own order (not sorted), reading the folder a
// few hundred entries at a time: unlike List, it holds no more than that
// whatever the number of artifacts. Subfolders are left out. fn must not
// add or remove files.
func (s *Store) Walk(fn func(name string) error) error {
	f, err := os.Open(s.dir)
	if err != nil {
		return fmt.Errorf("listing artifacts folder: %w", err)
	}
	defer f.Close()
	for {
		entries, err := f.ReadDir(walkBatch)
		for _, e := range entries {
			if e.IsDir() {
				continue
			}
			if err := fn(e.Name()); err != nil {
				return err
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("listing artifacts folder: %w", err)
		}
	}
}

// Remove deletes the artifact name.
func (s *Store) Remove(name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	if s.root == nil {
		return fmt.Errorf("removing artifact %s: %w", name, errReadOnly)
	}
	if err := s.root.Remove(name); err != nil {
		return fmt.Errorf("removing artifact %s: %w", name, err)
	}
	if err := s.root.f.Sync(); err != nil {
		return fmt.Errorf("syncing artifacts folder: %w", err)
	}
	return nil
}

// IsNoSpace reports whether err was caused by a full disk (ENOSPC, or
// EDQUOT for a quota), so that a caller can stop the batch rather than
// retry every document into the same wall.
func IsNoSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// checkName accepts plain file names only: a name with a separator could
// escape the folder, and a leading dot is reserved for temp files.
func checkName(name string) error {
	switch {
	case name == "":
		return errors.New("artifact name is empty")
	case strings.HasPrefix(name, "."):
		return fmt.Errorf("artifact name %q starts with a dot", name)
	case strings.ContainsAny(name, `/\`) || strings.ContainsRune(name, os.PathSeparator):
		return fmt.Errorf("artifact name %q contains a path separator", name)
	case strings.ContainsRune(name, 0):
		return fmt.Errorf("artifact name %q contains a NUL byte", name)
	}
	return nil
}

func hexSum(h hash.Hash) string { return hex.EncodeToString(h.Sum(nil)) }
