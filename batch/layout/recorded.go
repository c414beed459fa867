package layout

import "slices"

// Recorded is what a batch's journal remembers of how it was run: the
// settings of its latest run of a manifest, and its artifacts'
// encryption and recipients. A rerun takes them for every flag it is not
// given (refbatch run), so that `refbatch run --out OUT manifest.csv` is
// the whole rerun.
type Recorded struct {
	// Found is false when the folder holds no batch yet, or none of its
	// runs recorded settings.
	Found    bool
	Settings Settings
	// Plaintext and Recipients are the batch's choice of encryption:
	// plaintext artifacts, or age encrypted to these keys. Both are
	// empty when the journal recorded neither.
	Plaintext  bool
	Recipients []string
}

// ReadRecorded reads what the batch at p recorded: the settings of the
// latest run that streamed manifest (its absolute path, or "-"), else of
// the batch's latest run. A folder with no journal, or one that cannot be
// opened, has none: Found is false and err nil (the run then refuses the
// journal itself, saying why). It only reads.
func ReadRecorded(p Place, manifest string) (Recorded, error) {
	var rec Recorded
	j, _, err := OpenJournal(p)
	if err != nil {
		// No batch yet, or a journal the run itself refuses, saying why
		// (a link, another batch's, a damaged one): nothing recorded.
		return rec, nil
	}
	defer j.Close()
	runs, err := j.Runs()
	if err != nil {
		return rec, err
	}
	for _, r := range slices.Backward(runs) {
		s, ok := DecodeSettings(r.Settings)
		if !ok {
			continue
		}
		if !rec.Found {
			rec.Found, rec.Settings = true, s
		}
		if run, ok := DecodeRun(r.Settings); ok && run.Manifest == manifest && !run.Join {
			rec.Settings = s
			break
		}
	}
	enc, err := j.Meta(MetaEncryption)
	if err != nil {
		return rec, err
	}
	rec.Plaintext = enc == EncryptionPlaintext
	if enc == EncryptionAge {
		if rec.Recipients, _, err = j.Recipients(); err != nil {
			return rec, err
		}
	}
	return rec, nil
}
