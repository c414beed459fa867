package desk

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/refbatch/refbatch/batch/layout"
)

// session opens a session on s and returns a request maker that sends
// its cookie and CSRF token.
func session(t *testing.T, s *Server) func(method, target, body string) *httptest.ResponseRecorder {
	t.Helper()
	login := open(s, s.Code())
	if login.Code != http.StatusOK {
		t.Fatalf("the code: %d %s", login.Code, login.Body)
	}
	var opened struct{ CSRF string }
	json.Unmarshal(login.Body.Bytes(), &opened)
	cookie := login.Result().Cookies()[0]
	return func(method, target, body string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, target, strings.NewReader(body))
		r.Host = "127.0.0.1:8080"
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("X-CSRF-Token", opened.CSRF)
		r.AddCookie(cookie)
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		return w
	}
}

// TestDecideRequest: a decision is about 1 to maxDecided documents, and
// page settings go with a retry only; anything else is a 400 before the
// batch is looked at, and a body over maxBody bytes a 413. A decision that passes those checks reaches the
// batch, which here does not exist: an error (500), never a success.
func TestDecideRequest(t *testing.T) {
	t.Parallel()
	do := session(t, New(Config{Place: layout.Place{Out: t.TempDir()}, User: "alice", Host: "h"}, "127.0.0.1:8080"))
	ids := func(n int) string {
		s := make([]string, n)
		for i := range s {
			s[i] = fmt.Sprintf(`"R-%d"`, i)
		}
		return "[" + strings.Join(s, ",") + "]"
	}
	const tooMany, retryOnly = "1 to 5000 documents", "page settings go with a retry only"
	// padded is a decision about one document, n bytes long.
	padded := func(n int) string {
		d := `{"action":"accept","ids":["R-1"]}`
		return d + strings.Repeat(" ", n-len(d))
	}
	for _, tc := range []struct {
		name, body string
		status     int
		says       string
	}{
		{"no documents", `{"action":"accept","ids":[]}`, http.StatusBadRequest, tooMany},
		{"one document", `{"action":"accept","ids":["R-1"]}`, http.StatusInternalServerError, ""},
		{"as many as allowed", `{"action":"accept","ids":` + ids(maxDecided) + `}`, http.StatusInternalServerError, ""},
		{"one too many", `{"action":"accept","ids":` + ids(maxDecided+1) + `}`, http.StatusBadRequest, tooMany},
		{"page settings with an accept", `{"action":"accept","ids":["R-1"],"retry":{"dpi":400}}`, http.StatusBadRequest, retryOnly},
		{"no page settings with a retry", `{"action":"retry","ids":["R-1"]}`, http.StatusInternalServerError, ""},
		{"a body of the most bytes allowed", padded(maxBody), http.StatusInternalServerError, ""},
		{"a body a byte longer", padded(maxBody + 1), http.StatusRequestEntityTooLarge, ""},
	} {
		w := do("POST", "/api/decide", tc.body)
		got := struct{ Error string }{strings.TrimSpace(w.Body.String())}
		json.Unmarshal(w.Body.Bytes(), &got)
		if w.Code != tc.status || !strings.Contains(got.Error, tc.says) || got.Error == "" {
			t.Errorf("%s: %d %q, want %d saying %q", tc.name, w.Code, got.Error, tc.status, tc.says)
		}
	}
}

// TestQueueWithoutBatch: the queue of a folder that holds no batch is an
// error the page shows, not an empty queue.
func TestQueueWithoutBatch(t *testing.T) {
	t.Parallel()
	do := session(t, New(Config{Place: layout.Place{Out: t.TempDir()}, User: "alice", Host: "h"}, "127.0.0.1:8080"))
	w := do("GET", "/api/queue", "")
	var got struct{ Error string }
	if json.Unmarshal(w.Body.Bytes(), &got); w.Code != http.StatusInternalServerError || got.Error == "" {
		t.Errorf("/api/queue with no batch: %d %s, want 500 with an error", w.Code, w.Body)
	}
}

// TestAllowedHosts: a desk answers to the address it listens on; a
// loopback address's other names with the same port are the same
// machine, another address's are not (a name that resolves anywhere is
// what DNS rebinding uses).
func TestAllowedHosts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		addr, host string
		want       bool
	}{
		{"127.0.0.1:8080", "127.0.0.1:8080", true},
		{"127.0.0.1:8080", "localhost:8080", true},
		{"127.0.0.1:8080", "[::1]:8080", true},
		{"127.0.0.1:8080", "localhost:8081", false},
		{"[::1]:9000", "localhost:9000", true},
		{"192.168.1.5:8080", "192.168.1.5:8080", true},
		{"192.168.1.5:8080", "localhost:8080", false},
		{"192.168.1.5:8080", "127.0.0.1:8080", false},
		{"desk.example:8080", "localhost:8080", false},
		{"desk.example:8080", "desk.example:8080", true},
	} {
		if got := allowedHosts(tc.addr)[tc.host]; got != tc.want {
			t.Errorf("a desk at %s answers Host %s: %v, want %v", tc.addr, tc.host, got, tc.want)
		}
	}
}
