package notify

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestVerify(t *testing.T) {
	secret := []byte("s3cret")
	body := []byte(`{"schema":1,"id":"evt-1","type":"batch_finished"}`)
	now := time.Unix(1_767_225_600, 0)
	good := Sign(secret, now, body)
	tests := []struct {
		name   string
		secret []byte
		header string
		body   []byte
		at     time.Time
		want   error
	}{
		{"valid", secret, good, body, now, nil},
		{"valid, received 4 minutes later", secret, good, body, now.Add(4 * time.Minute), nil},
		{"forged with another secret", secret, Sign([]byte("guess"), now, body), body, now, ErrBadSignature},
		{"body changed", secret, good, []byte(strings.Replace(string(body), "evt-1", "evt-2", 1)), now, ErrBadSignature},
		{"timestamp changed", secret, strings.Replace(good, "t=1767225600", "t=1767225900", 1), body, now, ErrBadSignature},
		{"replayed 10 minutes later", secret, good, body, now.Add(10 * time.Minute), ErrStale},
		{"signed in the future", secret, good, body, now.Add(-10 * time.Minute), ErrStale},
		{"no header", secret, "", body, now, ErrBadSignature},
		{"no v1", secret, "t=1767225600", body, now, ErrBadSignature},
		{"two v1, one matching (rotation)", secret, good + ",v1=00", body, now, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Verify(tt.secret, tt.header, tt.body, tt.at, 0)
			if !errors.Is(err, tt.want) || (tt.want == nil && err != nil) {
				t.Errorf("Verify = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestSignFormat(t *testing.T) {
	h := Sign([]byte("k"), time.Unix(42, 0), []byte("{}"))
	if !strings.HasPrefix(h, "t=42,v1=") || len(h) != len("t=42,v1=")+64 {
		t.Errorf("header %q", h)
	}
}

func TestKeyHidesSecrets(t *testing.T) {
	w, err := NewWebhook("https://hooks.example.org/services/T000/SECRETTOKEN?k=v", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{w.Key(), (&Command{Line: "mail -s x ops@example.org"}).Key()} {
		if strings.Contains(k, "SECRET") || strings.Contains(k, "services") || strings.Contains(k, "mail") {
			t.Errorf("key %q shows the URL's path or the command", k)
		}
	}
	for _, bad := range []string{"ftp://x", "example.org/hook", "http://", "::"} {
		if _, err := NewWebhook(bad, nil); err == nil {
			t.Errorf("NewWebhook(%q) accepted", bad)
		}
	}
}
