package journal

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// This file records the batch's recipients: the age public keys its
// artifacts are encrypted to. They are public, and they say which key an
// auditor needs; recording them lets a run refuse to add artifacts for
// another key to the batch by mistake.

// The kinds of event about the batch's recipients. Neither names a row or
// a document.
const (
	// EventRecipients: the first run to record them set the batch's
	// recipients; data {"recipients": [...]}, sorted, empty for a
	// plaintext batch.
	EventRecipients EventKind = "recipients"
	// EventRecipientsAdded: a run extended the recipients deliberately
	// (`run --add-recipient`); data {"added": [...], "recipients": [...]},
	// the keys it added and the set that resulted, each sorted.
	EventRecipientsAdded EventKind = "recipients_added"
)

// metaRecipients is the meta key holding the recorded set, a JSON array.
const metaRecipients = "recipients"

// RecipientsError means a run was given other recipients than the batch
// records. Nothing was written.
type RecipientsError struct {
	// Recorded is the batch's set; empty for a plaintext batch.
	Recorded []string
	// Given are the run's recipients (empty for a plaintext run), Added
	// those it would add deliberately; each sorted and deduplicated.
	Given, Added []string
}

func (e *RecipientsError) Error() string {
	batch := "this batch encrypts to " + strings.Join(e.Recorded, ", ")
	if len(e.Recorded) == 0 {
		batch = "this batch writes plaintext artifacts"
	}
	var run string
	switch {
	case len(e.Given)+len(e.Added) == 0:
		run = "this run would write plaintext ones"
	case len(e.Recorded) == 0:
		run = "this run would encrypt to " + strings.Join(union(e.Given, e.Added), ", ")
	case len(e.Added) > 0:
		run = "this run was given " + strings.Join(minus(e.Given, union(e.Recorded, e.Added)), ", ") + ", neither recorded nor added"
	default:
		run = "this run was given " + strings.Join(e.Given, ", ")
	}
	return batch + "; " + run
}

// PinRecipients checks a run's recipients against the batch's and returns
// the set the run encrypts to. given are the run's recipients, added the
// ones it adds deliberately; both empty for a plaintext run. Keys are
// compared as strings, in any order, duplicates ignored.
//
// A batch with no recorded set (a new one, or a journal from before
// recipients were recorded) records given and added as its set, with an
// EventRecipients. Otherwise, without added, given must be the recorded
// set; with added, each given key must be recorded or added, and the keys
// added that are new are recorded with an EventRecipientsAdded: the run
// encrypts to the recorded keys and the added ones. A plaintext batch
// takes no recipients, added or not, and an encrypted one no plaintext
// run. Any other set is a *RecipientsError, and nothing is written. The
// check and the write are one transaction, so of two runs racing to
// record different sets, the second is refused.
func (j *Journal) PinRecipients(given, added []string) ([]string, error) {
	given, added = union(given), union(added)
	var set []string
	err := j.tx(func(tx *sql.Tx) error {
		recorded, ok, err := readRecipients(tx.QueryRow(`SELECT value FROM meta WHERE key=?`, metaRecipients))
		if err != nil {
			return err
		}
		if !ok {
			set = union(given, added)
			return j.writeRecipients(tx, EventRecipients, set, nil)
		}
		set = union(recorded, added)
		refuse := len(recorded) == 0 && len(given)+len(added) > 0
		if len(added) == 0 {
			refuse = refuse || !slices.Equal(given, recorded)
		} else {
			refuse = refuse || len(minus(given, set)) > 0
		}
		if refuse {
			return &RecipientsError{Recorded: recorded, Given: given, Added: added}
		}
		if fresh := minus(added, recorded); len(fresh) > 0 {
			return j.writeRecipients(tx, EventRecipientsAdded, set, fresh)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return set, nil
}

// writeRecipients records set as the batch's recipients, and the event of
// kind that says so, in tx.
func (j *Journal) writeRecipients(tx *sql.Tx, kind EventKind, set, added []string) error {
	value, err := json.Marshal(set)
	if err != nil {
		return err
	}
	if _, err := tx.Exec(`INSERT INTO meta(key,value) VALUES(?,?) ON CONFLICT(key) DO UPDATE SET value=excluded.value`, metaRecipients, string(value)); err != nil {
		return fmt.Errorf("recording the recipients: %w", err)
	}
	data := struct {
		Added      []string `json:"added,omitempty"`
		Recipients []string `json:"recipients"`
	}{added, set}
	raw, err := json.Marshal(data)
	if err != nil {
		return err
	}
	return j.appendEvent(tx, Event{Kind: kind, Data: raw}, metaTouch(metaRecipients))
}

// Recipients returns the batch's recipients, sorted, and whether a set is
// recorded: a plaintext batch records an empty one, a journal from before
// recipients were recorded none.
func (j *Journal) Recipients() (keys []string, recorded bool, err error) {
	keys, recorded, err = readRecipients(j.db.QueryRow(`SELECT value FROM meta WHERE key=?`, metaRecipients))
	if err != nil {
		return nil, false, fmt.Errorf("journal: reading the recipients: %w", err)
	}
	return keys, recorded, nil
}

// readRecipients decodes the recorded set the row holds.
func readRecipients(row *sql.Row) ([]string, bool, error) {
	var value string
	if err := row.Scan(&value); errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	} else if err != nil {
		return nil, false, err
	}
	keys := []string{}
	if err := json.Unmarshal([]byte(value), &keys); err != nil {
		return nil, false, fmt.Errorf("the recorded recipients are not a JSON array of keys: %w", err)
	}
	return keys, true, nil
}

// union returns the keys of the lists, trimmed, sorted and deduplicated;
// never nil.
func union(lists ...[]string) []string {
	out := []string{}
	for _, l := range lists {
		for _, k := range l {
			if k = strings.TrimSpace(k); k != "" {
				out = append(out, k)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// minus returns the keys of a (sorted) that b does not hold.
func minus(a, b []string) []string {
	var out []string
	for _, k := range a {
		if !slices.Contains(b, k) {
			out = append(out, k)
		}
	}
	return out
}
