package standing

import (
	"slices"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/manifest"
)

// stdinRows is the rows of the manifest the batch's latest run of "-"
// read from its standard input, as that run recorded them; -1 when none
// did (a process other than that run cannot read the manifest).
func stdinRows(j *journal.Journal) int {
	runs, err := j.Runs()
	if err != nil {
		return -1
	}
	for _, r := range slices.Backward(runs) {
		if rec, ok := layout.DecodeRun(r.Settings); ok && rec.Manifest == manifest.Stdin && rec.StdinSHA256 != "" {
			return rec.StdinRows
		}
	}
	return -1
}

// manifestRows is the rows of the manifest at path as status counts them:
// the file's now, or those the run of "-" recorded; -1 when unknown.
func manifestRows(j *journal.Journal, path string) int {
	if path == manifest.Stdin {
		return stdinRows(j)
	}
	n, _ := countManifestRows(path)
	return n
}
