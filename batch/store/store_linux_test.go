package store

import (
	"fmt"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"filippo.io/age"
)

// mountTinyFS mounts a 64 KiB tmpfs under a temp folder, or skips the test
// when mounting is not allowed (not root, or no CAP_SYS_ADMIN in a container).
func mountTinyFS(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=64k,mode=0700"); err != nil {
		t.Skipf("cannot mount a tmpfs: %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmounting %s: %v", dir, err)
		}
	})
	return dir
}

func TestPutDiskFull(t *testing.T) {
	id := newIdentity(t)
	for _, tt := range []struct {
		name       string
		recipients []age.Recipient
	}{
		{name: "plaintext"},
		{name: "encrypted", recipients: []age.Recipient{id.Recipient()}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Open(filepath.Join(mountTinyFS(t), "artifacts"), tt.recipients)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() }) // before the unmount
			// Fill the disk artifact by artifact until it refuses one.
			var kept []string
			var putErr error
			for i := range 64 {
				name := fmt.Sprintf("R-%02d.txt", i)
				if _, putErr = s.Put(name, randomBytes(t, 12<<10)); putErr != nil {
					break
				}
				kept = append(kept, name)
			}
			if putErr == nil {
				t.Fatal("a 64 KiB tmpfs took 64 artifacts of 12 KiB")
			}
			if !IsNoSpace(putErr) {
				t.Fatalf("Put on a full disk: IsNoSpace(%v) = false", putErr)
			}
			list, err := s.List()
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(list, kept) {
				t.Errorf("List() = %q, want only the complete artifacts %q", list, kept)
			}
			ids := []age.Identity{id}
			for _, name := range kept {
				if _, err := s.Read(name, ids); err != nil {
					t.Errorf("complete artifact %s unreadable after disk full: %v", name, err)
				}
			}
		})
	}
}
