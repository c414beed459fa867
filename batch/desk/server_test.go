package desk

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/refbatch/refbatch/batch/layout"
)

// TestGuards checks what the desk refuses before any handler runs, and
// the headers every response carries, refusals included; the log has
// routes, never a query.
func TestGuards(t *testing.T) {
	t.Parallel()
	var logged bytes.Buffer
	s := New(Config{Place: layout.Place{Out: t.TempDir()}, User: "alice", Host: "h", Log: slog.New(slog.NewTextHandler(&logged, nil))},
		"127.0.0.1:8080")
	do := func(method, target, host string, body string, h map[string]string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, target, strings.NewReader(body))
		r.Host = host
		for k, v := range h {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		return w
	}
	code := s.Code()
	asJSON := map[string]string{"Content-Type": "application/json"}
	login := do("POST", "/api/open", "localhost:8080", `{"code":"`+code+`"}`, asJSON)
	if login.Code != http.StatusOK {
		t.Fatalf("the code: %d %s, want 200", login.Code, login.Body)
	}
	var opened struct{ CSRF string }
	json.Unmarshal(login.Body.Bytes(), &opened)
	cookie := login.Header().Get("Set-Cookie")
	if !strings.Contains(cookie, "HttpOnly") || !strings.Contains(cookie, "SameSite=Strict") {
		t.Fatalf("session cookie %q, want HttpOnly and SameSite=Strict", cookie)
	}
	session := map[string]string{"Cookie": strings.Split(cookie, ";")[0]}
	withCSRF := map[string]string{"Cookie": session["Cookie"], "X-CSRF-Token": opened.CSRF}
	decide := `{"action":"accept","ids":["R-0001"]}`
	for _, c := range []struct {
		name, method, target, host, body string
		h                                map[string]string
		want                             int
	}{
		{"no session", "GET", "/api/queue", "127.0.0.1:8080", "", nil, http.StatusForbidden},
		{"a wrong code", "POST", "/api/open", "127.0.0.1:8080", `{"code":"guessed"}`, asJSON, http.StatusForbidden},
		{"the code again", "POST", "/api/open", "127.0.0.1:8080", `{"code":"` + code + `"}`, asJSON, http.StatusForbidden},
		{"the code as a form", "POST", "/api/open", "127.0.0.1:8080", "code=" + code, nil, http.StatusUnsupportedMediaType},
		{"a wrong Host", "POST", "/api/open", "evil.example:8080", `{"code":"` + code + `"}`, asJSON, http.StatusMisdirectedRequest},
		{"the code in a query is no session", "GET", "/api/queue?token=" + code, "127.0.0.1:8080", "", nil, http.StatusForbidden},
		{"the page without a session", "GET", "/", "127.0.0.1:8080", "", nil, http.StatusOK},
		{"the icon without a session", "GET", "/favicon.ico", "127.0.0.1:8080", "", nil, http.StatusOK},
		{"the icon the page names", "GET", "/static/favicon.svg", "127.0.0.1:8080", "", nil, http.StatusOK},
		{"a wrong Host with the session", "GET", "/api/queue", "evil.example", "", session, http.StatusMisdirectedRequest},
		{"a wrong port", "GET", "/api/queue", "127.0.0.1:9090", "", session, http.StatusMisdirectedRequest},
		{"no CSRF token", "POST", "/api/decide", "127.0.0.1:8080", decide, session, http.StatusForbidden},
		{"a wrong CSRF token", "POST", "/api/decide", "127.0.0.1:8080", decide,
			map[string]string{"Cookie": session["Cookie"], "X-CSRF-Token": "x"}, http.StatusForbidden},
		{"another origin", "POST", "/api/decide", "127.0.0.1:8080", decide,
			map[string]string{"Cookie": session["Cookie"], "X-CSRF-Token": opened.CSRF, "Origin": "http://evil.example"}, http.StatusForbidden},
		{"a body too large", "POST", "/api/decide", "127.0.0.1:8080", `{"note":"` + strings.Repeat("x", maxBody) + `"}`, withCSRF, http.StatusRequestEntityTooLarge},
		{"an unknown decision", "POST", "/api/decide", "127.0.0.1:8080", `{"action":"delete","ids":["R-0001"]}`, withCSRF, http.StatusBadRequest},
		{"an unknown field", "POST", "/api/decide", "127.0.0.1:8080", `{"action":"accept","ids":["R-0001"],"user":"mallory"}`, withCSRF, http.StatusBadRequest},
		{"the session", "GET", "/api/session", "127.0.0.1:8080", "", session, http.StatusOK},
		{"the page", "GET", "/", "localhost:8080", "", session, http.StatusOK},
		{"a page image with the session, no batch", "GET", "/api/page?id=P-123456&page=0&w=800", "127.0.0.1:8080", "", session, http.StatusNotFound},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := do(c.method, c.target, c.host, c.body, c.h)
			if w.Code != c.want {
				t.Errorf("status %d, want %d: %s", w.Code, c.want, w.Body)
			}
			if w.Header().Get("Cache-Control") != "no-store" || !strings.Contains(w.Header().Get("Content-Security-Policy"), "script-src 'self'") {
				t.Errorf("headers %v, want no-store and the CSP", w.Header())
			}
		})
	}
	if icon := do("GET", "/favicon.ico", "127.0.0.1:8080", "", nil); icon.Header().Get("Content-Type") != "image/svg+xml" {
		t.Errorf("/favicon.ico: Content-Type %q, want the SVG icon", icon.Header().Get("Content-Type"))
	}
	if strings.Contains(logged.String(), "P-123456") || strings.Contains(logged.String(), code) || !strings.Contains(logged.String(), "route=/api/page") ||
		!strings.Contains(logged.String(), "route=/favicon.ico") {
		t.Errorf("the log has a query, or not the routes:\n%s", logged.String())
	}
}

// TestRetryLanguageIsChecked: a retry from the desk that sets the
// language carries the desk's language check (the CLI passes
// ocr.CheckLanguages; review refuses a language retry without one).
func TestRetryLanguageIsChecked(t *testing.T) {
	t.Parallel()
	var asked []string
	check := func(lang string, orientation bool) error {
		asked = append(asked, lang)
		return nil
	}
	s := New(Config{Place: layout.Place{Out: t.TempDir()}, User: "alice", Host: "h", CheckLanguages: check}, "127.0.0.1:8080")
	o, err := s.decideOptions(decideRequest{Action: "retry", IDs: []string{"R-0001"},
		Retry: map[string]json.RawMessage{"lang": json.RawMessage(`"eng+zzz"`)}})
	if err != nil {
		t.Fatal(err)
	}
	if o.Retry.Lang != "eng+zzz" || !slices.Equal(o.RetrySet, []string{"lang"}) || o.CheckLanguages == nil {
		t.Fatalf("retry options: lang %q, set %q, check given %v", o.Retry.Lang, o.RetrySet, o.CheckLanguages != nil)
	}
	if err := o.CheckLanguages(o.Retry.Lang, true); err != nil || !slices.Equal(asked, []string{"eng+zzz"}) {
		t.Errorf("the options' check is not the desk's: asked %q", asked)
	}
}
