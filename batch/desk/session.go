package desk

import (
	"encoding/json"
	"errors"
	"net/http"
	"sync"
)

// The desk's sessions. refbatch desk prints the desk's address and a
// one-time code; the page asks for the code and POSTs it to /api/open,
// which consumes it and answers with a session of that browser's own (a
// cookie, and a CSRF token for its changes). The code is never in a URL,
// so no browser history, log or Referer holds it; a second use of a code
// is refused, saying how to get a new one (NewCode: refbatch desk prints
// one on Enter or SIGHUP). Sessions are in memory only and end with the
// desk.

// sessions holds the code not yet used and the sessions it opened.
type sessions struct {
	mu   sync.Mutex
	code string // the one-time code printed last; "" once used
	// used are the codes already exchanged, to tell a second use from a
	// wrong code.
	used map[string]bool
	// open maps a session's cookie to its CSRF token.
	open map[string]string
}

func newSessions() *sessions {
	return &sessions{code: randomToken(), used: map[string]bool{}, open: map[string]string{}}
}

// NewCode makes a fresh one-time code, which replaces one printed
// earlier and not used yet, and returns it.
func (s *Server) NewCode() string {
	s.sess.mu.Lock()
	defer s.sess.mu.Unlock()
	if s.sess.code != "" {
		s.sess.used[s.sess.code] = true
	}
	s.sess.code = randomToken()
	return s.sess.code
}

// Code is the one-time code not used yet, "" when it was used.
func (s *Server) Code() string {
	s.sess.mu.Lock()
	defer s.sess.mu.Unlock()
	return s.sess.code
}

// errCodeUsed is a code presented a second time.
var errCodeUsed = errors.New("this code was already used: each code opens one browser session. " +
	"For a new code press Enter in the terminal where refbatch desk runs, or send it SIGHUP (kill -HUP <pid>)")

// errCodeWrong is a code the desk never printed.
var errCodeWrong = errors.New("wrong code: enter the code refbatch desk printed")

// exchange consumes code and returns a new session and its CSRF token.
func (ss *sessions) exchange(code string) (session, csrf string, err error) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	switch {
	case code != "" && ss.code != "" && equal(code, ss.code):
		ss.used[ss.code] = true
		ss.code = ""
		session, csrf = randomToken(), randomToken()
		ss.open[session] = csrf
		return session, csrf, nil
	case ss.used[code]:
		return "", "", errCodeUsed
	}
	return "", "", errCodeWrong
}

// csrfOf returns the CSRF token of the session cookie value, ok false
// when it opens no session.
func (ss *sessions) csrfOf(session string) (string, bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	csrf, ok := ss.open[session]
	return csrf, ok
}

// count is how many sessions are open.
func (ss *sessions) count() int {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return len(ss.open)
}

// handleOpen exchanges the code a page POSTs ({"code": ...}, as JSON,
// so that a form of another site cannot send it without the preflight
// this desk never answers) for a session cookie.
func (s *Server) handleOpen(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Content-Type") != "application/json" {
		fail(w, http.StatusUnsupportedMediaType, errors.New("the code is sent as JSON"))
		return
	}
	var req struct {
		Code string `json:"code"`
	}
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		fail(w, http.StatusBadRequest, errors.New(`want {"code": "..."}`))
		return
	}
	session, csrf, err := s.sess.exchange(req.Code)
	if err != nil {
		fail(w, http.StatusForbidden, err)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: session, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	writeJSON(w, http.StatusOK, map[string]string{"csrf": csrf, "user": s.cfg.User, "host": s.cfg.Host})
}
