package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"

	"filippo.io/age"
)

// This file is how the store reads its artifacts: through OpenRegular's
// checks, beneath the folder, bounded, and stopped by the store's
// context.

// StopWith makes every later read of the store end when ctx ends (a
// signal at the command's root context): a read in progress stops
// within a chunk. Call it before the store is shared.
func (s *Store) StopWith(ctx context.Context) { s.ctx = ctx }

func (s *Store) context() context.Context {
	if s.ctx != nil {
		return s.ctx
	}
	return context.Background()
}

// Hash returns the SHA-256 (hex) of the artifact name as it is on disk;
// see HashSized.
func (s *Store) Hash(name string) (string, error) {
	sum, _, err := s.hashSized(name, AnySize)
	return sum, err
}

// HashSized returns the SHA-256 (hex) of the artifact name as it is on
// disk, when it is a regular file (not a link, a FIFO, a device) of size
// want (the size recorded when it was written, or a bound); otherwise an
// error for which IsUnsafe is true, found before a byte is read.
func (s *Store) HashSized(name string, want Size) (string, error) {
	sum, _, err := s.hashSized(name, want)
	return sum, err
}

// hashSized is HashSized, with the bytes it read.
func (s *Store) hashSized(name string, want Size) (string, int64, error) {
	if err := checkName(name); err != nil {
		return "", 0, err
	}
	f, err := s.open(name, want)
	if err != nil {
		return "", 0, fmt.Errorf("hashing artifact %s: %w", name, err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := copyBounded(s.context(), h, f, f.Name(), want.max())
	if err != nil {
		return "", 0, fmt.Errorf("hashing artifact %s: %w", name, err)
	}
	return hexSum(h), n, nil
}

// Read returns the plaintext of the artifact name; see ReadSized.
func (s *Store) Read(name string, ids []age.Identity) ([]byte, error) {
	return s.ReadSized(name, AnySize, ids)
}

// ReadSized returns the plaintext of the artifact name, read under
// HashSized's rules. An age-encrypted artifact is decrypted with ids
// (ErrNoIdentities when there are none); a plaintext artifact is
// returned as is, except that an encrypting store refuses one, since it
// should hold only ciphertext.
//
// Whether to decrypt is decided by the file, not by the store's recipients,
// so an auditor can open the store without recipients and read with an
// identity.
func (s *Store) ReadSized(name string, want Size, ids []age.Identity) ([]byte, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	f, err := s.open(name, want)
	if err != nil {
		return nil, fmt.Errorf("reading artifact %s: %w", name, err)
	}
	data, err := readBounded(s.context(), f, f.Name(), want.max())
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("reading artifact %s: %w", name, err)
	}
	if !bytes.HasPrefix(data, []byte(ageMagic)) {
		if s.Encrypted() {
			return nil, fmt.Errorf("reading artifact %s: not age-encrypted in an encrypted store", name)
		}
		return data, nil
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("reading artifact %s: %w", name, ErrNoIdentities)
	}
	r, err := age.Decrypt(bytes.NewReader(data), ids...)
	if err != nil {
		return nil, fmt.Errorf("decrypting artifact %s: %w", name, err)
	}
	plain, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("decrypting artifact %s: %w", name, err)
	}
	return plain, nil
}

// open opens the artifact name for reading as Root.OpenRegular does:
// beneath the folder held open when the store has it, else beneath the
// folder opened for this one read (a read-only store holds nothing open
// between reads).
func (s *Store) open(name string, want Size) (*os.File, error) {
	if s.root != nil {
		return s.root.OpenRegular(name, want)
	}
	r, err := OpenRoot(s.dir)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.OpenRegular(name, want)
}
