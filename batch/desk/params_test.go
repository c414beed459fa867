package desk

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/refbatch/refbatch/batch/layout"
)

// TestPageParams: a page image is asked for with an id, a page from 0, a
// width in pixels over 0 and a quarter turn or a canvas read at 1 dpi or
// more; anything else is a 400 before the batch is looked at. And
// /api/session gives the page back the session's own CSRF token.
func TestPageParams(t *testing.T) {
	t.Parallel()
	s := New(Config{Place: layout.Place{Out: t.TempDir()}, User: "alice", Host: "h"}, "127.0.0.1:8080")
	login := open(s, s.Code())
	var opened struct{ CSRF string }
	json.Unmarshal(login.Body.Bytes(), &opened)
	cookie := login.Result().Cookies()[0]
	get := func(target string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("GET", target, nil)
		r.Host = "127.0.0.1:8080"
		r.AddCookie(cookie)
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		return w
	}
	for _, q := range []string{
		"page=0&w=100", "id=R-1&w=100", "id=R-1&page=0", "id=R-1&page=-1&w=100", "id=R-1&page=x&w=100",
		"id=R-1&page=0&w=0", "id=R-1&page=0&w=-5", "id=R-1&page=0&w=x", "id=R-1&page=0&w=100&rot=45",
		"id=R-1&page=0&w=100&rot=-90", "id=R-1&page=0&w=100&rot=360", "id=R-1&page=0&w=100&rot=x",
		"id=R-1&page=0&w=100&dpi=300&cw=10&ch=10&m=1,0,0,1,0", "id=R-1&page=0&w=100&dpi=300&cw=10&ch=10&m=2,0,0,2,0,0",
		"id=R-1&page=0&w=100&dpi=0&cw=10&ch=10&m=1,0,0,1,0,0", "id=R-1&page=0&w=100&dpi=300&cw=0&ch=10&m=1,0,0,1,0,0",
		"id=R-1&page=0&w=100&dpi=300&cw=10&ch=10&m=NaN,0,0,1,0,0",
	} {
		if w := get("/api/page?" + q); w.Code != http.StatusBadRequest {
			t.Errorf("/api/page?%s: %d, want 400", q, w.Code)
		}
	}
	for _, q := range []string{"id=R-1&page=0&w=1", "id=R-1&page=0&w=100&rot=270", "id=R-1&page=0&w=100&rot=0",
		"id=R-1&page=0&w=100&dpi=300&cw=2550&ch=3300&m=0.999,0.035,-0.035,0.999,40.5,-3.25",
		"id=R-1&page=0&w=100&dpi=1&cw=10&ch=10&m=1,0,0,1,0,0"} {
		if w := get("/api/page?" + q); w.Code == http.StatusBadRequest {
			t.Errorf("/api/page?%s: 400 %s", q, w.Body)
		}
	}
	var got struct{ CSRF string }
	if w := get("/api/session"); json.Unmarshal(w.Body.Bytes(), &got) != nil || got.CSRF != opened.CSRF || got.CSRF == "" {
		t.Errorf("/api/session: csrf %q, want the session's %q", got.CSRF, opened.CSRF)
	}
}
