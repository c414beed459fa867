// Package audit checks a batch and hands out its artifacts, without
// changing it: Verify checks the journal, its custody log (against a
// pinned root or a root log), the output folder's marker, every artifact
// and, when asked, every source against each other and names what it
// finds; Show and ReadArtifacts give an artifact only once its bytes match
// the journal and its text its content hash. It opens the journal
// read-only, so it works while a run goes on, and it never imports the
// write path (batch): what it reads is layout's.
package audit
