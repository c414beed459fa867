package batch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"filippo.io/age"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/batch/store"
	"github.com/refbatch/refbatch/manifest"
	"github.com/refbatch/refbatch/ocr"
	"github.com/refbatch/refbatch/report"
)

// Result is what a Run did.
type Result struct {
	// Report is the report Run wrote. It does not hold the rows: its
	// RowSource reads them from the journal in Out.
	Report   *report.Report
	Out      string
	Complete bool
	// Revalidated counts the documents this run validated again from
	// their artifacts, under changed validation settings.
	Revalidated Revalidated
	// Rebound is what binding the manifest's rows to their source_id
	// moved: rows sorted to other lines, withdrawn, or back.
	Rebound journal.Rebinding
}

// Run imports the manifest described by o. It returns ErrIncomplete
// (wrapped, with the cause) when it stopped before every row reached a state;
// running it again with the same options resumes. A *manifest.FileError or
// journal.ErrManifestChanged means the manifest itself is unusable, an
// *ocr.LanguageError that a language of the page policy is not installed;
// both come before anything is written.
func Run(ctx context.Context, o Options) (*Result, error) {
	o = o.withDefaults()
	started := time.Now()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if !o.Encrypted && !o.Plaintext {
		return nil, ErrNoRecipients
	}
	if err := ocr.CheckLanguages(o.Lang, !o.NoOrientation); err != nil {
		return nil, err
	}
	if err := layout.CheckShared(o.Journal); err != nil {
		return nil, err
	}
	paths, err := resolvePaths(o)
	if err != nil {
		return nil, err
	}
	o.Manifest, o.Root, o.Out = paths.manifest, paths.root, paths.out
	// Read the whole manifest before creating anything: a broken line
	// anywhere stops the run before any row is admitted.
	if err := checkManifest(o.Manifest, o.Logger); err != nil {
		return nil, err
	}
	j, err := openForRun(ctx, &o)
	if err != nil {
		return nil, err
	}
	defer j.Close()
	// Before anything else is written to the journal: it must be the
	// folder's own.
	batchID, err := layout.ClaimFolder(j, o.Out)
	if err != nil {
		return nil, err
	}
	o.batchID = batchID
	if o.RootLog != "" {
		if abs, err := filepath.Abs(o.RootLog); err == nil && strings.HasPrefix(abs, o.Out+string(filepath.Separator)) {
			return nil, fmt.Errorf("%w: %s is inside %s", layout.ErrRootLogInOut, o.RootLog, o.Out)
		}
	}
	rebound, err := rebindAndCheck(ctx, j, o)
	if err != nil {
		return nil, err
	}
	if err := recordEncryption(j, o.Encrypted); err != nil {
		return nil, err
	}
	recipients, err := pinRecipients(j, o.Recipients, o.AddRecipients)
	if err != nil {
		return nil, err
	}
	st, err := store.Open(filepath.Join(o.Out, layout.ArtifactsDir), recipients)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	owner := journal.NewOwner()
	if err := sweepAtStart(j, st, o.Out, owner, o.Logger); err != nil {
		return nil, err
	}
	runID, err := j.StartRun(owner, o.Settings.EncodeManifestRun(o.Manifest, o.StdinSHA256, o.StdinRows), "{}")
	if err != nil {
		return nil, err
	}
	o.Logger.Info("run started", "out", o.Out, "workers", o.Workers, "dpi", o.DPI, "encrypted", o.Encrypted)
	// The courier delivers what earlier runs left in the outbox while
	// this one works, and watches for a stall.
	notices := newCourier(j, o.Notify, o.Logger)
	stopNotices := notices.start(batchID, runID)

	// Admission's PDF checks and the OCR run in child processes: the
	// binary re-executed in its hidden modes.
	inspector := o.inspector()
	defer inspector.Close()
	r := &runner{o: o, j: j, st: st, owner: owner, log: o.Logger, engines: newEngineFactory(o), inspector: inspector,
		budget: newByteBudget(o.MaxInflightBytes), pages: newPageQueue(), manifests: []*manifestWork{{o: o}}}
	cpu, runErr := r.session(ctx, runID, sessionEnd{
		events: func(err error) []journal.RunEnd { return []journal.RunEnd{runEnd(ctx, batchID, o.Manifest, err)} },
		before: stopNotices,
		after:  func() { notices.endOfRun(ctx) },
	})
	rep, err := r.writeReport(o.Manifest, started, cpu)
	if err != nil {
		return nil, diskFull(errors.Join(runErr, err))
	}
	if o.RootLog != "" {
		id, err := j.Meta(layout.MetaBatchID)
		if err == nil {
			err = layout.AppendRootLog(o.RootLog, id, rep, time.Now())
		}
		if err != nil {
			return nil, errors.Join(runErr, err)
		}
	}
	rep.ThisRun = &report.RunTime{WallSeconds: time.Since(started).Seconds(), CPUSeconds: cpu}
	o.Logger.Info("run ended", "complete", rep.Complete, "wall", time.Since(started).Round(time.Millisecond), "cpu_s", cpu)
	return &Result{Report: rep, Out: o.Out, Complete: rep.Complete, Revalidated: r.reval.counts(), Rebound: rebound}, diskFull(interruptedLate(ctx, runErr))
}

// interruptedLate is runErr, or ErrIncomplete when ctx ended after the
// work, while the run waited for its receivers: their events wait in the
// outbox, and the command says it was interrupted.
func interruptedLate(ctx context.Context, runErr error) error {
	if runErr == nil && ctx.Err() != nil {
		return fmt.Errorf("%w: interrupted while delivering notifications", layout.ErrIncomplete)
	}
	return runErr
}

// sweepAtStart removes what a crash left in the output folder out before
// a run (or a join) works in it: temp files of the store's and of the
// reports' (written beside the journal, through the same helper), and the
// artifacts of attempts that never committed.
func sweepAtStart(j *journal.Journal, st *store.Store, out string, owner journal.Owner, log *slog.Logger) error {
	swept, err := st.SweepTemp()
	if err != nil {
		return fmt.Errorf("sweeping temp files: %w", err)
	}
	n, err := store.SweepTemp(out)
	if err != nil {
		return fmt.Errorf("sweeping temp files: %w", err)
	}
	if swept += n; swept > 0 {
		log.Warn("removed temp files left by an earlier crash", "count", swept)
	}
	if n, err := sweepOrphans(j, st, owner); err != nil {
		return err
	} else if n > 0 {
		log.Warn("removed artifacts of attempts that never committed", "count", n)
	}
	return nil
}

// makeOut creates the output folder with mode 0700. A folder that exists
// keeps its mode: it may be the user's (--out .), and refbatch changes the
// mode only of what it creates.
func makeOut(out string) error {
	err := os.Mkdir(out, 0o700)
	switch {
	case errors.Is(err, fs.ErrExist):
		fi, err := os.Stat(out)
		if err != nil {
			return err
		}
		if !fi.IsDir() {
			return fmt.Errorf("%s: %w", out, ErrOutNotFolder)
		}
		return nil
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(filepath.Dir(out), 0o700); err != nil {
			return fmt.Errorf("creating %s: %w", out, err)
		}
		return makeOut(out)
	case err != nil:
		return fmt.Errorf("creating %s: %w", out, err)
	}
	// Mkdir applies the umask; the mode must be 0700 whatever it is.
	return os.Chmod(out, 0o700)
}

type runPaths struct{ manifest, root, out string }

func resolvePaths(o Options) (runPaths, error) {
	var p runPaths
	m, err := filepath.Abs(o.Manifest)
	if err != nil {
		return p, err
	}
	p.manifest, p.root = m, filepath.Dir(m)
	if o.Manifest == manifest.Stdin { // its relative paths are the current folder's
		p.manifest = manifest.Stdin
		if p.root, err = os.Getwd(); err != nil {
			return p, err
		}
	}
	if o.Root != "" {
		if p.root, err = filepath.Abs(o.Root); err != nil {
			return p, err
		}
	}
	out := o.Out
	if out == "" && o.Journal != "" {
		return p, nil // the one the journal recorded (openForRun)
	}
	if out == "" {
		out = layout.DefaultOut
	}
	if p.out, err = filepath.Abs(out); err != nil {
		return p, err
	}
	return p, nil
}

// openForRun opens the journal of a run and makes its output folder: the
// folder first, for journal.db in it; a PostgreSQL journal first, for the
// folder it recorded, which it records at the batch's first run (pinOut).
// o.Out is set to the folder, absolute. The journal's waits for its lock
// end with ctx (journal.WithInterrupt).
func openForRun(ctx context.Context, o *Options) (*journal.Journal, error) {
	if o.Journal == "" {
		if err := makeOut(o.Out); err != nil {
			return nil, err
		}
		if err := layout.CheckJournalFile(o.Out); err != nil {
			return nil, err
		}
		return journal.Open(filepath.Join(o.Out, layout.JournalFile), journal.WithInterrupt(ctx))
	}
	j, err := journal.Open(o.Journal, journal.WithInterrupt(ctx))
	if err != nil {
		return nil, err
	}
	if o.Out, err = layout.PinOut(j, o.Out); err == nil {
		err = makeOut(o.Out)
	}
	if err != nil {
		j.Close()
		return nil, err
	}
	return j, nil
}

// checkManifest reads the whole manifest for file-level errors, and says
// once when its columns are not separated by commas.
func checkManifest(path string, log *slog.Logger) error {
	st, err := manifest.ScanFile(path)
	if err != nil {
		return err
	}
	if err := st.NoRows(); err != nil {
		return err
	}
	if st.Comma != ',' {
		sep := fmt.Sprintf("'%c'", st.Comma)
		if st.Comma == '\t' {
			sep = "tab"
		}
		// A warning, so that it shows beside the progress bar and with
		// --quiet: a separator guessed wrong would misread every row.
		log.Warn(fmt.Sprintf("manifest: reading %s-separated columns", sep))
	}
	return nil
}

// recordEncryption pins the batch's artifact encryption choice, or returns
// an *EncryptionChoiceError when the folder's differs. A journal from
// before recipients were recorded has only this choice, so it is checked
// before pinRecipients records a set.
func recordEncryption(j *journal.Journal, encrypted bool) error {
	want := layout.EncryptionPlaintext
	if encrypted {
		want = layout.EncryptionAge
	}
	got, err := j.Meta(layout.MetaEncryption)
	switch {
	case err != nil:
		return err
	case got == want:
		return nil
	case got != "":
		keys, _, err := j.Recipients()
		if err != nil {
			return err
		}
		return &EncryptionChoiceError{Have: got, Want: want, Recipients: keys}
	}
	return j.SetMeta(layout.MetaEncryption, want)
}

// pinRecipients checks the run's recipients, given and added, against the
// batch's (journal.PinRecipients), recording them at the first run, and
// returns those the run encrypts to: the recorded ones and the added ones.
func pinRecipients(j *journal.Journal, given, added []age.Recipient) ([]age.Recipient, error) {
	keys := func(rs []age.Recipient) ([]string, error) {
		var out []string
		for _, r := range rs {
			s, ok := r.(fmt.Stringer)
			if !ok {
				return nil, fmt.Errorf("a recipient of type %T has no public key to record", r)
			}
			out = append(out, s.String())
		}
		return out, nil
	}
	g, err := keys(given)
	if err != nil {
		return nil, err
	}
	a, err := keys(added)
	if err != nil {
		return nil, err
	}
	set, err := j.PinRecipients(g, a)
	if err != nil || len(set) == 0 {
		return nil, err
	}
	rs, err := age.ParseRecipients(strings.NewReader(strings.Join(set, "\n")))
	if err != nil {
		return nil, fmt.Errorf("the journal's recipients: %w", err)
	}
	return rs, nil
}

// backoff returns the delay before attempt n+1: exponential with full
// jitter, so retries of many documents do not fall in step.
func backoff(attempt int) time.Duration {
	base := time.Second << min(attempt-1, 5)
	return base/2 + time.Duration(rand.Int64N(int64(base/2)+1))
}

// parentMaxRSS is this process's peak resident set size in bytes.
func parentMaxRSS() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Maxrss * 1024 // kilobytes on Linux
}

func cpuSeconds() float64 {
	var self, children syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(self.Utime) + tv(self.Stime) + tv(children.Utime) + tv(children.Stime)
}
