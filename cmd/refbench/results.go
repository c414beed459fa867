package main

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"
)

// results is bench.json.
type results struct {
	SchemaVersion int          `json:"schema_version"`
	Date          time.Time    `json:"date"`
	Machine       machine      `json:"machine"`
	Corpus        corpusInfo   `json:"corpus"`
	Settings      benchSetting `json:"settings"`

	Default       *runResult `json:"refbatch_default,omitempty"`
	DefaultResume *runResult `json:"refbatch_default_resume,omitempty"`
	Fast          *runResult `json:"refbatch_fast,omitempty"`
	NoCoverage    *runResult `json:"refbatch_no_coverage,omitempty"`
	CascadeRun    *runResult `json:"refbatch_cascade,omitempty"`
	// Cascade is what the --cascade run's artifacts say of the cascade.
	Cascade *cascadeStats `json:"cascade,omitempty"`
	// CoverageShare is the share of the default run's engine time the
	// coverage step took, from its artifacts.
	CoverageShare float64          `json:"coverage_share_of_engine_time,omitempty"`
	Limit         *limitResult     `json:"limit,omitempty"`
	OCRmyPDF      *ocrmypdfResult  `json:"ocrmypdf,omitempty"`
	Subsets       []*runResult     `json:"refbatch_subsets,omitempty"`
	Long          *longResult      `json:"long_document,omitempty"`
	Rows          *rowsResult      `json:"tiny_rows,omitempty"`
	Hostile       []*hostileResult `json:"hostile,omitempty"`
	Export        *exportResult    `json:"export,omitempty"`
	TinyExport    *exportResult    `json:"export_tiny,omitempty"`

	Ratios     ratios   `json:"ratios"`
	Acceptance []check  `json:"acceptance"`
	Notes      []string `json:"notes,omitempty"`
}

type machine struct {
	Hostname     string    `json:"hostname"`
	CPU          string    `json:"cpu"`
	Cores        int       `json:"cores"`
	MemTotal     int64     `json:"mem_total_bytes"`
	Kernel       string    `json:"kernel"`
	GoVersion    string    `json:"go_version"`
	LoadAvgStart []float64 `json:"loadavg_start"`
	LoadAvgEnd   []float64 `json:"loadavg_end"`
	Versions     struct {
		Refbatch  string `json:"refbatch"`
		Tesseract string `json:"tesseract"`
		Pdftoppm  string `json:"pdftoppm"`
		OCRmyPDF  string `json:"ocrmypdf,omitempty"`
	} `json:"versions"`
}

type corpusInfo struct {
	Dir       string `json:"dir"`
	Documents int    `json:"documents"`
	Pages     int    `json:"pages"`
	Bytes     int64  `json:"bytes"`
}

type benchSetting struct {
	Cores     int    `json:"cores"`
	DPI       int    `json:"dpi"`
	LongDPI   int    `json:"long_dpi"`
	TinyDPI   int    `json:"tiny_dpi"`
	Refbatch  string `json:"refbatch"`
	FastFlags string `json:"fast_flags,omitempty"`
}

// runResult is one `refbatch run`.
type runResult struct {
	Name string   `json:"name"`
	Args []string `json:"args"`
	// Resume marks a rerun over a finished batch: it OCRs nothing, so it
	// has no pages of its own.
	Resume   bool `json:"resume,omitempty"`
	Rows     int  `json:"rows,omitempty"`
	ExitCode int  `json:"exit_code"`
	// Pages are the pages OCR'd, from report.json.
	Pages int     `json:"pages"`
	WallS float64 `json:"wall_seconds"`
	// CPUS is user+sys of refbatch and its workers (wait4), ParentCPUS the
	// parent's own share (its last /proc sample before it exited).
	CPUS       float64 `json:"cpu_seconds"`
	UserS      float64 `json:"user_seconds"`
	SysS       float64 `json:"sys_seconds"`
	ParentCPUS float64 `json:"parent_cpu_seconds"`
	// PagesPerMinute is Pages over WallS. CPUPagesPerMinute is Pages over
	// CPUS spread over the cores: what the run would reach if its CPU
	// work kept every core busy, a figure other load on the machine does
	// not change (compare it with the limit's, which is made the same way).
	PagesPerMinute    float64 `json:"pages_per_minute"`
	CPUPagesPerMinute float64 `json:"cpu_pages_per_minute"`
	WallPerPage       float64 `json:"wall_seconds_per_page"`
	CPUPerPage        float64 `json:"cpu_seconds_per_page"`
	ParentCPUPerPage  float64 `json:"parent_cpu_seconds_per_page"`
	// PeakParentRSS and PeakWorkerRSS are the larger of what report.json
	// says (ReportParentRSS, ReportWorkerRSS: measured by refbatch itself,
	// before it builds the report) and what polling saw: each can only
	// miss a peak, never invent one. RSSSource says which were available.
	PeakParentRSS   int64  `json:"peak_parent_rss_bytes"`
	PeakWorkerRSS   int64  `json:"peak_worker_rss_bytes"`
	RSSSource       string `json:"rss_source"`
	ReportParentRSS int64  `json:"report_parent_rss_bytes"`
	ReportWorkerRSS int64  `json:"report_worker_rss_bytes"`
	PolledParentRSS int64  `json:"polled_parent_rss_bytes"`
	PolledWorkerRSS int64  `json:"polled_worker_rss_bytes"`
	// RusageMaxRSS is wait4's ru_maxrss: the largest of the tree.
	RusageMaxRSS int64 `json:"rusage_max_rss_bytes"`
	// OtherCPUShare is the share of the machine's CPU (wall x cores) that
	// other processes used during the run: above a few percent, the wall
	// figures are not the machine's.
	OtherCPUShare float64 `json:"other_cpu_share"`
	cores         int

	States               map[string]int  `json:"states,omitempty"`
	Reasons              map[string]int  `json:"reasons,omitempty"`
	ReportPagesPerMinute float64         `json:"report_pages_per_minute"`
	ReportWallS          float64         `json:"report_wall_seconds"`
	TimeBreakdown        json.RawMessage `json:"time_breakdown,omitempty"`
	OCRPageSeconds       json.RawMessage `json:"ocr_page_seconds,omitempty"`
	Note                 string          `json:"note,omitempty"`
	Stderr               string          `json:"stderr,omitempty"`
}

func newRunResult(name string, args []string, u usage, cores int) *runResult {
	parent := u.PeakParentRSS
	if u.PeakChildRSS == 0 {
		// No worker was seen, so ru_maxrss is the parent's own peak, and
		// unlike polling it cannot miss a run shorter than pollEvery.
		parent = max(parent, u.MaxRSS)
	}
	return &runResult{
		Name: name, Args: args, ExitCode: u.ExitCode,
		WallS: u.Wall.Seconds(), CPUS: u.CPU().Seconds(), UserS: u.User.Seconds(), SysS: u.Sys.Seconds(),
		ParentCPUS:      u.ParentCPU.Seconds(),
		PeakParentRSS:   parent,
		PeakWorkerRSS:   u.PeakChildRSS,
		RSSSource:       "polled",
		PolledParentRSS: u.PeakParentRSS,
		PolledWorkerRSS: u.PeakChildRSS,
		RusageMaxRSS:    u.MaxRSS,
		OtherCPUShare:   otherShare(u.Wall, u.BusyCPU, u.CPU()),
		cores:           cores,
	}
}

// otherShare is the share of the machine's CPU capacity over wall that
// went to processes other than the measured ones (which used own of the
// busy time).
func otherShare(wall, busy, own time.Duration) float64 {
	capacity := wall.Seconds() * float64(runtime.NumCPU())
	if capacity <= 0 || busy <= 0 {
		return 0
	}
	return max(0, (busy-own).Seconds()/capacity)
}

// reportFile is the part of report.json the bench reads.
type reportFile struct {
	Batch struct {
		WallSeconds float64 `json:"wall_seconds"`
	} `json:"batch"`
	Summary struct {
		Pages              int             `json:"pages"`
		States             map[string]int  `json:"states"`
		Reasons            map[string]int  `json:"reasons"`
		PagesPerMinute     float64         `json:"pages_per_minute"`
		TimeBreakdown      json.RawMessage `json:"time_breakdown"`
		OCRPageSeconds     json.RawMessage `json:"ocr_page_seconds"`
		PeakParentRSSBytes *int64          `json:"peak_parent_rss_bytes"`
		PeakWorkerRSSBytes *int64          `json:"peak_worker_rss_bytes"`
	} `json:"summary"`
}

// readReport completes r from the report.json the run wrote.
func (r *runResult) readReport(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("no report: %w", err)
	}
	var rep reportFile
	if err := json.Unmarshal(data, &rep); err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	s := rep.Summary
	r.States, r.Reasons = s.States, s.Reasons
	if !r.Resume {
		r.Pages = s.Pages
	}
	r.ReportPagesPerMinute, r.ReportWallS = s.PagesPerMinute, rep.Batch.WallSeconds
	r.TimeBreakdown, r.OCRPageSeconds = s.TimeBreakdown, s.OCRPageSeconds
	// A resumed run's report may carry the earlier runs' peaks.
	if !r.Resume && s.PeakParentRSSBytes != nil && s.PeakWorkerRSSBytes != nil && *s.PeakParentRSSBytes > 0 {
		r.ReportParentRSS, r.ReportWorkerRSS = *s.PeakParentRSSBytes, *s.PeakWorkerRSSBytes
		r.PeakParentRSS = max(r.PeakParentRSS, r.ReportParentRSS)
		r.PeakWorkerRSS = max(r.PeakWorkerRSS, r.ReportWorkerRSS)
		r.RSSSource = "report.json+polled"
	}
	if r.Pages > 0 {
		p := float64(r.Pages)
		r.WallPerPage, r.CPUPerPage, r.ParentCPUPerPage = r.WallS/p, r.CPUS/p, r.ParentCPUS/p
		r.PagesPerMinute = p / r.WallS * 60
		if r.CPUS > 0 {
			r.CPUPagesPerMinute = p / (r.CPUS / float64(r.cores)) * 60
		}
	}
	return nil
}

// longResult is one long document run with every worker and with one.
type longResult struct {
	Pages   int        `json:"pages"`
	DPI     int        `json:"dpi"`
	Workers int        `json:"workers"`
	All     *runResult `json:"all_workers,omitempty"`
	One     *runResult `json:"one_worker,omitempty"`
	// Ratio is the wall with every worker over the wall with one.
	Ratio float64 `json:"wall_ratio"`
}

// rowsResult is the tiny-document batches: resume, and memory against rows.
type rowsResult struct {
	DPI         int        `json:"dpi"`
	Files       int        `json:"files"`
	Small       *runResult `json:"small,omitempty"`
	SmallResume *runResult `json:"small_resume,omitempty"`
	Big         *runResult `json:"big,omitempty"`
	BigResume   *runResult `json:"big_resume,omitempty"`
	// ParentRSSRatio is the big batch's parent peak RSS over the small
	// one's; ResumeParentRSSRatio the same for their resumes, which do
	// nothing but stream the manifest and write the reports.
	ParentRSSRatio       float64 `json:"parent_rss_ratio"`
	ResumeParentRSSRatio float64 `json:"resume_parent_rss_ratio"`
}

type ratios struct {
	// DefaultVsLimit and FastVsLimit are refbatch's pages per minute by
	// CPU (CPUPagesPerMinute) against the limit's, which is computed from
	// CPU the same way: like with like, whatever else loads the machine.
	DefaultVsLimit    float64 `json:"refbatch_default_vs_limit,omitempty"`
	FastVsLimit       float64 `json:"refbatch_fast_vs_limit,omitempty"`
	DefaultVsOCRmyPDF float64 `json:"refbatch_default_vs_ocrmypdf,omitempty"`
	FastVsOCRmyPDF    float64 `json:"refbatch_fast_vs_ocrmypdf,omitempty"`
	// DefaultVsNetLimit compares with the limit less the CLIs' process
	// start, which refbatch's long-lived engines do not pay per page (by
	// CPU too).
	DefaultVsNetLimit float64 `json:"refbatch_default_vs_net_limit,omitempty"`
	FastVsNetLimit    float64 `json:"refbatch_fast_vs_net_limit,omitempty"`
	// DefaultVsNoCoverage is the default run's throughput by CPU against
	// the same run with --no-coverage: what the coverage step costs,
	// unmoved by other load on the machine.
	DefaultVsNoCoverage float64 `json:"refbatch_default_vs_no_coverage,omitempty"`
	// CascadeVsDefault is the --cascade run's pages per minute against
	// the default's (the cascade off), in the same bench; ...CPU by CPU.
	CascadeVsDefault    float64 `json:"refbatch_cascade_vs_default,omitempty"`
	CascadeVsDefaultCPU float64 `json:"refbatch_cascade_vs_default_cpu,omitempty"`
}

// check is one of the issues' acceptance criteria, as measured.
type check struct {
	Criterion string  `json:"criterion"`
	Value     float64 `json:"value"`
	Target    string  `json:"target"`
	Pass      bool    `json:"pass"`
}

func newResults(o options, c *corpus, exe string) *results {
	r := &results{SchemaVersion: 1, Date: time.Now().UTC().Truncate(time.Second)}
	r.Machine = machineInfo()
	r.Machine.Cores = runtime.NumCPU()
	r.Machine.Versions.Refbatch = strings.TrimPrefix(commandVersion(exe, "--version"), "refbatch version ")
	r.Machine.Versions.Tesseract = commandVersion("tesseract", "--version")
	r.Machine.Versions.Pdftoppm = commandVersion("pdftoppm", "-v")
	r.Machine.Versions.OCRmyPDF = commandVersion("ocrmypdf", "--version")
	r.Corpus = corpusInfo{Dir: c.dir, Documents: len(c.rows), Pages: c.pages, Bytes: c.bytes}
	r.Settings = benchSetting{Cores: o.Cores, DPI: o.DPI, LongDPI: o.LongDPI, TinyDPI: o.TinyDPI, Refbatch: exe, FastFlags: o.FastFlags}
	return r
}

func machineInfo() machine {
	var m machine
	m.Hostname, _ = os.Hostname()
	m.GoVersion = runtime.Version()
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.Lines(string(b)) {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int64
		if _, err := fmt.Sscanf(string(b), "MemTotal: %d kB", &kb); err == nil {
			m.MemTotal = kb << 10
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	m.LoadAvgStart = loadAvg()
	return m
}

func loadAvg() []float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return nil
	}
	var a, c, d float64
	if _, err := fmt.Sscanf(string(b), "%g %g %g", &a, &c, &d); err != nil {
		return nil
	}
	return []float64{a, c, d}
}

const mib = 1 << 20

// computeRatios fills the ratios and the acceptance checks from what was
// measured; a check whose figures are missing is left out.
func (r *results) computeRatios() {
	ok := func(x *runResult) bool { return x != nil && finished(x.ExitCode) && x.PagesPerMinute > 0 }
	r.Ratios = ratios{}
	r.Acceptance = nil
	add := func(name string, v float64, target string, pass bool) {
		r.Acceptance = append(r.Acceptance, check{Criterion: name, Value: v, Target: target, Pass: pass})
	}
	byCPU := func(x *runResult) bool { return ok(x) && x.CPUPagesPerMinute > 0 }
	if r.Limit != nil && r.Limit.PagesPerMinute > 0 {
		if byCPU(r.Fast) {
			r.Ratios.FastVsLimit = r.Fast.CPUPagesPerMinute / r.Limit.PagesPerMinute
			add("refbatch, page steps off / limit (pages per minute by CPU)", r.Ratios.FastVsLimit, ">= 0.90", r.Ratios.FastVsLimit >= 0.90)
		}
		if byCPU(r.Default) {
			r.Ratios.DefaultVsLimit = r.Default.CPUPagesPerMinute / r.Limit.PagesPerMinute
			add("refbatch default / limit (pages per minute by CPU, issue 29)", r.Ratios.DefaultVsLimit, ">= 0.90", r.Ratios.DefaultVsLimit >= 0.90)
		}
	}
	if r.Limit != nil && r.Limit.NetPagesPerMinute > 0 {
		if byCPU(r.Default) {
			r.Ratios.DefaultVsNetLimit = r.Default.CPUPagesPerMinute / r.Limit.NetPagesPerMinute
		}
		if byCPU(r.Fast) {
			r.Ratios.FastVsNetLimit = r.Fast.CPUPagesPerMinute / r.Limit.NetPagesPerMinute
		}
	}
	if r.CoverageShare > 0 {
		add("coverage step's share of the engines' time (issue 13)", r.CoverageShare, "<= 0.05", r.CoverageShare <= 0.05)
	}
	if ok(r.Default) && ok(r.NoCoverage) {
		// Two runs a few minutes apart on a shared machine differ by a
		// few percent either way: the share above is the measure; this
		// ratio shows the runs agree with it.
		r.Ratios.DefaultVsNoCoverage = r.Default.CPUPagesPerMinute / r.NoCoverage.CPUPagesPerMinute
	}
	if r.OCRmyPDF != nil && r.OCRmyPDF.PagesPerMinute > 0 {
		if ok(r.Default) {
			r.Ratios.DefaultVsOCRmyPDF = r.Default.PagesPerMinute / r.OCRmyPDF.PagesPerMinute
			add("refbatch default / OCRmyPDF (pages per minute)", r.Ratios.DefaultVsOCRmyPDF, ">= 1.5", r.Ratios.DefaultVsOCRmyPDF >= 1.5)
		}
		if ok(r.Fast) {
			r.Ratios.FastVsOCRmyPDF = r.Fast.PagesPerMinute / r.OCRmyPDF.PagesPerMinute
		}
	}
	if ok(r.Default) && r.Default.PeakParentRSS > 0 {
		v := float64(r.Default.PeakParentRSS) / mib
		add(fmt.Sprintf("parent peak RSS at %d DPI (MiB, %s)", r.Settings.DPI, r.Default.RSSSource), v, "< 100", v < 100)
		w := float64(r.Default.PeakWorkerRSS) / mib
		add(fmt.Sprintf("largest worker peak RSS at %d DPI (MiB, %s)", r.Settings.DPI, r.Default.RSSSource), w, "< 300", w < 300)
	}
	if r.Rows != nil && r.Rows.ParentRSSRatio > 0 {
		add(fmt.Sprintf("parent peak RSS, %d rows / %d rows", r.Rows.Big.Rows, r.Rows.Small.Rows), r.Rows.ParentRSSRatio, "<= 1.20", r.Rows.ParentRSSRatio <= 1.20)
	}
	if r.Long != nil && r.Long.Ratio > 0 {
		add(fmt.Sprintf("%d-page document, %d workers / 1 worker (wall)", r.Long.Pages, r.Long.Workers), r.Long.Ratio, "< 0.6", r.Long.Ratio < 0.6)
	}
	if r.Rows != nil && r.Rows.SmallResume != nil && finished(r.Rows.SmallResume.ExitCode) {
		v := r.Rows.SmallResume.WallS
		add(fmt.Sprintf("resuming a finished %d-row batch (wall s)", r.Rows.SmallResume.Rows), v, "< 3", v < 3)
	}
	r.cascadeRatios()
	r.exportChecks(add)
}
