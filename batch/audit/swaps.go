package audit

// This file turns verify's hash mismatches into the finding that names
// the fault: two artifacts swapped are one finding, not two mismatches.

// hashMismatch is an artifact whose bytes (got) are not those the journal
// recorded for it (want).
type hashMismatch struct{ file, got, want string }

// foldSwaps replaces, in findings, each pair of hash mismatches whose
// artifacts hold each other's recorded bytes with one artifacts_swapped
// finding naming both: the fault is one swap, not two alterations.
func foldSwaps(findings []Finding, ms []hashMismatch) []Finding {
	byWant := map[string]hashMismatch{}
	for _, m := range ms {
		byWant[m.want] = m
	}
	swapped := map[string]string{} // file: the file it was swapped with
	for _, m := range ms {
		o, ok := byWant[m.got]
		if ok && o.got == m.want && o.file != m.file && swapped[m.file] == "" && swapped[o.file] == "" {
			swapped[m.file], swapped[o.file] = o.file, m.file
		}
	}
	if len(swapped) == 0 {
		return findings
	}
	sources := map[string]string{}
	for _, f := range findings {
		if f.Kind == FindingArtifactHash {
			sources[f.File] = f.SourceID
		}
	}
	var out []Finding
	for _, f := range findings {
		other, ok := swapped[f.File]
		switch {
		case !ok || f.Kind != FindingArtifactHash:
			out = append(out, f)
		case f.File < other:
			out = append(out, Finding{Kind: FindingArtifactsSwapped, File: f.File, SourceID: f.SourceID,
				OtherFile: other, OtherSourceID: sources[other], Detail: "each holds the bytes the journal recorded for the other"})
		}
	}
	return out
}
