package journal

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"file", "/out/journal.db", "/out/journal.db"},
		{"userinfo", "postgres://refbatch:secret@db:5432/batches?sslmode=require", "postgres://refbatch:xxxxx@db:5432/batches?sslmode=require"},
		{"no secret", "postgresql://db/batches", "postgresql://db/batches"},
		{"query password", "postgres://u@127.0.0.1:1/db?password=SECRET&sslpassword=SECRET2", "postgres://u@127.0.0.1:1/db?password=xxxxx&sslpassword=xxxxx"},
		{"query kept in order", "postgres://u@h/db?sslmode=require&PassWord=S&application_name=x", "postgres://u@h/db?sslmode=require&PassWord=xxxxx&application_name=x"},
		{"encoded key", "postgres://u@h/db?pass%77ord=S", "postgres://u@h/db?pass%77ord=xxxxx"},
		{"sslkey", "postgres://u@h/db?sslkey=/k/client.key&sslcert=/k/c.crt", "postgres://u@h/db?sslkey=xxxxx&sslcert=/k/c.crt"},
		{"both", "postgres://u:p1@h/db?sslpassword=p2", "postgres://u:xxxxx@h/db?sslpassword=xxxxx"},
		{"unreadable", "postgres://u:p%zz@h/db", "postgres://(unreadable URL)"},
		{"key=value", "host=db user=u password=SECRET dbname=x", "host=db user=u password=xxxxx dbname=x"},
		{"key=value quoted", "host=db password='se cret' sslpassword = 'x\\'y' dbname=x", "host=db password=xxxxx sslpassword=xxxxx dbname=x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Redact(tt.in); got != tt.want {
				t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestRedactErr: a driver's message that quotes the connection string, or
// a secret decoded from it, is scrubbed, and the error it wraps is still
// found.
func TestRedactErr(t *testing.T) {
	loc := "postgres://u:p%40ss@h/db?sslpassword=S%20ECRET2&password=TOPSECRET"
	inner := fmt.Errorf("%w: dial %s failed (pw p@ss, ssl S ECRET2, TOPSECRET)", ErrUnreachable, loc)
	err := redactErr(loc, inner)
	for _, s := range []string{"p@ss", "p%40ss", "S ECRET2", "S%20ECRET2", "TOPSECRET"} {
		if strings.Contains(err.Error(), s) {
			t.Errorf("message %q shows %q", err, s)
		}
	}
	if !errors.Is(err, ErrUnreachable) {
		t.Errorf("errors.Is(%v, ErrUnreachable) = false", err)
	}
	if redactErr(loc, nil) != nil {
		t.Error("redactErr(nil) is not nil")
	}
}

// TestRedactSecretNames: a parameter is masked when its name speaks of a
// password, a secret or a token, whatever else it says; a key with no
// value keeps its place.
func TestRedactSecretNames(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u@h/db?client_secret=S&x=1":  "postgres://u@h/db?client_secret=xxxxx&x=1",
		"postgres://u@h/db?auth_token=T":         "postgres://u@h/db?auth_token=xxxxx",
		"postgres://u@h/db?MyPasswordFile=P":     "postgres://u@h/db?MyPasswordFile=xxxxx",
		"postgres://u@h/db?passwd=P&pass=Q":      "postgres://u@h/db?passwd=xxxxx&pass=xxxxx",
		"postgres://u@h/db?password&sslmode=off": "postgres://u@h/db?password&sslmode=off",
		"postgres://u@h/db?secretary=S":          "postgres://u@h/db?secretary=xxxxx",
		"postgres://u@h/db?tokens":               "postgres://u@h/db?tokens",
		"postgresql://u:pw@h/db?token=T":         "postgresql://u:xxxxx@h/db?token=xxxxx",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRedactErrKeyValue: every secret of a key=value connection string
// is scrubbed from a driver's message that quotes the values alone.
func TestRedactErrKeyValue(t *testing.T) {
	loc := "host=db password=Alpha1 sslpassword='Bravo 2' dbname=x"
	err := redactErr(loc, errors.New("auth failed: Alpha1, then Bravo 2, on db"))
	if got, want := err.Error(), "auth failed: xxxxx, then xxxxx, on db"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	if err := redactErr("/out/journal.db", errors.New("disk full")); err.Error() != "disk full" {
		t.Errorf("a file's error became %q", err)
	}
}
