package report

import (
	"cmp"
	"maps"
	"slices"
	"strconv"

	"github.com/refbatch/refbatch/report/outcome"
)

// pageRows keeps, from rows seen one at a time in manifest order, what
// report.html shows of them: counts, the confidence histogram, and at most
// htmlRowCap rows per listing.
type pageRows struct {
	bands      Bands
	root       string // the run's --root, "" when not recorded
	many       bool   // a report over several manifests: lines name theirs
	n          int
	first      []Row
	confidence confidenceBins
	review     map[outcome.Reason]*reviewRows
	rejected   map[outcome.Reason]*rowList
	// listed holds the done and duplicate rows, for their compact lists,
	// and withdrawn the rows no longer in their manifest.
	listed    map[outcome.State]*rowList
	withdrawn rowList
	// dismissed holds the rejected rows a person acknowledged (refbatch
	// review dismiss): they need nothing more, so they are listed apart,
	// without the fix.
	dismissed rowList
	// decided holds the first rows a person decided about, nDecided
	// counts them all.
	decided  []Row
	nDecided int
}

// reviewRows are the review rows of one reason: n in all, and the most
// confident of them (the lane's order within a reason).
type reviewRows struct {
	n    int
	rows []Row
}

// rowList is the rows of one listing: n in all, and the first htmlRowCap
// of them by line and source_id.
type rowList struct {
	n    int
	rows []listedRow
}

// listedRow names a row in a compact listing: its manifest line (prefixed
// by the manifest's name when the report covers several) and source_id.
type listedRow struct {
	Line     string
	SourceID string
	// Detail and Advice are a rejected row's (Row.Detail, Row.Advice);
	// Advice only when it is not its reason's own fix.
	Detail, Advice string
}

func newPageRows(n *Report) *pageRows {
	return &pageRows{bands: n.Summary.ConfidenceBands, root: n.Run.Settings["root"], many: n.Run.Manifest == "",
		review: map[outcome.Reason]*reviewRows{}, rejected: map[outcome.Reason]*rowList{},
		listed: map[outcome.State]*rowList{}}
}

func (p *pageRows) add(r Row) {
	p.n++
	if len(p.first) < htmlRowCap {
		p.first = append(p.first, r)
	}
	if r.Withdrawn {
		// Out of every lane: listed on its own, by the line it last had.
		p.addTo(&p.withdrawn, r)
		return
	}
	p.confidence.add(r)
	if r.Decision != nil {
		p.nDecided++
		if len(p.decided) < htmlRowCap {
			p.decided = append(p.decided, r)
		}
	}
	switch r.State {
	case outcome.Review:
		g := p.review[r.Reason]
		if g == nil {
			g = &reviewRows{}
			p.review[r.Reason] = g
		}
		g.n++
		g.rows = append(g.rows, r)
		// Trim only now and then: sorting at every row would cost more
		// than the memory saved.
		if len(g.rows) >= 2*htmlRowCap {
			g.trim()
		}
	case outcome.Rejected:
		if r.Decision != nil && r.Decision.Action == dismissAction {
			p.addTo(&p.dismissed, r)
			break
		}
		list(p, p.rejected, r.Reason, r)
	case outcome.Done, outcome.Duplicate:
		list(p, p.listed, r.State, r)
	}
}

// list counts r in the listing of m under key, and names it there while
// the listing has room.
func list[K comparable](p *pageRows, m map[K]*rowList, key K, r Row) {
	g := m[key]
	if g == nil {
		g = &rowList{}
		m[key] = g
	}
	p.addTo(g, r)
}

// addTo counts r in g, and names it there while g has room.
func (p *pageRows) addTo(g *rowList, r Row) {
	g.n++
	if len(g.rows) < htmlRowCap {
		l := strconv.Itoa(r.ManifestLine)
		if p.many && r.Manifest != "" {
			l = baseName(r.Manifest) + ":" + l
		}
		lr := listedRow{Line: l, SourceID: r.SourceID, Detail: r.Detail}
		if r.Advice != explanations[r.Reason].fix {
			lr.Advice = r.Advice
		}
		g.rows = append(g.rows, lr)
	}
}

// trim sorts the rows in the lane's order, most confident first (their
// text is the most trustworthy, so a look settles them fastest), then
// manifest order, and keeps the first htmlRowCap.
func (g *reviewRows) trim() {
	slices.SortStableFunc(g.rows, func(a, b Row) int {
		return cmp.Or(cmp.Compare(b.MeanConfidence, a.MeanConfidence), compareRows(a, b))
	})
	if len(g.rows) > htmlRowCap {
		clear(g.rows[htmlRowCap:])
		g.rows = g.rows[:htmlRowCap]
	}
}

// reviewGroup is the review rows of one reason, with what a person should
// look at and the commands that decide them: N rows, of which Rows are
// shown and More are not.
type reviewGroup struct {
	Reason string
	Action string
	Decide []decision
	Rows   []Row
	N      int
	More   int
}

// rejectedGroup is one rejection reason with what it means, how to fix it,
// and the rows that got it: N rows, of which Rows are shown and More are
// not.
type rejectedGroup struct {
	Reason  string
	Meaning string
	Fix     string
	Rows    []listedRow
	N       int
	More    int
}

// stateList is the compact list of the rows of a state that need nothing
// (done, duplicate), under its Title with a Note saying what the state
// means, at Anchor on the page: N rows, of which Rows are shown and More
// are not.
type stateList struct {
	Anchor, Title, Note string
	Rows                []listedRow
	N                   int
	More                int
}

// reviewLane groups the review rows by reason in the lane's order (see
// explanations); within a reason the most confident come first, then
// manifest order.
func (p *pageRows) reviewLane() []reviewGroup {
	reasons := slices.SortedFunc(maps.Keys(p.review), compareReview)
	var out []reviewGroup
	for _, reason := range reasons {
		g := p.review[reason]
		g.trim()
		label := string(reason)
		if reason == "" {
			label = "(no reason)" // a bug upstream; show it anyway
		}
		out = append(out, reviewGroup{Reason: label, Action: reviewAction(reason, p.bands.Low), Decide: reviewDecisions(reason),
			Rows: g.rows, N: g.n, More: g.n - len(g.rows)})
	}
	return out
}

// rejectedGroups groups rejected rows by reason, most frequent first (ties
// by name): the fix that clears the most rows leads. The fix of
// path_outside_root names the root the run had.
func (p *pageRows) rejectedGroups() []rejectedGroup {
	counts := make([]reasonCount, 0, len(p.rejected))
	for reason, g := range p.rejected {
		if reason != "" {
			counts = append(counts, reasonCount{Reason: reason, N: g.n})
		}
	}
	sortReasonCounts(counts)
	var out []rejectedGroup
	group := func(reason outcome.Reason, label string) {
		g := p.rejected[reason]
		e := explanations[reason]
		if reason == outcome.PathOutsideRoot && p.root != "" {
			e.fix += " The root was " + p.root + "."
		}
		out = append(out, rejectedGroup{label, e.meaning, e.fix, g.rows, g.n, g.n - len(g.rows)})
	}
	for _, rc := range counts {
		group(rc.Reason, string(rc.Reason))
	}
	if _, ok := p.rejected[""]; ok { // a rejected row without a reason is a bug upstream; show it anyway
		group("", "(no reason)")
	}
	return out
}

// stateList returns the compact list of st's rows, with its title and
// note.
func (p *pageRows) stateList(st outcome.State, title, note string) stateList {
	l := stateList{Anchor: stateAnchor(st), Title: title, Note: note}
	if g := p.listed[st]; g != nil {
		l.Rows, l.N, l.More = g.rows, g.n, g.n-len(g.rows)
	}
	return l
}
