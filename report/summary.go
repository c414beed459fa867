package report

import (
	"math"
	"slices"

	"github.com/refbatch/refbatch/report/outcome"
)

// This file computes the Summary's numbers: counts per state and reason,
// latency quantiles and histograms.

// Quantiles summarises a set of latency samples in seconds.
type Quantiles struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50"`
	P95 float64 `json:"p95"`
	Max float64 `json:"max"`
}

// NewQuantiles returns the nearest-rank p50, p95 and maximum of samples:
// the p-th percentile is the smallest sample with at least p% of the samples
// at or below it, so every value reported is one that was measured. NaN and
// infinite samples are dropped (JSON cannot carry them). No samples give the
// zero Quantiles. samples is not modified.
func NewQuantiles(samples []float64) Quantiles {
	s := make([]float64, 0, len(samples))
	for _, v := range samples {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			s = append(s, v)
		}
	}
	if len(s) == 0 {
		return Quantiles{}
	}
	slices.Sort(s)
	return Quantiles{
		N:   len(s),
		P50: s[nearestRank(50, len(s))-1],
		P95: s[nearestRank(95, len(s))-1],
		Max: s[len(s)-1],
	}
}

// nearestRank is ceil(p/100 * n), in integers so that p95 of 20 samples is
// exactly rank 19.
func nearestRank(p, n int) int {
	return max(1, (p*n+99)/100)
}

// Summarize counts rows per state and per reason and adds up the pages of
// the done and review rows. It fills Rows, States, Reasons, Pages and
// StatePages; the caller fills the rest. Duplicate rows share the first
// row's document, so their pages are not counted again; rejected rows took
// no OCR.
func Summarize(rows []Row) Summary {
	var z Summarizer
	for _, r := range rows {
		z.Add(r)
	}
	return z.Summary()
}

// Summarizer counts rows one at a time as Summarize does, for a report
// whose rows are streamed (RowSource) rather than held: its memory does
// not grow with the rows. The zero Summarizer is ready to use.
type Summarizer struct {
	rows, pages int
	withdrawn   int
	states      map[outcome.State]int
	reasons     map[outcome.Reason]int
	statePages  map[outcome.State]int
	open        map[outcome.Reason]int
}

// Add counts one row.
func (z *Summarizer) Add(r Row) {
	if z.states == nil {
		z.states, z.reasons, z.statePages = map[outcome.State]int{}, map[outcome.Reason]int{}, map[outcome.State]int{}
		z.open = map[outcome.Reason]int{}
	}
	if r.Withdrawn {
		z.withdrawn++
		return
	}
	if r.Open() {
		z.open[r.Reason]++
	}
	z.rows++
	z.states[r.State]++
	if r.Reason != "" {
		z.reasons[r.Reason]++
	}
	if r.State == outcome.Done || r.State == outcome.Review {
		z.pages += r.Pages
		z.statePages[r.State] += r.Pages
	}
}

// Summary returns the counts of the rows added so far, every final state
// and the pages of done and review present even when zero.
func (z *Summarizer) Summary() Summary {
	s := Summary{
		Rows:              z.rows,
		Withdrawn:         z.withdrawn,
		States:            make(map[outcome.State]int, len(outcome.States())+len(z.states)),
		Reasons:           make(map[outcome.Reason]int, len(z.reasons)),
		Pages:             z.pages,
		StatePages:        map[outcome.State]int{outcome.Done: 0, outcome.Review: 0},
		NeedPersonReasons: map[outcome.Reason]int{},
	}
	for reason, n := range z.open {
		s.NeedPersonReasons[reason] = n
		s.NeedPerson += n
	}
	for _, st := range finalStates() {
		s.States[st] = 0
	}
	for st, n := range z.states {
		s.States[st] += n
	}
	for reason, n := range z.reasons {
		s.Reasons[reason] = n
	}
	for st, n := range z.statePages {
		s.StatePages[st] += n
	}
	return s
}

// NewLogHistogram sorts latency samples (seconds) into buckets of equal
// width on a log scale, ten to a decade (each bound about 1.26 times the
// last), from the bucket of the smallest sample to that of the largest, so
// that one page that took minutes does not squash the seconds the others
// took. Bounds are fixed (10^(k/10)), so histograms of two batches line up.
// Non-finite samples are dropped; samples below a millisecond count as a
// millisecond.
func NewLogHistogram(samples []float64) []Bucket {
	const perDecade = 10
	index := func(v float64) int {
		v = max(v, 0.001)
		// The epsilon keeps an exact bound (1.0, 10.0) in the bucket it
		// starts, despite log10's rounding.
		return int(math.Floor(math.Log10(v)*perDecade + 1e-9))
	}
	bound := func(k int) float64 {
		return roundSig(math.Pow(10, float64(k)/perDecade), 4)
	}
	counts := map[int]int{}
	lo, hi := 0, 0
	first := true
	for _, v := range samples {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		k := index(v)
		counts[k]++
		if first || k < lo {
			lo = k
		}
		if first || k > hi {
			hi = k
		}
		first = false
	}
	if first {
		return []Bucket{}
	}
	out := make([]Bucket, 0, hi-lo+1)
	for k := lo; k <= hi; k++ {
		out = append(out, Bucket{Lo: bound(k), Hi: bound(k + 1), N: counts[k]})
	}
	return out
}

// roundSig rounds v to n significant digits, so that bounds print as 1.259,
// not 1.2589254117941673.
func roundSig(v float64, n int) float64 {
	if v == 0 {
		return 0
	}
	p := math.Pow(10, float64(n)-math.Ceil(math.Log10(math.Abs(v))))
	return math.Round(v*p) / p
}

// confidenceBins counts the documents that were read (done and review rows
// with a band) by confidence, in bins of five points from 0 to
// 100, one row at a time.
type confidenceBins [20]int

func (c *confidenceBins) add(r Row) {
	if r.Band == "" || (r.State != outcome.Done && r.State != outcome.Review) {
		return
	}
	c[min(max(int(r.MeanConfidence/5), 0), len(c)-1)]++
}

// buckets returns the bins as a histogram.
func (c *confidenceBins) buckets() []Bucket {
	out := make([]Bucket, len(c))
	for i, n := range c {
		out[i] = Bucket{Lo: float64(5 * i), Hi: float64(5 * (i + 1)), N: n}
	}
	return out
}
