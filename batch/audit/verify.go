package audit

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"filippo.io/age"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/batch/store"
	"github.com/refbatch/refbatch/report"
	"github.com/refbatch/refbatch/report/outcome"
)

// Finding kinds reported by Verify. They are stable: scripts match on them.
const (
	FindingJournalMissing       = "journal_missing"
	FindingJournalCorrupt       = "journal_corrupt"
	FindingMissingArtifactEntry = "missing_artifact_entry" // a done document with no artifact recorded
	FindingMissingArtifact      = "missing_artifact"
	FindingArtifactHash         = "artifact_hash_mismatch"
	FindingUnknownFile          = "unknown_file"
	FindingArtifactUnreadable   = "artifact_unreadable" // cannot be decrypted or parsed
	FindingContentHash          = "content_hash_mismatch"
	FindingProvenance           = "provenance_mismatch"
	FindingSourceMissing        = "source_missing"
	FindingSourceChanged        = "source_changed"      // other bytes, or no longer a regular file inside the root
	FindingSourceUnreadable     = "source_unreadable"   // there, but cannot be read
	FindingUnfinished           = "unfinished_document" // non-final while no run is in progress or interrupted
	// FindingUndecidedState: the artifact's verdict is not the journal's
	// state, and no decision of a person about that artifact explains it
	// (an accept makes a review artifact's document done, a reject makes
	// it rejected).
	FindingUndecidedState = "undecided_state"
	// FindingArtifactsSwapped: two artifacts each hold the bytes the
	// journal recorded for the other; one finding names both (File and
	// OtherFile), in place of two hash mismatches.
	FindingArtifactsSwapped = "artifacts_swapped"
	// FindingBatchMismatch: the journal is of another batch than the
	// folder's marker, or an artifact of another batch than the journal.
	FindingBatchMismatch = "batch_mismatch"
	// FindingArtifactNotRegular: a symbolic link (to whatever, an
	// identical copy included), a FIFO, a device or a folder in an
	// artifact's place; nothing is read from it.
	FindingArtifactNotRegular = "artifact_not_regular"
	// FindingArtifactOversized: a file in an artifact's place larger than
	// the size the journal recorded when it was written (or, for an
	// artifact published before sizes were recorded, than its document's
	// pages can hold: layout.MaxArtifactBytes), refused before a byte is
	// read.
	FindingArtifactOversized = "artifact_oversized"
	// FindingArtifactUndersized: a file in an artifact's place smaller
	// than the size the journal recorded when it was written, refused
	// before a byte is read.
	FindingArtifactUndersized = "artifact_undersized"
)

// Finding is one thing Verify found wrong, about one file, or about two
// when the fault is between them (artifacts_swapped).
type Finding struct {
	Kind     string `json:"kind"`
	File     string `json:"file"`
	SourceID string `json:"source_id,omitempty"`
	Detail   string `json:"detail,omitempty"`
	// OtherFile and OtherSourceID name the second file of a finding
	// about two.
	OtherFile     string `json:"other_file,omitempty"`
	OtherSourceID string `json:"other_source_id,omitempty"`
}

// VerifyOptions configure Verify.
type VerifyOptions struct {
	// Out and Journal are where the batch is (see layout.Place). A PostgreSQL
	// journal is checked as a SQLite one, but for the file: PostgreSQL
	// checks its own pages.
	Out     string
	Journal string
	// Identities decrypt the artifacts to check their content hash and
	// provenance; without them only the ciphertext's hash is checked.
	Identities []age.Identity
	// Sources re-hashes every source file at its recorded path.
	Sources bool
	// Root, when set, is a batch root pinned earlier: the custody log
	// must reach it (it is the root now, or was before later events).
	Root string
	// RootLog, when set, is a root log (--root-log) whose entries for
	// this batch the custody log must reach, each at its event count.
	RootLog string
	// Progress, when set, is called after each document is checked.
	Progress func(done, total int)
}

// VerifyResult is what Verify checked and found.
type VerifyResult struct {
	Findings   []Finding `json:"findings"`
	Documents  int       `json:"documents"`
	Artifacts  int       `json:"artifacts_checked"`
	Decrypted  int       `json:"artifacts_decrypted"`
	Sources    int       `json:"sources_checked"`
	Unfinished int       `json:"unfinished_documents"`
	// Superseded counts the artifacts of readings a later reading of the
	// same document replaced (a retry, a changed row): each is checked
	// against the hash its event recorded.
	Superseded int `json:"artifacts_superseded"`
	// Decisions counts the decisions of a person the journal records, each
	// checked against the artifact it names.
	Decisions int `json:"decisions"`
	// Transcriptions counts the transcriptions of a person the journal
	// records, and TranscriptionsWithdrawn their withdrawals (each one
	// more artifact version); the artifacts they replaced are checked as
	// superseded.
	Transcriptions          int `json:"transcriptions"`
	TranscriptionsWithdrawn int `json:"transcriptions_withdrawn,omitempty"`
	// Revalidations counts the verdicts found again from an artifact
	// (revalidated and amended events), each checked like a decision.
	Revalidations int `json:"revalidations"`
	// Unsized counts the artifacts checked whose size the journal did not
	// record (published before it recorded sizes): each was bounded by its
	// document's pages instead of refused at any other size.
	Unsized int `json:"artifacts_unsized"`
	// Custody is the batch root the custody log recomputes to; nil for a
	// journal an earlier build wrote, which has none (Legacy), and for a
	// journal that could not be read (a journal_missing or
	// journal_corrupt finding says why).
	Custody *report.Custody `json:"custody,omitempty"`
	// Legacy is true for a journal an earlier build wrote, read as it is:
	// it has no custody log to check.
	Legacy bool `json:"legacy_journal,omitempty"`
	// PinnedAt is the event whose hash is the pinned root (Root, or the
	// root log's latest entry): the batch's state then; 0 when none was
	// given or it was not found.
	PinnedAt int64 `json:"pinned_root_event,omitempty"`
	// Incomplete is true when the batch has not finished (its last run was
	// interrupted or is still running): its non-final documents are then
	// expected, not findings.
	Incomplete bool `json:"incomplete"`
	// Encrypted tells whether the batch's artifacts are encrypted, and
	// Recipients to which age public keys, as the journal records them
	// (empty for a plaintext batch, or a journal from before they were
	// recorded).
	Encrypted  bool     `json:"encrypted"`
	Recipients []string `json:"recipients"`

	// batchID is the batch's ID as the journal records it, which each
	// artifact's provenance must carry when it carries one.
	batchID string
	// mismatches are the artifacts whose hash is not the journal's, which
	// Verify pairs into swaps; sizeMismatches those refused unread for
	// their size, which may be swaps too.
	mismatches     []hashMismatch
	sizeMismatches []sizeMismatch
}

// OK reports whether nothing was found.
func (r *VerifyResult) OK() bool { return len(r.Findings) == 0 }

// Verify checks an output folder's chain of custody: the journal's
// integrity, that every finished document's artifact is present and
// unaltered, that no unknown file sits among the artifacts, and optionally
// the artifacts' content (with identities) and the sources' bytes.
func Verify(ctx context.Context, o VerifyOptions) (*VerifyResult, error) {
	res := &VerifyResult{}
	add := func(kind, file, source, detail string) {
		res.Findings = append(res.Findings, Finding{Kind: kind, File: file, SourceID: source, Detail: detail})
	}
	dbPath := layout.Place{Out: o.Out, Journal: o.Journal}.Describe()
	j, err := openVerified(&o, add)
	if j == nil || err != nil {
		return res, err
	}
	defer j.Close()
	journal.WithInterrupt(ctx)(j) // the checks below end at Ctrl-C
	if !journalSound(j, dbPath, add) {
		return res, nil
	}
	if err := verifyCustody(j, o, res, dbPath, add); err != nil {
		return nil, err
	}
	if res.batchID, err = verifyBatch(j, o.Out, add); err != nil {
		add(FindingJournalCorrupt, dbPath, "", err.Error())
		return res, nil
	}
	runs, err := j.Runs()
	if err != nil {
		add(FindingJournalCorrupt, dbPath, "", err.Error())
		return res, nil
	}
	root := SourceRoot(runs)
	if res.Encrypted, res.Recipients, err = layout.BatchRecipients(j); err != nil {
		add(FindingJournalCorrupt, dbPath, "", err.Error())
		return res, nil
	}
	if len(runs) > 0 {
		last := runs[len(runs)-1]
		res.Incomplete = last.FinishedAt.IsZero() || last.Exit != "complete"
	}

	artDir := filepath.Join(o.Out, layout.ArtifactsDir)
	st, err := store.OpenReadOnly(artDir)
	if err != nil {
		return nil, err
	}
	st.StopWith(ctx)
	var docs []journal.Doc
	if err := j.Documents(func(d journal.Doc) error { docs = append(docs, d); return nil }); err != nil {
		add(FindingJournalCorrupt, dbPath, "", err.Error())
		return res, nil
	}
	res.Documents = len(docs)
	referenced := map[string]bool{}
	decisions, err := j.Decisions()
	if err != nil {
		add(FindingJournalCorrupt, dbPath, "", err.Error())
		return res, nil
	}
	res.Decisions = len(decisions)
	explained, latest, err := explainedStates(j, decisions, res)
	if err != nil {
		add(FindingJournalCorrupt, dbPath, "", err.Error())
		return res, nil
	}
	for i, d := range docs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if !d.State.Final() {
			res.Unfinished++
			if latest[d.ID] == journal.Retry {
				// A person sent it back: the next run reads it.
				res.Incomplete = true
			} else if !res.Incomplete {
				add(FindingUnfinished, dbPath, d.SourceID, "the document is "+string(d.State)+" but no run is unfinished")
			}
		}
		if d.Artifact != "" {
			name := layout.StoreName(d.Artifact)
			referenced[name] = true
			if a := verifyArtifact(st, d, name, o.Identities, res, add); a != nil {
				verifyState(filepath.Join(artDir, name), d, a, explained[d.Artifact], add)
			}
		} else if d.State == outcome.Done {
			add(FindingMissingArtifactEntry, dbPath, d.SourceID, "a done document has no artifact recorded")
		}
		if o.Sources {
			res.Sources++
			if err := verifySourceUntil(ctx, root, d, add); err != nil {
				return nil, err
			}
		}
		if o.Progress != nil {
			o.Progress(i+1, len(docs))
		}
	}
	if err := verifyOthers(j, st, referenced, docs, res, dbPath, add); err != nil {
		return nil, err
	}
	res.Findings = foldSwaps(res.unsizeSwaps(st, res.Findings), res.mismatches)
	sort.SliceStable(res.Findings, func(a, b int) bool { return res.Findings[a].File < res.Findings[b].File })
	return res, nil
}

// journalSound runs SQLite's integrity check on the journal, and reports
// what it finds.
func journalSound(j *journal.Journal, dbPath string, add func(kind, file, source, detail string)) bool {
	problems, err := j.IntegrityCheck()
	if err != nil {
		add(FindingJournalCorrupt, dbPath, "", err.Error())
		return false
	}
	if len(problems) > 0 {
		add(FindingJournalCorrupt, dbPath, "", strings.Join(problems, "; "))
		return false
	}
	return true
}

// verifyOthers checks the artifacts the journal's events name (those a
// retry or a transcription superseded stay on disk, and must still be the
// bytes the event recorded), counts the transcriptions, and reports every
// other file in the artifacts folder.
func verifyOthers(j *journal.Journal, st *store.Store, referenced map[string]bool, docs []journal.Doc, res *VerifyResult, dbPath string, add func(kind, file, source, detail string)) error {
	pages := make(map[int64]int, len(docs)) // each document's, which bound its artifacts' size
	for _, d := range docs {
		pages[d.ID] = d.Pages
	}
	n, err := j.Transcriptions()
	if err != nil {
		add(FindingJournalCorrupt, dbPath, "", err.Error())
		return nil
	}
	res.Transcriptions, res.TranscriptionsWithdrawn = n.Made, n.Withdrawn
	others, err := j.EventArtifacts()
	if err != nil {
		add(FindingJournalCorrupt, dbPath, "", err.Error())
		return nil
	}
	sizes := map[string]int64{} // an artifact's size as an event recorded it, when one did
	for _, a := range others {
		if a.Size > 0 && sizes[a.Artifact] == 0 {
			sizes[a.Artifact] = a.Size
		}
	}
	for _, a := range others {
		name := layout.StoreName(a.Artifact)
		if referenced[name] {
			continue
		}
		referenced[name] = true
		a.Size = sizes[a.Artifact]
		verifyKept(st, name, a, pages[a.DocID], res, add)
	}
	names, err := st.List()
	if err != nil {
		return err
	}
	for _, n := range names {
		if !referenced[n] {
			add(FindingUnknownFile, filepath.Join(st.Dir(), n), "", unknownDetail(n))
		}
	}
	return nil
}

// openVerified opens the journal verify checks, read-only, setting o.Out
// to the folder a PostgreSQL journal recorded when none was given. When
// there is no journal to check it adds the finding and returns nil. A
// journal that cannot be read for another reason than its content (a
// folder this user may not read) is an error, never journal_corrupt.
func openVerified(o *VerifyOptions, add func(kind, file, source, detail string)) (*journal.Journal, error) {
	place := layout.Place{Out: o.Out, Journal: o.Journal}
	dbPath := place.Describe()
	if place.Shared() {
		j, place, err := layout.OpenJournal(place)
		if errors.Is(err, layout.ErrNoBatch) {
			add(FindingJournalMissing, dbPath, "", err.Error())
			return nil, nil
		}
		o.Out = place.Out
		return j, err
	}
	if _, err := os.Stat(dbPath); errors.Is(err, fs.ErrNotExist) {
		add(FindingJournalMissing, dbPath, "", err.Error())
		return nil, nil
	}
	if why, err := notSQLite(dbPath); err != nil {
		return nil, err
	} else if why != "" {
		add(FindingJournalCorrupt, dbPath, "", why)
		return nil, nil
	}
	j, err := journal.OpenReadOnly(dbPath)
	if err != nil && !journal.IsCorrupt(err) {
		return nil, err
	}
	if err != nil {
		add(FindingJournalCorrupt, dbPath, "", err.Error())
		return nil, nil
	}
	return j, nil
}

// explainedStates maps an artifact to the states the decisions and
// revalidations about it moved its document to, which explain a document
// whose state is not its artifact's verdict; latest is each document's
// latest decision. It counts the revalidations in res.
func explainedStates(j *journal.Journal, decisions []journal.DocDecision, res *VerifyResult) (map[string][]outcome.State, map[int64]journal.Action, error) {
	explained := map[string][]outcome.State{}
	latest := map[int64]journal.Action{}
	for _, d := range decisions {
		if st, ok := map[journal.Action]outcome.State{journal.Accept: outcome.Done, journal.Reject: outcome.Rejected}[d.Action]; ok {
			explained[d.Artifact] = append(explained[d.Artifact], st)
		}
		latest[d.DocID] = d.Action
	}
	revalidations, err := j.Revalidations()
	if err != nil {
		return nil, nil, err
	}
	res.Revalidations = len(revalidations)
	for _, rv := range revalidations {
		explained[rv.Artifact] = append(explained[rv.Artifact], rv.State)
	}
	return explained, latest, nil
}
