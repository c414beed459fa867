// Package review is what a person does about the documents refbatch
// could not settle alone: it lists the documents in review and the
// rejected rows that need a person, records their decisions (accept,
// reject, retry under another page policy or validation settings,
// dismiss), records the text they type for a region refbatch could not
// read (Transcribe, which publishes the artifact again with it), and
// gives the desk its data (DeskQueue, DeskDocument, DeskSource). It writes
// only a person's acts to the journal, each in one transaction; the next
// run acts on a retry (batch reads the policy it recorded). It never
// imports the write path (batch).
package review
