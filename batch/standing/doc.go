// Package standing says how a batch stands, from its journal: its status
// now (rows per state, leases, throughput, what is left; `refbatch
// status`), its health for a monitor (complete, running, waiting or
// stalled; `status --check`), its history (timeline, runs, where the time
// went) and the report that gathers them (report.json and the text
// summary), which the write path writes at the end of a run and `refbatch
// report` builds again at any time. It only reads the journal, so it
// works while a run goes on, and it never imports the write path (batch).
package standing
