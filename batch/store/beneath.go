package store

// The resolution every Root method goes through: a relative name opened
// beneath a folder's descriptor, with no symbolic link followed on the
// way, by openat2(2) where the kernel has it (Linux 5.6 and later) and by
// an equivalent walk, one openat(2) with O_NOFOLLOW per part, where it
// does not (an older kernel, or a seccomp filter that refuses the call).

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// ErrLink is in the chain of every *LinkError.
var ErrLink = errors.New("symbolic link")

// LinkError is a symbolic link met beneath a Root: refbatch follows none
// there, and reads and writes nothing through one.
type LinkError struct {
	// Path is the link's path: the Root's folder joined with the name.
	Path string
}

func (e *LinkError) Error() string {
	return e.Path + " is a symbolic link: refbatch reads and writes nothing through a link"
}

// Unwrap makes errors.Is(err, ErrLink) true.
func (e *LinkError) Unwrap() error { return ErrLink }

// noOpenat2 is set once openat2 proved missing; tests set it to try the
// walk.
var noOpenat2 atomic.Bool

// cleanName is name as a path beneath a folder: relative, cleaned, with
// no part that leaves it. "" and "." are the folder itself.
func cleanName(name string) (string, error) {
	if name == "" {
		return ".", nil
	}
	if strings.ContainsRune(name, 0) {
		return "", fmt.Errorf("%q contains a NUL byte", name)
	}
	if !filepath.IsLocal(name) && filepath.Clean(name) != "." {
		return "", fmt.Errorf("%q is not a path beneath the folder", name)
	}
	return filepath.Clean(name), nil
}

// openBeneath opens name (a cleanName) beneath the folder dirfd with
// flags (O_NOFOLLOW and O_CLOEXEC added) and mode, and returns the new
// descriptor. A symbolic link anywhere in name, its last part included,
// is a *LinkError whose path starts with base.
func openBeneath(dirfd int, base, name string, flags int, mode uint32) (int, error) {
	flags |= unix.O_NOFOLLOW | unix.O_CLOEXEC
	if !noOpenat2.Load() {
		how := &unix.OpenHow{Flags: uint64(flags),
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
		if flags&unix.O_CREAT != 0 {
			how.Mode = uint64(mode)
		}
		for try := 0; ; try++ {
			fd, err := unix.Openat2(dirfd, name, how)
			switch {
			case err == nil:
				return fd, nil
			case errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) && try == 0 && probeOpenat2(dirfd):
				// No openat2 here: the walk below, from now on.
				noOpenat2.Store(true)
			case (errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR)) && try < 8:
				continue // a rename raced the resolution
			case errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.EXDEV):
				return -1, linkOrErr(dirfd, base, name, err)
			default:
				return -1, err
			}
			break
		}
	}
	return walkBeneath(dirfd, base, name, flags, mode)
}

// probeOpenat2 tells an openat2 that a seccomp filter refuses (EPERM for
// every call) from a file the caller may not open: it opens the folder
// itself, which never fails for want of permission.
func probeOpenat2(dirfd int) bool {
	fd, err := unix.Openat2(dirfd, ".", &unix.OpenHow{Flags: unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: unix.RESOLVE_BENEATH})
	if err == nil {
		unix.Close(fd)
		return false
	}
	return errors.Is(err, unix.EPERM) || errors.Is(err, unix.ENOSYS)
}

// walkBeneath is openBeneath without openat2: each folder on the way is
// opened with O_DIRECTORY|O_NOFOLLOW from the one before, so a link is
// refused wherever it is, and cleanName already refused "..".
func walkBeneath(dirfd int, base, name string, flags int, mode uint32) (int, error) {
	parts := strings.Split(name, "/")
	cur := dirfd
	closeCur := func() {
		if cur != dirfd {
			unix.Close(cur)
		}
	}
	defer func() { closeCur() }()
	for i, part := range parts[:len(parts)-1] {
		fd, err := openatRetry(cur, part, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, linkOrErr(dirfd, base, strings.Join(parts[:i+1], "/"), err)
		}
		closeCur()
		cur = fd
	}
	fd, err := openatRetry(cur, parts[len(parts)-1], flags, mode)
	if err != nil {
		return -1, linkOrErr(dirfd, base, name, err)
	}
	return fd, nil
}

func openatRetry(dirfd int, name string, flags int, mode uint32) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flags, mode)
		if !errors.Is(err, unix.EINTR) {
			return fd, err
		}
	}
}

// linkOrErr turns err, met opening name beneath dirfd, into a *LinkError
// naming the first link on the way when there is one (ELOOP, ENOTDIR and
// EXDEV are what a link gives), and otherwise returns err.
func linkOrErr(dirfd int, base, name string, err error) error {
	if !errors.Is(err, unix.ELOOP) && !errors.Is(err, unix.ENOTDIR) && !errors.Is(err, unix.EXDEV) {
		return err
	}
	parts := strings.Split(name, "/")
	for i := range parts {
		var st unix.Stat_t
		if unix.Fstatat(dirfd, strings.Join(parts[:i+1], "/"), &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
			break
		}
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			return &LinkError{Path: filepath.Join(base, filepath.Join(parts[:i+1]...))}
		}
	}
	return err
}
