package desk

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/refbatch/refbatch/batch/layout"
)

// open POSTs code to s's /api/open as the page does.
func open(s *Server, code string) *httptest.ResponseRecorder {
	r := httptest.NewRequest("POST", "/api/open", strings.NewReader(`{"code":"`+code+`"}`))
	r.Host = "127.0.0.1:8080"
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	return w
}

// TestCodeIsSingleUse: the first exchange of a code consumes it; a
// second use is refused with a message that says how to get a new code;
// a new code (Enter, SIGHUP) opens a second browser a session of its
// own, and makes the code printed before it and not used worthless:
// refused as a used one, with the same hint.
func TestCodeIsSingleUse(t *testing.T) {
	t.Parallel()
	s := New(Config{Place: layout.Place{Out: t.TempDir()}, User: "alice", Host: "h"}, "127.0.0.1:8080")
	first := s.Code()
	a := open(s, first)
	if a.Code != http.StatusOK {
		t.Fatalf("the code: %d %s", a.Code, a.Body)
	}
	again := open(s, first)
	var msg struct{ Error string }
	json.Unmarshal(again.Body.Bytes(), &msg)
	if again.Code != http.StatusForbidden || !strings.Contains(msg.Error, "already used") || !strings.Contains(msg.Error, "SIGHUP") ||
		again.Header().Get("Set-Cookie") != "" {
		t.Errorf("the code a second time: %d %q, want 403 saying it was used and how to get another, and no cookie", again.Code, msg.Error)
	}
	unused := s.NewCode()
	second := s.NewCode()
	if w := open(s, unused); w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), "already used") {
		t.Errorf("a code replaced before it was used: %d %s, want 403 saying how to get another", w.Code, w.Body)
	}
	b := open(s, second)
	if b.Code != http.StatusOK {
		t.Fatalf("the new code: %d %s", b.Code, b.Body)
	}
	ca, cb := a.Result().Cookies()[0].Value, b.Result().Cookies()[0].Value
	csrfA, _ := s.sess.csrfOf(ca)
	csrfB, _ := s.sess.csrfOf(cb)
	if ca == cb || csrfA == csrfB || csrfA == "" || s.sess.count() != 2 {
		t.Errorf("two browsers share a session or a CSRF token (%d sessions)", s.sess.count())
	}
	// One browser's CSRF token is no good with the other's cookie.
	r := httptest.NewRequest("POST", "/api/decide", strings.NewReader(`{"action":"accept","ids":["R-1"]}`))
	r.Host = "127.0.0.1:8080"
	r.AddCookie(&http.Cookie{Name: cookieName, Value: cb})
	r.Header.Set("X-CSRF-Token", csrfA)
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	if w.Code != http.StatusForbidden {
		t.Errorf("browser A's CSRF token with browser B's cookie: %d, want 403", w.Code)
	}
}

// FuzzUnauthenticated sends the desk requests made of any method, path,
// query, headers and body, without a session or with one but without its
// CSRF token: none may crash it, open a session, use up its code, or
// reach a handler that changes anything (every state change is a POST
// to /api/decide or /api/transcribe, refused before it runs: the batch
// here does not exist, so a handler that ran would answer 404 or 500,
// never 403).
func FuzzUnauthenticated(f *testing.F) {
	f.Add("GET", "/", "", "", "")
	f.Add("GET", "/api/queue", "token=x", "Cookie: refbatch_desk=x", "")
	f.Add("POST", "/api/open", "", "Content-Type: application/json", `{"code":"x"}`)
	f.Add("POST", "/api/decide", "", "X-CSRF-Token: x\nOrigin: http://127.0.0.1:8080", `{"action":"accept","ids":["R-1"]}`)
	f.Add("POST", "/api/transcribe", "", "Content-Type: application/json", `{"id":"R-1","since":1,"page":0,"box":[0,0,1,1],"text":"x"}`)
	f.Add("GET", "/static/../api/doc", "id=R-1", "", "")
	f.Add("HEAD", "/api/page", "id=R-1&page=9223372036854775807&w=1", "", "")
	s := New(Config{Place: layout.Place{Out: f.TempDir()}, User: "alice", Host: "h"}, "127.0.0.1:8080")
	code := s.Code()
	// A session whose CSRF token the requests do not know.
	w := open(s, code)
	cookie := w.Result().Cookies()[0]
	code = s.NewCode()
	f.Fuzz(func(t *testing.T, method, path, query, headers, body string) {
		u := &url.URL{Path: "/" + strings.TrimPrefix(path, "/"), RawQuery: query}
		r, err := http.NewRequest(method, "http://127.0.0.1:8080"+u.RequestURI(), strings.NewReader(body))
		if err != nil {
			return
		}
		for _, line := range strings.Split(headers, "\n") {
			k, v, ok := strings.Cut(line, ":")
			if ok && k != "" {
				r.Header.Add(strings.TrimSpace(k), strings.TrimSpace(v))
			}
		}
		if strings.Contains(headers, "session") {
			r.AddCookie(cookie)
		}
		if r.Header.Get("Content-Type") == "application/json" && strings.Contains(body, code) {
			return // the code itself: not a request made up
		}
		r.Host = "127.0.0.1:8080"
		rec := httptest.NewRecorder()
		done := make(chan struct{})
		go func() { s.ServeHTTP(rec, r); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s %s %q %q: no answer in 10s", method, u, headers, body)
		}
		if s.Code() != code || s.sess.count() != 1 {
			t.Fatalf("%s %s: the code was used or a session opened", method, u)
		}
		if rec.Header().Get("Set-Cookie") != "" {
			t.Fatalf("%s %s: a cookie set", method, u)
		}
		if r.Method == http.MethodPost && (u.Path == "/api/decide" || u.Path == "/api/transcribe") && rec.Code != http.StatusForbidden &&
			rec.Code != http.StatusRequestEntityTooLarge && rec.Code != http.StatusMisdirectedRequest {
			t.Fatalf("%s %s: status %d: a state change reached its handler", method, u, rec.Code)
		}
	})
}
