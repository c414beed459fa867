// Command refbatch turns an archive of scanned referral PDFs into
// searchable, auditable text. Each command's help and the manual's topics
// (topics/*.md, `refbatch help TOPIC`) give the contracts it keeps.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/refbatch/refbatch/batch"
	"github.com/refbatch/refbatch/batch/handover"
	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/batch/store"
	"github.com/refbatch/refbatch/manifest"
	"github.com/refbatch/refbatch/ocr"
)

// Exit codes. A crash of refbatch itself (a bug: a panic, a Go runtime
// fatal error) is none of them: it ends the process with SIGABRT (the
// shell shows 134), never with 2, which the Go runtime would otherwise use
// and which means a usage error here.
const (
	exitOK         = 0
	exitFailure    = 1 // unexpected failure; for verify: a finding
	exitUsage      = 2 // usage or manifest error
	exitIncomplete = 3 // interrupted or incomplete: run again to resume
	// exitNeedsPerson: run finished, but rows are in review or rejected.
	exitNeedsPerson = 4
	// exitStalled: status --check found the batch stalled: rows not
	// final, no live process, no progress for --stall-after.
	exitStalled = 5
)

// exitError carries an exit code with a message meant for the user, and
// the error that caused it, if any, for errors.Is and errors.As.
type exitError struct {
	code int
	msg  string
	hint string
	err  error
}

func (e *exitError) Error() string {
	if e.err != nil {
		return e.err.Error()
	}
	return e.msg
}

func (e *exitError) Unwrap() error { return e.err }

func usageErr(msg, hint string) error { return &exitError{code: exitUsage, msg: msg, hint: hint} }

// usageErrf is usageErr with a message formatted as by fmt.Errorf, so that
// a cause wrapped with %w stays in the chain.
func usageErrf(hint, format string, args ...any) error {
	return &exitError{code: exitUsage, hint: hint, err: fmt.Errorf(format, args...)}
}

func main() {
	os.Exit(run(os.Args, os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	// The hidden child modes must not touch the CLI's flags, signals or
	// output. Their parents start them with the mode alone: anything more
	// (a shell's completion request) goes to the CLI, which runs nothing.
	if len(args) == 2 {
		switch args[1] {
		case workerCommand:
			return workerMain()
		case admitCommand:
			return admitMain()
		case exportChildCommand:
			return exportChildMain()
		case viewChildCommand:
			return viewChildMain()
		}
	}
	// A crash must not read as a usage error (exit 2): the runtime aborts
	// instead, and without a core file, which would hold document text.
	debug.SetTraceback("crash")
	_ = syscall.Setrlimit(syscall.RLIMIT_CORE, &syscall.Rlimit{})

	// The first SIGINT or SIGTERM cancels the run, which stops cleanly;
	// a second one gets the default treatment and ends the process at once
	// (the journal is safe either way).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop()
	}()

	app := newApp(stdout, stderr)
	err := app.RunContext(ctx, args)
	if err != nil && ctx.Err() != nil {
		err = afterSignal(err)
	}
	return exitCode(err, stderr)
}

// afterSignal is the error of a command that SIGINT or SIGTERM reached:
// what failed was cut short by the signal (a verify's findings so far are
// not its findings), so it exits 3, interrupted. A usage error stays one,
// and an error that exits 3 already keeps its words.
func afterSignal(err error) error {
	switch exitCode(err, io.Discard) {
	case exitUsage, exitIncomplete:
		return err
	}
	return interrupted(err)
}

// interrupted is the exit 3 of a command cut short by a signal; err says
// where, unless it is context.Canceled alone.
func interrupted(err error) error {
	msg := strings.TrimSuffix(strings.TrimSuffix(err.Error(), context.Canceled.Error()), ": ")
	switch i := strings.Index(msg, "interrupted"); {
	case msg == "":
		msg = "interrupted"
	case i >= 0:
		msg = msg[i:] // "interrupted while ...", without the layers above
	default:
		msg = "interrupted: " + msg
	}
	return &exitError{code: exitIncomplete, msg: msg, hint: "run the same command again; what it finished is kept"}
}

// diskFull reports whether err comes of a full disk or quota.
func diskFull(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) || errors.Is(err, journal.ErrDiskFull)
}

func newApp(stdout, stderr io.Writer) *cli.App {
	app := &cli.App{
		Name:                 "refbatch",
		Usage:                "OCR an archive of scanned referral PDFs into searchable, auditable text",
		Version:              layout.Version(),
		Writer:               stdout,
		ErrWriter:            stderr,
		EnableBashCompletion: true,                         // refbatch completion's scripts ask through it
		ExitErrHandler:       func(*cli.Context, error) {}, // exitCode decides
		OnUsageError:         onUsageError,
		Action:               rootAction,
		Commands: []*cli.Command{
			runCommand(),
			joinCommand(),
			verifyCommand(),
			showCommand(),
			exportCommand(),
			reportCommand(),
			statusCommand(),
			notifyCommand(),
			reviewCommand(),
			deskCommand(),
			manifestCommand(),
			keygenCommand(),
			evalCommand(),
			versionCommand(),
			completionCommand(),
			helpCommand(),
		},
	}
	// urfave/cli adds --help to the app only when it adds its own help
	// command; refbatch brings its own (with topics), so it adds the flag.
	app.Flags = append(app.Flags, cli.HelpFlag)
	app.Description = topicList()
	withReferences(app.Commands)
	app.Commands = append(app.Commands, manCommand())
	app.Commands = append(app.Commands, workerCmds()...)
	// A bad flag is a usage error (exit 2) whichever command it reached.
	// `help` is a command of the app and of commands with subcommands
	// only: elsewhere it would shadow an argument (`run help` is a
	// manifest named help) and hide file names from completion.
	for _, c := range app.Commands {
		c.OnUsageError = app.OnUsageError
		c.HideHelpCommand = len(c.Subcommands) == 0
	}
	return app
}

// exitCode turns an error into the process's exit status, printing it once,
// in one place. Errors meant for the user print as "refbatch: error:" with a
// hint; anything else is a bug and prints with its detail.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	stderr = escWriter{stderr} // messages may quote a source_id or a path
	if errors.Is(err, context.Canceled) {
		err = interrupted(err)
	}
	var ee *exitError
	var fe *manifest.FileError
	var ece *batch.EncryptionChoiceError
	var se *layout.SettingError
	var rce *batch.RowChangedError
	var le *ocr.LanguageError
	var re *journal.RecipientsError
	var ome *layout.OutMismatchError
	switch {
	case errors.As(err, &ee):
		if msg := ee.Error(); msg != "" {
			fmt.Fprintf(stderr, "refbatch: error: %s\n", msg)
		}
		if ee.hint != "" {
			fmt.Fprintf(stderr, "refbatch: hint: %s\n", ee.hint)
		}
		return ee.code
	case diskFull(err) && !errors.Is(err, layout.ErrIncomplete):
		// A run says so itself (ErrIncomplete, below).
		fmt.Fprintf(stderr, "refbatch: error: the disk is full: %v\n", err)
		fmt.Fprintln(stderr, "refbatch: hint: free some space (or raise the quota) and run the same command again; what it finished is kept")
		return exitIncomplete
	case errors.As(err, &fe):
		fmt.Fprintf(stderr, "refbatch: error: %v\n", fe)
		hint := fe.Hint
		if hint == "" {
			hint = "fix the manifest (a header row source_id,participant_id,referral_date,consent,path[,sha256], then one row per referral) and run again"
		}
		fmt.Fprintf(stderr, "refbatch: hint: %s\n", hint)
		return exitUsage
	case errors.As(err, &le):
		fmt.Fprintf(stderr, "refbatch: error: %v\n", le)
		fmt.Fprintf(stderr, "refbatch: hint: %s\n", languageHint(le))
		return exitUsage
	case errors.As(err, &se):
		fmt.Fprintf(stderr, "refbatch: error: %s %v: want %s\n", settingFlag(se.Setting), se.Value, se.Want)
		fmt.Fprintln(stderr, "refbatch: hint: see refbatch run --help")
		return exitUsage
	case errors.As(err, &ece):
		msg, hint := recipientsRefusal(ece.Recipients, nil, nil, ece.Encrypted(), !ece.Encrypted())
		fmt.Fprintf(stderr, "refbatch: error: %s; nothing was done\nrefbatch: hint: %s\n", msg, hint)
		return exitUsage
	case errors.As(err, &re):
		msg, hint := recipientsRefusal(re.Recorded, re.Given, re.Added, len(re.Recorded) > 0, len(re.Given)+len(re.Added) > 0)
		fmt.Fprintf(stderr, "refbatch: error: %s; nothing was done\nrefbatch: hint: %s\n", msg, hint)
		return exitUsage
	case errors.As(err, &ome):
		fmt.Fprintf(stderr, "refbatch: error: %v; nothing was done\n", err)
		fmt.Fprintf(stderr, "refbatch: hint: every process of a batch writes into the one output folder, at the same path on every machine: pass --out %s, or leave --out out\n", ome.Recorded)
		return exitUsage
	case errors.As(err, &rce):
		fmt.Fprintf(stderr, "refbatch: error: %v; nothing was done\n", err)
		if rce.NeedIdentity {
			fmt.Fprintf(stderr, "refbatch: hint: a corrected participant_id or referral_date is checked against the document's encrypted artifact: run again with --identity FILE (or REFBATCH_IDENTITY)\n")
			return exitUsage
		}
		fmt.Fprintf(stderr, "refbatch: hint: a %s row's text is never replaced: restore line %d as it was, or give the corrected document a new source_id in a new row (a corrected participant_id or referral_date alone is an amendment, checked against its text)\n", rce.State, rce.Line)
		return exitUsage
	}
	for _, u := range userErrors {
		if errors.Is(err, u.err) {
			msg := u.msg
			if msg == "" {
				msg = err.Error()
			}
			fmt.Fprintf(stderr, "refbatch: error: %s\nrefbatch: hint: %s\n", msg, u.hint)
			return u.code
		}
	}
	fmt.Fprintf(stderr, "refbatch: error: %+v\n", err)
	return exitFailure
}

// languageHint says how to install the languages le lacks: Debian's
// tesseract-ocr-LANG packages, or TESSDATA_PREFIX; --no-orientation does
// without osd.
func languageHint(le *ocr.LanguageError) string {
	var pkgs, files []string
	osd := false
	for _, l := range le.Missing {
		files = append(files, l+".traineddata")
		osd = osd || l == ocr.OSDLanguage
		if !strings.Contains(l, "/") { // script/Latin has a package of another name
			pkgs = append(pkgs, "tesseract-ocr-"+strings.ToLower(strings.ReplaceAll(l, "_", "-")))
		}
	}
	hint := "set TESSDATA_PREFIX to the folder that holds " + strings.Join(files, " and ")
	if len(pkgs) > 0 {
		hint = "install Debian's package: sudo apt-get install " + strings.Join(pkgs, " ") + "; or " + hint
	}
	if osd {
		hint += "; or pass --no-orientation, which needs no osd"
	}
	return hint
}

// identityHint asks for the identity that decrypts a batch's artifacts.
const identityHint = "pass --identity FILE, the file `refbatch keygen` wrote"

// userErrors are the sentinels of the packages below that ask the user to
// act, in the order exitCode tries them: the exit code, the hint, and a
// message in place of the error's own when it has one.
var userErrors = []struct {
	err       error
	code      int
	hint, msg string
}{
	{err: journal.ErrNotJournal, code: exitUsage, hint: "pass --out DIR, a folder `refbatch run` writes; refbatch does not add its tables to another database"},
	{err: layout.ErrNoJournal, code: exitUsage, hint: "pass --out DIR, the folder `refbatch run` writes"},
	{err: layout.ErrNoBatch, code: exitUsage, hint: "start the batch with refbatch run --journal URL MANIFEST; check the URL's database and its search_path, the schema of the batch"},
	{err: layout.ErrJournalNotURL, code: exitUsage, hint: "a SQLite journal is always journal.db in --out: pass --out DIR; for PostgreSQL, --journal postgres://USER@HOST:PORT/DB"},
	{err: batch.ErrOutNotFolder, code: exitUsage, hint: "choose a folder for the output"},
	{err: layout.ErrNotThisBatch, code: exitUsage, hint: "put the batch's own journal.db back (a regular file, from a backup) or use a new --out; refbatch never starts a batch over another's artifacts nor overwrites one"},
	{err: batch.ErrStdinManifest, code: exitUsage, hint: "finish them with refbatch run --out DIR - < MANIFEST.csv, piping the same manifest again (the run recorded its SHA-256), then join"},
	{err: journal.ErrManifestChanged, code: exitUsage, hint: "the manifest changed while refbatch was reading it: run the same command again once it is saved (rows are bound to their source_id, whatever their line)"},
	{err: batch.ErrNoRecipients, code: exitUsage, msg: "artifacts would be written unencrypted",
		hint: "pass --recipient AGE_PUBLIC_KEY (or --recipients-file FILE, or set REFBATCH_RECIPIENTS); make one with `refbatch keygen`; or pass --plaintext to choose unencrypted artifacts explicitly"},
	{err: handover.ErrNeedIdentity, code: exitUsage, hint: identityHint},
	{err: store.ErrNoIdentities, code: exitUsage, hint: identityHint},
	{err: store.ErrLink, code: exitFailure, hint: "refbatch follows no symbolic link inside the folders it writes in (--out, export's --to), and wrote nothing through this one: remove it, or choose another folder"},
	{err: batch.ErrEnginesBroken, code: exitFailure, hint: "check the OCR engines (tesseract --version, free memory, --worker-memory); the journal is consistent and the same command resumes"},
	{err: layout.ErrRootLogInOut, code: exitUsage, hint: "keep the root log where whoever can write --out cannot, for example the auditor's own folder"},
	{err: layout.ErrNoCustodyLog, code: exitUsage, hint: "verify without --root/--root-log, or after a run of this refbatch has added the custody log; a root log is checked for the batch ID in the folder's report.json"},
	{err: layout.ErrIncomplete, code: exitIncomplete, hint: "run the same command again to resume; finished work is kept"},
	{err: journal.ErrUnreachable, code: exitFailure, hint: "check that the PostgreSQL server of --journal is up and reachable from this machine (pg_isready -h HOST -p PORT), then run the same command again"},
}
