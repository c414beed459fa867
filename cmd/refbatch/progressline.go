package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"time"
	"unicode/utf8"

	"golang.org/x/term"
)

// The progress line is "  40% |█████   | (4/10) [1m2s] " and then the
// description barProgress composes: it must fit the terminal, down to
// minColumns, or every redraw wraps into a new line.
const (
	// minColumns is the narrowest terminal the line is fitted to.
	minColumns = 60
	// defaultColumns is the width assumed when the terminal says none.
	defaultColumns = 80
	// barWidth is the bar's width on a wide terminal; minBarWidth what it
	// keeps before the description gives up words.
	barWidth    = 24
	minBarWidth = 8
)

// terminalColumns is w's width when it is a terminal that says, else
// $COLUMNS, else defaultColumns; never under minColumns.
func terminalColumns(w io.Writer) int {
	cols := 0
	if f, ok := w.(*os.File); ok {
		if c, _, err := term.GetSize(int(f.Fd())); err == nil {
			cols = c
		}
	}
	if cols <= 0 {
		cols, _ = strconv.Atoi(os.Getenv("COLUMNS"))
	}
	if cols <= 0 {
		cols = defaultColumns
	}
	return max(cols, minColumns)
}

// fixedWidth is the width of the line's parts before the description
// with a bar of minBarWidth: percentage, bar, count, elapsed time, and the
// spaces between and after.
func fixedWidth(done, total int, elapsed time.Duration) int {
	count := len(fmt.Sprintf("(%d/%d)", done, total))
	// The bar's clock is its own: leave room for it to grow a unit.
	clock := len((time.Duration(elapsed.Seconds()) * time.Second).String()) + 1
	return len("100% ") + minBarWidth + 2 + 1 + count + len(" []") + clock + 1 + 1
}

// fitDescription is the first of the descriptions, longest first, that
// fits in room columns; the last one when none does.
func fitDescription(room int, candidates ...string) string {
	for _, c := range candidates {
		if utf8.RuneCountInString(c) <= room {
			return c
		}
	}
	return candidates[len(candidates)-1]
}

// etaTau is the time constant the estimate's rate is averaged over: a
// page finished three minutes ago weighs a fifth of one finished now.
const etaTau = 2 * time.Minute

// etaMinSeen is how long this run must have recognised pages, and
// etaMinRows how many rows it must have finished itself, before the bar
// gives an estimate: one quick page after a resume says little.
const (
	etaMinSeen = 30 * time.Second
	etaMinRows = 2
)

// rateEstimate is the rate of pages this run recognises, exponentially
// weighted over etaTau, corrected for the time it has not yet seen (so
// that its first minute averages over that minute, not towards zero).
type rateEstimate struct {
	first  time.Time // the first page this run recognised
	last   time.Time // when the estimate was last brought up to date
	seen   int       // pages counted into the estimate
	rate   float64   // pages per second, weighted, before the correction
	weight float64   // the weight the observed time holds, up to 1
}

// update counts pages (the run's total so far) up to now.
func (e *rateEstimate) update(now time.Time, pages int) {
	if e.first.IsZero() {
		if pages == 0 {
			return
		}
		e.first, e.last, e.seen = now, now, pages
		return
	}
	dt := now.Sub(e.last).Seconds()
	if dt <= 0 {
		return
	}
	inst := float64(pages-e.seen) / dt
	alpha := 1 - math.Exp(-dt/etaTau.Seconds())
	e.rate += alpha * (inst - e.rate)
	e.weight += alpha * (1 - e.weight)
	e.last, e.seen = now, pages
}

// perSecond is the smoothed rate, and whether enough was seen for it.
func (e *rateEstimate) perSecond() (float64, bool) {
	if e.first.IsZero() || e.last.Sub(e.first) < etaMinSeen || e.weight == 0 {
		return 0, false
	}
	return e.rate / e.weight, true
}

// etaText is seconds left as the bar says them: beyond 99 hours, the
// estimate says only that.
func etaText(seconds float64) string {
	if seconds > 99*3600 {
		return ">99h"
	}
	return humanSeconds(seconds)
}
