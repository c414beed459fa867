package main

import (
	"os"
	"slices"
	"strings"

	"filippo.io/age"
)

// The recipients a run encrypts to: from the flags or the environment,
// and the wording of a refusal when they are not the batch's.

// loadRecipients gathers age recipients from the flags (keys, file) or,
// when neither is given, from env, REFBATCH_RECIPIENTS's value (space or
// comma separated).
func loadRecipients(keys []string, env, file string) ([]age.Recipient, error) {
	if env != "" && len(keys) == 0 && file == "" {
		keys = strings.FieldsFunc(env, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' })
	}
	out, err := parseRecipients(keys)
	if err != nil {
		return nil, err
	}
	if file != "" {
		f, err := os.Open(file)
		if err != nil {
			return nil, usageErrf("", "reading recipients file: %w", err)
		}
		defer f.Close()
		rs, err := age.ParseRecipients(f)
		if err != nil {
			return nil, usageErrf("one age public key per line; # starts a comment", "recipients file %s: %w", file, err)
		}
		out = append(out, rs...)
	}
	return out, nil
}

// recipientsRefusal words run's refusal of recipients that are not the
// batch's: recorded are the batch's keys (none when it is plaintext, or its
// journal did not record them), given and added the run's, and whether the
// batch and the run encrypt.
func recipientsRefusal(recorded, given, added []string, batchEncrypts, runEncrypts bool) (msg, hint string) {
	keys := func(ks []string) string { return strings.Join(ks, ", ") }
	switch {
	case batchEncrypts && !runEncrypts:
		msg = "this batch's artifacts are encrypted; --plaintext would write plaintext ones beside them"
		hint = "rerun with the recipients of its first run, or use a new --out for plaintext artifacts"
		if len(recorded) > 0 {
			hint = "this batch encrypts to " + keys(recorded) + "; rerun with the same recipients, or use a new --out for plaintext artifacts"
		}
		return msg, hint
	case !batchEncrypts:
		return "this batch's artifacts are plaintext; this run would write encrypted ones beside them",
			"rerun with --plaintext, or use a new --out for encrypted artifacts (--add-recipient does not encrypt a plaintext batch)"
	}
	var unknown, missing []string
	for _, k := range given {
		if !slices.Contains(recorded, k) && !slices.Contains(added, k) {
			unknown = append(unknown, k)
		}
	}
	for _, k := range recorded {
		if len(added) == 0 && !slices.Contains(given, k) {
			missing = append(missing, k)
		}
	}
	var parts []string
	if len(unknown) > 0 {
		parts = append(parts, keys(unknown)+" not recorded for this batch")
	}
	if len(missing) > 0 {
		parts = append(parts, keys(missing)+" not given")
	}
	msg = "this run's recipients are not this batch's: " + strings.Join(parts, ", ")
	hint = "this batch encrypts to " + keys(recorded) + "; rerun with the same recipients, or add --add-recipient KEY to extend it deliberately"
	return msg, hint
}

// parseRecipients parses age public keys given as flags.
func parseRecipients(keys []string) ([]age.Recipient, error) {
	var out []age.Recipient
	for _, k := range keys {
		r, err := age.ParseX25519Recipient(strings.TrimSpace(k))
		if err != nil {
			return nil, usageErrf("a recipient is an age public key (age1...), as printed by `refbatch keygen`", "bad recipient: %w", err)
		}
		out = append(out, r)
	}
	return out, nil
}
