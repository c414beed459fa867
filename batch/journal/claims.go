package journal

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/refbatch/refbatch/report/outcome"
)

// This file is how several processes, on one machine or many, share a
// batch: workers take the next claimable document from the journal
// (ClaimNext) rather than from a list of their own, one process at a time
// streams a manifest into the journal (HoldAdmission), and every run beats
// a heartbeat (Beat) so that a process on another host can tell a run
// that is going from one whose machine died.
//
// None of it is custody: the admitters table and runs.heartbeat_at change
// without events, like a lease's token and expiry.

// admittersTable holds, for each manifest being streamed into the journal,
// the process doing it and until when its hold lasts unless renewed.
const admittersTable = `CREATE TABLE IF NOT EXISTS admitters (
		manifest TEXT PRIMARY KEY,
		owner    TEXT NOT NULL,
		expires  INTEGER NOT NULL
	)`

// claimsReadOnly gives a read-only connection to a journal of schema 4 or
// earlier runs without heartbeats and no admitters, from its own
// temporary database (see legacyViews).
func claimsReadOnly(db *sql.DB) error {
	for _, s := range []string{
		`CREATE TEMP VIEW runs AS SELECT *, NULL AS heartbeat_at FROM main.runs`,
		"CREATE TEMP TABLE" + strings.TrimPrefix(admittersTable, "CREATE TABLE"),
	} {
		if _, err := db.Exec(s); err != nil {
			return errors.Join(errors.New("journal: reading an earlier schema's runs"), err)
		}
	}
	return nil
}

// HeartbeatTTL is how long a run counts as going after its last heartbeat
// (Beat) when its process is on another host, whose process table this
// one cannot read. A run beats every HeartbeatTTL/3.
const HeartbeatTTL = 30 * time.Second

// Beat records that run id's process is alive now.
func (j *Journal) Beat(id int64) error {
	err := j.execWaiting(`UPDATE runs SET heartbeat_at=? WHERE id=?`, ms(j.now()), id)
	if err != nil {
		return fmt.Errorf("journal: run heartbeat: %w", classify(err))
	}
	return nil
}

// ErrNothingClaimable means no document of the manifests asked for can be
// claimed now: none is queued, or every queued one is leased by a live
// owner or waiting out its backoff.
var ErrNothingClaimable = errors.New("no document is claimable")

// claimCandidates is how many claimable documents ClaimNext considers in
// one transaction: a candidate whose lease turns out to be live (an owner
// on this host the query cannot tell from a dead one) is passed over.
const claimCandidates = 8

// Claimable says which documents ClaimNext may take.
type Claimable struct {
	// Manifests are the manifests whose documents may be claimed (the
	// manifest of the row that owns each); none means every manifest.
	Manifests []string
	// Fresh leaves out the documents that were in flight when a process
	// died (abandoned before, or holding an expired lease): while a
	// manifest is still being admitted, fresh work goes first, so that a
	// document that kills its process holds the rest of the batch back
	// as little as it can.
	Fresh bool
	// Skip are documents not to claim (the caller found it cannot work
	// on them now).
	Skip []int64
}

// ClaimNext claims the next claimable document under c, in manifest order
// (documents left in flight by a dead process last), and returns its
// lease and the document as the claim left it. It returns
// ErrNothingClaimable when there is none.
//
// On PostgreSQL the candidates are locked with FOR UPDATE SKIP LOCKED, so
// a claim never waits for a document another transaction holds (a page
// being recorded, another claim): it takes the next one.
func (j *Journal) ClaimNext(owner Owner, p Policy, c Claimable) (Lease, Doc, error) {
	var l Lease
	var d Doc
	found := false
	err := j.hotTx(func(tx *sql.Tx) error {
		found = false
		now := ms(j.now())
		// Fresh work first, in manifest order along the queue's index;
		// then, unless c says fresh only, what a dead process left (its
		// lease expired, or its process on this host is gone, which only
		// claimIn can tell from a live one), which is a few documents.
		for _, fresh := range []bool{true, false} {
			if !fresh && c.Fresh {
				break
			}
			// On PostgreSQL one candidate at a time, each passed over
			// left out of the next search (see candidates). A search
			// after a passed-over candidate's append (a dead lease taken
			// over) holds the custody lock, but SKIP LOCKED never waits
			// for a row.
			var passed []int64
			for len(passed) < claimCandidates {
				ids, err := j.candidates(tx, c, passed, fresh, now)
				if err != nil {
					return err
				}
				if len(ids) == 0 {
					break
				}
				for _, id := range ids {
					got, ok, err := j.claimIn(tx, id, owner, p)
					if err != nil {
						return err
					}
					if !ok {
						passed = append(passed, id)
						continue
					}
					if d, err = scanDoc(tx.QueryRow(`SELECT `+j.docColumns()+` FROM documents WHERE id=?`, id)); err != nil {
						return err
					}
					l, found = got, true
					return nil
				}
				if !j.pg {
					break
				}
			}
		}
		return nil
	})
	if err != nil {
		return Lease{}, Doc{}, fmt.Errorf("journal: claiming the next document: %w", err)
	}
	if !found {
		return Lease{}, Doc{}, ErrNothingClaimable
	}
	return l, d, nil
}

// queueIndex serves ClaimNext's search for fresh work: queued documents
// in manifest order.
const queueIndex = `CREATE INDEX IF NOT EXISTS documents_queue ON documents(state, manifest_line)`

// rowsDocumentIndex serves the look-ups of a document's rows: ClaimNext's
// test that a candidate's row is still in its manifest, run for every
// candidate of every claim, which without it reads every row of the
// batch; and a decision's or an export's line of its document.
const rowsDocumentIndex = `CREATE INDEX IF NOT EXISTS rows_document ON rows(document_id)`

// candidates returns the next documents ClaimNext may claim under c at
// now, but those passed over already: fresh ones (never in flight at a
// process's death, no lease), or the others that may be claimable (no
// live lease the query can tell), in manifest order. On SQLite up to
// claimCandidates; on PostgreSQL one, locked (skipLocked): a claim holds
// only the document it claims (and the few it passed over) through its
// wait for the custody lock and its commit, not claimCandidates of them,
// which a decision or a Rebind about one of them would wait for, through
// the custody lock's whole queue (six workers held up to 48 documents of
// a 40-document batch, so that a Rebind, moving every document, waited
// for a claim at nearly each).
func (j *Journal) candidates(tx *sql.Tx, c Claimable, passed []int64, fresh bool, now int64) ([]int64, error) {
	c.Skip = append(slices.Clone(c.Skip), passed...)
	limit := claimCandidates
	if j.pg {
		limit = 1
	}
	q := `SELECT d.id FROM documents d WHERE d.state=? AND d.next_attempt_at<=?`
	args := []any{outcome.Queued, now}
	if fresh {
		q += ` AND d.lease_token IS NULL AND d.abandoned=0`
	} else {
		host, _ := os.Hostname()
		q += ` AND NOT (d.lease_token IS NULL AND d.abandoned=0)
			AND (d.lease_token IS NULL OR d.lease_expires<=? OR d.lease_owner LIKE ?)`
		args = append(args, now, likePrefix(host+"/"))
	}
	// A document whose row was withdrawn (Rebind) is not read.
	q += ` AND EXISTS (SELECT 1 FROM rows r WHERE r.document_id=d.id AND r.kind=? AND r.line > 0`
	args = append(args, kindDoc)
	if len(c.Manifests) > 0 {
		q += ` AND r.manifest IN (?` + strings.Repeat(`,?`, len(c.Manifests)-1) + `)`
		for _, m := range c.Manifests {
			args = append(args, m)
		}
	}
	q += `)`
	if len(c.Skip) > 0 {
		q += ` AND d.id NOT IN (?` + strings.Repeat(`,?`, len(c.Skip)-1) + `)`
		for _, id := range c.Skip {
			args = append(args, id)
		}
	}
	if fresh {
		q += ` ORDER BY d.manifest_line, d.id`
	} else {
		// An expired or dead lease before this host's live ones.
		q += ` ORDER BY CASE WHEN d.lease_token IS NULL OR d.lease_expires<=? THEN 0 ELSE 1 END, d.manifest_line, d.id`
		args = append(args, now)
	}
	rows, err := tx.Query(q+` LIMIT `+fmt.Sprint(limit)+j.skipLocked(), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// likePrefix is a LIKE pattern matching what starts with s, s's own %
// and _ taken literally.
func likePrefix(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s) + "%"
}

// HoldAdmission takes or renews the hold on streaming manifest into the
// journal for owner, until ttl from now. It returns false when another
// process holds it: that process is admitting the manifest's rows, and
// owner should claim work rather than admit the same rows beside it. A
// hold whose owner let it expire, or whose process on this host is gone,
// is taken over.
func (j *Journal) HoldAdmission(manifest string, owner Owner, ttl time.Duration) (bool, error) {
	held := false
	err := j.leaseTx(func(tx *sql.Tx) error {
		now := j.now()
		var holder string
		var expires int64
		err := tx.QueryRow(`SELECT owner, expires FROM admitters WHERE manifest=?`, manifest).Scan(&holder, &expires)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			res, err := tx.Exec(`INSERT INTO admitters(manifest, owner, expires) VALUES(?,?,?) ON CONFLICT(manifest) DO NOTHING`,
				manifest, string(owner), ms(now.Add(ttl)))
			if err != nil {
				return err
			}
			n, _ := res.RowsAffected()
			held = n == 1
			return nil
		case err != nil:
			return err
		case holder != string(owner) && expires > ms(now) && !Owner(holder).dead():
			return nil
		}
		// Ours, or free to take: only if it is still what was read.
		res, err := tx.Exec(`UPDATE admitters SET owner=?, expires=? WHERE manifest=? AND owner=? AND expires=?`,
			string(owner), ms(now.Add(ttl)), manifest, holder, expires)
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		held = n == 1
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("journal: holding the admission of %s: %w", manifest, err)
	}
	return held, nil
}

// ReleaseAdmission gives up owner's hold on admitting manifest, if it has
// one.
func (j *Journal) ReleaseAdmission(manifest string, owner Owner) error {
	err := j.execWaiting(`DELETE FROM admitters WHERE manifest=? AND owner=?`, manifest, string(owner))
	if err != nil {
		return fmt.Errorf("journal: releasing the admission of %s: %w", manifest, classify(err))
	}
	return nil
}

// Admitting reports whether a live process other than owner holds the
// admission of one of manifests (of any manifest when none are given).
func (j *Journal) Admitting(manifests []string, owner Owner) (bool, error) {
	q := `SELECT owner FROM admitters WHERE expires>? AND owner<>?`
	args := []any{ms(j.now()), string(owner)}
	if len(manifests) > 0 {
		q += ` AND manifest IN (?` + strings.Repeat(`,?`, len(manifests)-1) + `)`
		for _, m := range manifests {
			args = append(args, m)
		}
	}
	rows, err := j.db.Query(q, args...)
	if err != nil {
		return false, fmt.Errorf("journal: listing admissions: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var o string
		if err := rows.Scan(&o); err != nil {
			return false, err
		}
		if !Owner(o).dead() {
			return true, nil
		}
	}
	return false, rows.Err()
}

// Unclaimed counts the queued documents no lease holds, of every
// manifest: the work admission has put before the workers.
func (j *Journal) Unclaimed() (int, error) {
	var n int
	err := j.db.QueryRow(`SELECT COUNT(*) FROM documents WHERE state=? AND lease_token IS NULL`, outcome.Queued).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("journal: counting unclaimed documents: %w", err)
	}
	return n, nil
}

// QueuedOf calls fn for every document not yet final whose row is in one
// of manifests (every document not final when none are given), in
// manifest order.
func (j *Journal) QueuedOf(manifests []string, fn func(Doc) error) error {
	q := `SELECT ` + j.docColumns() + ` FROM documents d WHERE state=?`
	args := []any{outcome.Queued}
	q += ` AND EXISTS (SELECT 1 FROM rows r WHERE r.document_id=d.id AND r.kind=? AND r.line > 0`
	args = append(args, kindDoc)
	if len(manifests) > 0 {
		q += ` AND r.manifest IN (?` + strings.Repeat(`,?`, len(manifests)-1) + `)`
		for _, m := range manifests {
			args = append(args, m)
		}
	}
	q += `)`
	return j.documents(q+` ORDER BY manifest_line`, fn, args...)
}

// OwnerRow returns the manifest and line of the row that owns document
// id; ok is false when no row does.
func (j *Journal) OwnerRow(id int64) (manifest string, line int, ok bool, err error) {
	err = j.db.QueryRow(`SELECT manifest, line FROM rows WHERE document_id=? AND kind=? ORDER BY manifest, line LIMIT 1`, id, kindDoc).
		Scan(&manifest, &line)
	if errors.Is(err, sql.ErrNoRows) {
		return "", 0, false, nil
	}
	if err != nil {
		return "", 0, false, fmt.Errorf("journal: the row of document %d: %w", id, err)
	}
	return manifest, line, true, nil
}
