// Package desk is the review desk (refbatch desk): a local web
// application where a person works through a batch's review lane one
// document at a time, with the page image, the words refbatch read on it,
// the manifest's fields and the document's history on one screen, and
// decides it through the same journal transaction as `refbatch review`.
//
// It is safe by construction, since what it shows is medical:
//
//   - every request for the batch needs a session: the one-time code
//     printed at start, typed into the page and POSTed (never in a URL),
//     exchanged once for a session of that browser's own, an HttpOnly,
//     SameSite=Strict cookie (session.go); only the page and its script
//     and style are served without one;
//   - every state change needs the session's CSRF token in a header;
//   - the Host header must name the address listened on (no DNS
//     rebinding);
//   - every response is Cache-Control: no-store, under a strict
//     Content-Security-Policy (no inline script, nothing from elsewhere);
//   - request bodies are bounded, and so are concurrent renders (the page
//     images are rendered by supervised children, never written to disk,
//     and a few are kept in memory);
//   - the log has methods, routes, statuses and durations: never a
//     query, a source_id, text or an image.
package desk

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"embed"

	"filippo.io/age"

	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/ocr/view"
)

//go:embed static
var static embed.FS

// Config is what a desk serves and how.
type Config struct {
	// Place is the batch.
	Place layout.Place
	// Identities decrypt the batch's artifacts; none for a plaintext
	// batch.
	Identities []age.Identity
	// View renders the page images.
	View *view.Pool
	// User and Host are recorded with every decision, as the CLI records
	// them.
	User, Host string
	// CheckLanguages refuses a retry's languages that are not installed,
	// as the CLI's retry does (see review.DecideOptions).
	CheckLanguages func(lang string, orientation bool) error
	// Log receives one line per request; nil logs nothing.
	Log *slog.Logger
}

// Limits of a desk.
const (
	// maxBody caps a request body: a decision about many documents with
	// a note is a few kilobytes.
	maxBody = 256 << 10
	// maxDecided caps the documents one request decides.
	maxDecided = 5000
	// cookieName names the session cookie.
	cookieName = "refbatch_desk"
	// csp is the Content-Security-Policy of every response: this origin
	// only, no inline script or style, page images as blobs the script
	// made from this origin's responses.
	csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob:; connect-src 'self'; " +
		"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)

// Server is one desk: its sessions and the hosts it answers to.
type Server struct {
	cfg    Config
	sess   *sessions
	hosts  map[string]bool
	images *imageCache
	mux    *http.ServeMux
}

// New returns a desk for cfg answering at addr (host:port, as listened
// on): the Host header must be addr, or localhost with its port when addr
// is a loopback address.
func New(cfg Config, addr string) *Server {
	s := &Server{cfg: cfg, sess: newSessions(), hosts: allowedHosts(addr), images: newImageCache(8)}
	s.routes()
	return s
}

// allowedHosts are the Host headers the desk answers: addr, and for a
// loopback address its other names with the same port.
func allowedHosts(addr string) map[string]bool {
	hosts := map[string]bool{addr: true}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return hosts
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		for _, h := range []string{"localhost", "127.0.0.1", "[::1]"} {
			hosts[h+":"+port] = true
		}
	}
	return hosts
}

func randomToken() string {
	b := make([]byte, 24)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func (s *Server) routes() {
	s.mux = http.NewServeMux()
	sub, _ := fs.Sub(static, "static")
	files := http.FileServerFS(sub)
	s.mux.Handle("GET /static/", http.StripPrefix("/static/", files))
	s.mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFileFS(w, r, sub, "index.html")
	})
	// The icon the page names; a browser that asks for /favicon.ico
	// anyway gets it too, rather than a 404 in its console.
	s.mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFileFS(w, r, sub, "favicon.svg")
	})
	s.mux.HandleFunc("POST /api/open", s.handleOpen)
	s.mux.HandleFunc("GET /api/session", s.handleSession)
	s.mux.HandleFunc("GET /api/queue", s.handleQueue)
	s.mux.HandleFunc("GET /api/doc", s.handleDoc)
	s.mux.HandleFunc("GET /api/page", s.handlePage)
	s.mux.HandleFunc("POST /api/decide", s.handleDecide)
	s.mux.HandleFunc("POST /api/transcribe", s.handleTranscribe)
	s.mux.HandleFunc("POST /api/withdraw", s.handleWithdraw)
}

// ServeHTTP checks every request (the Host, the session, the CSRF token
// of a state change) before any handler sees it, and logs it without its
// query.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := &statusWriter{ResponseWriter: w, status: http.StatusOK}
	h := rec.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	s.serve(rec, r)
	if s.cfg.Log != nil {
		// The path only: a query holds a token or a source_id.
		s.cfg.Log.Info("desk request", "method", r.Method, "route", route(r.URL.Path), "status", rec.status,
			"ms", time.Since(start).Milliseconds())
	}
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if !s.hosts[r.Host] {
		http.Error(w, "wrong Host header", http.StatusMisdirectedRequest)
		return
	}
	if r.ContentLength > maxBody {
		http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	if o := r.Header.Get("Origin"); o != "" && r.Method != http.MethodGet && r.Method != http.MethodHead && !s.hosts[strings.TrimPrefix(o, "http://")] {
		http.Error(w, "wrong origin", http.StatusForbidden)
		return
	}
	if public(r) {
		s.mux.ServeHTTP(w, r)
		return
	}
	csrf, ok := "", false
	if c, err := r.Cookie(cookieName); err == nil {
		csrf, ok = s.sess.csrfOf(c.Value)
	}
	if !ok {
		http.Error(w, "no session: open the address refbatch desk printed and enter its code", http.StatusForbidden)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead && !equal(r.Header.Get("X-CSRF-Token"), csrf) {
		http.Error(w, "missing or wrong CSRF token", http.StatusForbidden)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// public reports whether r asks for what is served without a session:
// the page, its script, style and icon (none holds anything of the
// batch), and the exchange of a code for a session.
func public(r *http.Request) bool {
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/api/open":
		return true
	case r.Method != http.MethodGet && r.Method != http.MethodHead:
		return false
	}
	return r.URL.Path == "/" || r.URL.Path == "/favicon.ico" || strings.HasPrefix(r.URL.Path, "/static/")
}

func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// route is a request's path as the log shows it: one of the desk's
// routes, never anything a request made up.
func route(path string) string {
	switch path {
	case "/", "/favicon.ico", "/api/open", "/api/session", "/api/queue", "/api/doc", "/api/page", "/api/decide", "/api/transcribe", "/api/withdraw":
		return path
	}
	if strings.HasPrefix(path, "/static/") {
		return "/static/"
	}
	return "other"
}

// statusWriter remembers the status written, for the log.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}
