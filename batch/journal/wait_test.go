package journal

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// TestLockWaitInterrupted: a write waiting for the lock another
// connection holds ends soon after the journal's interruption, wrapping
// context.Canceled, instead of after the busy timeout; once the lock is
// free, a write after the interruption still goes through.
func TestLockWaitInterrupted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.db")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	j, err := Open(path, WithInterrupt(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	other, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), "BEGIN EXCLUSIVE"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- j.SetMeta("k", "v") }()
	select {
	case err := <-done:
		t.Fatalf("the write did not wait for the held lock: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	cancel()
	interrupted := time.Now()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("interrupted wait: %v, want context.Canceled", err)
		}
		if took := time.Since(interrupted); took > AfterInterruptWait+time.Second {
			t.Errorf("the wait ended %v after the interruption", took)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the wait did not end after the interruption")
	}
	if err := j.Beat(1); !errors.Is(err, context.Canceled) {
		t.Errorf("a statement after the interruption, lock held: %v, want context.Canceled", err)
	}
	conn.ExecContext(context.Background(), "ROLLBACK")
	if err := j.SetMeta("k", "v"); err != nil {
		t.Errorf("a write after the interruption, lock free: %v", err)
	}
	if v, err := j.Meta("k"); err != nil || v != "v" {
		t.Errorf("meta k: %q, %v", v, err)
	}
}
