// Package handover is `refbatch export`: the deliberate plaintext
// hand-over of a batch's text to a folder outside it. It owns the
// orchestration: which documents go, each verified as audit verifies it
// (artifact against the journal, content hash, provenance, source
// re-hashed) before anything of it is written; the destination, opened
// so that it can never be inside the output folder; the files, written
// through temp files and renamed; and, when asked, a BagIt bag that
// carries the batch's report.
// batch/export owns the formats (searchable PDF, ALTO, text) and renders
// them; handover never imports the write path (batch).
package handover
