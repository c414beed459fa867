package desk

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/refbatch/refbatch/batch/layout"
)

// TestForgedSession: a session cookie the desk did not hand out is no
// session, however near a real one it is, and a state change with a real
// session's cookie but a CSRF token that is not that session's is
// refused; both before any handler runs (403, the guard's own message).
// The real session and its token, sent right, get past the guards.
func TestForgedSession(t *testing.T) {
	t.Parallel()
	s := New(Config{Place: layout.Place{Out: t.TempDir()}, User: "alice", Host: "h"}, "127.0.0.1:8080")
	login := open(s, s.Code())
	if login.Code != http.StatusOK {
		t.Fatalf("the code: %d %s", login.Code, login.Body)
	}
	var opened struct{ CSRF string }
	json.Unmarshal(login.Body.Bytes(), &opened)
	session := login.Result().Cookies()[0].Value
	// flip changes a token's last character.
	flip := func(v string) string {
		c := "a"
		if strings.HasSuffix(v, c) {
			c = "b"
		}
		return v[:len(v)-1] + c
	}
	const noSession, wrongCSRF = "no session", "CSRF token"
	for _, tc := range []struct {
		name, method, path, cookie, csrf string
		// refused is a piece of the guard's message, "" for a request that
		// must get past the guards.
		refused string
	}{
		{"a made-up cookie", "GET", "/api/queue", randomToken(), "", noSession},
		{"a cookie one character off", "GET", "/api/queue", flip(session), "", noSession},
		{"the CSRF token as the cookie", "GET", "/api/queue", opened.CSRF, "", noSession},
		{"an empty cookie", "GET", "/api/queue", "", "", noSession},
		{"a made-up cookie with the real CSRF token", "POST", "/api/decide", randomToken(), opened.CSRF, noSession},
		{"a made-up CSRF token", "POST", "/api/decide", session, randomToken(), wrongCSRF},
		{"a CSRF token one character off", "POST", "/api/decide", session, flip(opened.CSRF), wrongCSRF},
		{"the cookie as the CSRF token", "POST", "/api/decide", session, session, wrongCSRF},
		{"no CSRF token", "POST", "/api/decide", session, "", wrongCSRF},
		{"the real session", "GET", "/api/queue", session, "", ""},
		{"the real session and token", "POST", "/api/decide", session, opened.CSRF, ""},
	} {
		r := httptest.NewRequest(tc.method, tc.path, strings.NewReader(`{"action":"accept","ids":["R-1"]}`))
		r.Host = "127.0.0.1:8080"
		r.Header.Set("Content-Type", "application/json")
		r.AddCookie(&http.Cookie{Name: cookieName, Value: tc.cookie})
		if tc.csrf != "" {
			r.Header.Set("X-CSRF-Token", tc.csrf)
		}
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		switch {
		case tc.refused != "" && (w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), tc.refused)):
			t.Errorf("%s: %d %q, want 403 saying %q", tc.name, w.Code, strings.TrimSpace(w.Body.String()), tc.refused)
		case tc.refused == "" && w.Code == http.StatusForbidden:
			t.Errorf("%s: refused (%q)", tc.name, strings.TrimSpace(w.Body.String()))
		}
	}
	if n := s.sess.count(); n != 1 {
		t.Errorf("%d sessions open, want the one", n)
	}
}
