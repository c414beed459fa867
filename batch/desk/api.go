package desk

import (
	"cmp"
	"container/list"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/review"
	"github.com/refbatch/refbatch/ocr/page"
	"github.com/refbatch/refbatch/ocr/view"
)

// The desk's API: JSON for the script, JPEG for the page images.

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// fail answers an error the person can read; it is not logged.
func fail(w http.ResponseWriter, status int, err error) {
	writeJSON(w, status, map[string]string{"error": err.Error()})
}

func (s *Server) handleSession(w http.ResponseWriter, r *http.Request) {
	var csrf string
	if c, err := r.Cookie(cookieName); err == nil {
		csrf, _ = s.sess.csrfOf(c.Value)
	}
	writeJSON(w, http.StatusOK, map[string]string{"csrf": csrf, "user": s.cfg.User, "host": s.cfg.Host})
}

func (s *Server) handleQueue(w http.ResponseWriter, r *http.Request) {
	rows, err := review.DeskQueue(s.cfg.Place)
	if err != nil {
		fail(w, http.StatusInternalServerError, err)
		return
	}
	writeJSON(w, http.StatusOK, rows)
}

func (s *Server) handleDoc(w http.ResponseWriter, r *http.Request) {
	d, err := review.DeskDocument(r.Context(), s.cfg.Place, r.URL.Query().Get("id"), s.cfg.Identities)
	if errors.Is(err, review.ErrNoDeskDocument) {
		fail(w, http.StatusNotFound, err)
		return
	}
	if err != nil {
		fail(w, http.StatusInternalServerError, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

func (s *Server) handlePage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	id := q.Get("id")
	pg, err1 := strconv.Atoi(q.Get("page"))
	width, err2 := strconv.Atoi(q.Get("w"))
	g, err3 := pageGeometry(q)
	if id == "" || err1 != nil || err2 != nil || pg < 0 || width <= 0 {
		fail(w, http.StatusBadRequest, errors.New("want id, page (from 0), w (pixels), and rot (0, 90, 180 or 270) or the canvas read (dpi, cw, ch, m)"))
		return
	}
	if err3 != nil {
		fail(w, http.StatusBadRequest, err3)
		return
	}
	width = min(width, view.MaxWidth)
	key := imageKey{id: id, page: pg, width: width, geometry: g}
	img, ok := s.images.get(key)
	if !ok {
		// The source is read (and its hash checked) only when the child
		// does not have it open; its admitted hash names it for the child.
		sum, read, err := review.DeskSource(s.cfg.Place, id)
		if err != nil {
			fail(w, http.StatusNotFound, err)
			return
		}
		img, err = s.cfg.View.Render(r.Context(), sum, read, pg, width, g)
		if err != nil {
			fail(w, http.StatusUnprocessableEntity, err)
			return
		}
		s.images.put(key, img)
	}
	w.Header().Set("Content-Type", "image/jpeg")
	w.Header().Set("X-Page-Width", strconv.Itoa(img.Width))
	w.Header().Set("X-Page-Height", strconv.Itoa(img.Height))
	w.Header().Set("X-Pages", strconv.Itoa(img.Pages))
	_, _ = w.Write(img.JPEG)
}

// decideRequest is a decision about one or more documents.
type decideRequest struct {
	Action string   `json:"action"`
	IDs    []string `json:"ids"`
	Note   string   `json:"note"`
	// Since is each document's version as shown (DeskDoc.Version; a
	// dismissal's is DeskRejection.Version); documents not in it are
	// decided if they are in review (dismissed if rejected).
	Since map[string]int64 `json:"since"`
	// Retry is a retry's page settings, by page.Policy's JSON names.
	Retry map[string]json.RawMessage `json:"retry"`
}

// decided is the outcome of one decision as the script shows it.
type decided struct {
	ID      string `json:"id"`
	OK      bool   `json:"ok"`
	Message string `json:"message"`
	Changed bool   `json:"changed,omitempty"`
}

func (s *Server) handleDecide(w http.ResponseWriter, r *http.Request) {
	var req decideRequest
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		fail(w, http.StatusBadRequest, fmt.Errorf("reading the decision: %w", err))
		return
	}
	o, err := s.decideOptions(req)
	if err != nil {
		fail(w, http.StatusBadRequest, err)
		return
	}
	res, err := review.Decide(r.Context(), o)
	var se *page.SettingError
	if errors.As(err, &se) {
		fail(w, http.StatusBadRequest, fmt.Errorf("retry: %s %v: want %s", se.Setting, se.Value, se.Want))
		return
	}
	var le *review.LanguageError
	if errors.As(err, &le) {
		fail(w, http.StatusBadRequest, fmt.Errorf("retry: %w", err))
		return
	}
	out := []decided{}
	for _, d := range res {
		out = append(out, decidedOf(d))
	}
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, map[string]any{"error": err.Error(), "decided": out})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"decided": out})
}

// decideOptions checks req and makes it a decision as the CLI's.
func (s *Server) decideOptions(req decideRequest) (review.DecideOptions, error) {
	o := review.DecideOptions{Out: s.cfg.Place.Out, Journal: s.cfg.Place.Journal, Action: journal.Action(req.Action),
		SourceIDs: req.IDs, User: s.cfg.User, Host: s.cfg.Host, Note: req.Note, Since: req.Since, CheckLanguages: s.cfg.CheckLanguages}
	switch o.Action {
	case journal.Accept, journal.Reject, journal.Retry, journal.Dismiss, journal.Undo:
	default:
		return o, fmt.Errorf("unknown decision %q: accept, reject, retry, dismiss or undo", req.Action)
	}
	if len(req.IDs) == 0 || len(req.IDs) > maxDecided {
		return o, fmt.Errorf("a decision is about 1 to %d documents", maxDecided)
	}
	if len(req.Retry) > 0 && o.Action != journal.Retry {
		return o, errors.New("page settings go with a retry only")
	}
	if len(req.Retry) > 0 {
		for name := range req.Retry {
			if !review.IsRetrySetting(name) {
				return o, fmt.Errorf("retry: no setting %q: a retry sets the page settings and the validation's, by the names review retry --help gives", name)
			}
		}
		b, _ := json.Marshal(req.Retry)
		if err := json.Unmarshal(b, &o.Retry); err != nil {
			return o, fmt.Errorf("retry settings: %w", err)
		}
		if err := json.Unmarshal(b, &o.RetryValidation); err != nil {
			return o, fmt.Errorf("retry settings: %w", err)
		}
		for name := range req.Retry {
			o.RetrySet = append(o.RetrySet, name)
		}
		slices.Sort(o.RetrySet)
	}
	return o, nil
}

func decidedOf(d review.Decided) decided {
	var nr *journal.NotInReviewError
	var ch *journal.ChangedError
	switch {
	case d.Err == nil && d.Decision.Action == journal.Retry:
		return decided{ID: d.SourceID, OK: true, Message: fmt.Sprintf("%s: was %s %s; queued: the next refbatch run of its manifest reads it again (the same command as before, into the same --out)",
			d.Decision.Action, d.Decision.FromState, d.Decision.FromReason)}
	case d.Err == nil:
		return decided{ID: d.SourceID, OK: true, Message: fmt.Sprintf("%s: was %s %s", d.Decision.Action, d.Decision.FromState, d.Decision.FromReason)}
	case errors.As(d.Err, &ch):
		return decided{ID: d.SourceID, Message: ch.Error() + ": look at it again before deciding", Changed: true}
	case errors.As(d.Err, &nr):
		return decided{ID: d.SourceID, Message: nr.Error(), Changed: true}
	case errors.As(d.Err, new(*journal.NotUndoableError)):
		return decided{ID: d.SourceID, Message: d.Err.Error()}
	case errors.Is(d.Err, journal.ErrNoDocument):
		return decided{ID: d.SourceID, Message: d.SourceID + ": no document has this source_id"}
	}
	return decided{ID: d.SourceID, Message: d.Err.Error()}
}

// imageKey names a rendered page.
type imageKey struct {
	id          string
	page, width int
	geometry    view.Geometry
}

// pageGeometry is how the page asked for is turned: by rot, or, when dpi
// is given, onto the canvas OCR read (dpi, cw, ch and the six numbers of
// m: the page's Canvas in its reading), so that every box the desk draws
// in the canvas's pixels sits on its ink.
func pageGeometry(q url.Values) (view.Geometry, error) {
	var g view.Geometry
	var err error
	if g.Rotate, err = strconv.Atoi(cmp.Or(q.Get("rot"), "0")); err != nil {
		return g, errors.New("rot is 0, 90, 180 or 270")
	}
	if q.Get("dpi") != "" {
		g.Rotate = 0
		ms := strings.Split(q.Get("m"), ",")
		g.DPI, err = strconv.Atoi(q.Get("dpi"))
		w, err2 := strconv.Atoi(q.Get("cw"))
		h, err3 := strconv.Atoi(q.Get("ch"))
		if err != nil || err2 != nil || err3 != nil || len(ms) != 6 || g.DPI < 1 {
			return g, errors.New("a canvas is dpi, cw and ch (whole numbers) and m (six numbers)")
		}
		g.Width, g.Height = w, h
		for i, v := range ms {
			if g.Matrix[i], err = strconv.ParseFloat(v, 64); err != nil {
				return g, errors.New("a canvas map m is six numbers")
			}
		}
	}
	return g, g.Check()
}

// imageCache keeps the last few rendered pages, in memory only.
type imageCache struct {
	mu    sync.Mutex
	max   int
	order *list.List // of imageKey, most recent first
	items map[imageKey]*view.Image
}

func newImageCache(n int) *imageCache {
	return &imageCache{max: n, order: list.New(), items: map[imageKey]*view.Image{}}
}

func (c *imageCache) get(k imageKey) (*view.Image, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	img, ok := c.items[k]
	if ok {
		for e := c.order.Front(); e != nil; e = e.Next() {
			if e.Value.(imageKey) == k {
				c.order.MoveToFront(e)
				break
			}
		}
	}
	return img, ok
}

func (c *imageCache) put(k imageKey, img *view.Image) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.items[k]; ok {
		return
	}
	c.items[k] = img
	c.order.PushFront(k)
	for c.order.Len() > c.max {
		e := c.order.Back()
		delete(c.items, e.Value.(imageKey))
		c.order.Remove(e)
	}
}

// transcribeRequest is a person's text for a region of a page.
type transcribeRequest struct {
	ID    string `json:"id"`
	Since int64  `json:"since"`
	Page  int    `json:"page"`
	// Box is decoded as it came, so that three numbers or five are
	// refused rather than padded or cut to four (box).
	Box   []json.Number `json:"box"`
	Field string        `json:"field"`
	Text  string        `json:"text"`
}

// box is the request's box as four whole numbers of pixels, or an error
// naming the rule; review.Transcribe holds it to the page.
func (req transcribeRequest) box() ([4]int, error) {
	var b [4]int
	if len(req.Box) != 4 {
		return b, fmt.Errorf("a box is exactly four numbers (x0, y0, x1, y1 in pixels of the page as read), not %d", len(req.Box))
	}
	for i, n := range req.Box {
		v, err := strconv.Atoi(n.String())
		if err != nil {
			return b, fmt.Errorf("a box is four whole numbers of pixels: %q is not one", n.String())
		}
		b[i] = v
	}
	return b, nil
}

func (s *Server) handleTranscribe(w http.ResponseWriter, r *http.Request) {
	var req transcribeRequest
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		fail(w, http.StatusBadRequest, fmt.Errorf("reading the transcription: %w", err))
		return
	}
	if req.ID == "" || req.Since == 0 {
		fail(w, http.StatusBadRequest, errors.New("a transcription names the document and its version"))
		return
	}
	box, err := req.box()
	if err != nil {
		fail(w, http.StatusBadRequest, err)
		return
	}
	path, err := review.Transcribe(r.Context(), review.TranscribeOptions{Out: s.cfg.Place.Out, Journal: s.cfg.Place.Journal,
		SourceID: req.ID, Since: req.Since, Page: req.Page, Box: box, Field: req.Field, Text: req.Text,
		User: s.cfg.User, Host: s.cfg.Host, Identities: s.cfg.Identities})
	var nr *journal.NotInReviewError
	var ch *journal.ChangedError
	switch {
	case errors.As(err, &ch):
		fail(w, http.StatusConflict, fmt.Errorf("%s: look at it again before transcribing", ch.Error()))
	case errors.As(err, &nr):
		fail(w, http.StatusConflict, nr)
	case err != nil:
		fail(w, http.StatusBadRequest, err)
	default:
		writeJSON(w, http.StatusOK, map[string]string{"artifact": path})
	}
}
