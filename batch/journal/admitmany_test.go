package journal

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// admitManyRows are rows of every kind admission tells apart: new,
// recorded before, a duplicate and a conflict of a document recorded
// before, and of one the same batch makes.
func admitManyRows() (before, batch []Admission) {
	row := func(line int, source, sha string) Admission {
		return Admission{Manifest: "/archive/m.csv", Line: line, SourceID: source, SHA256: sha,
			Path: "/archive/" + source + ".pdf", Size: 1000 + int64(line), Pages: 1 + line%3, Fields: fmt.Sprintf(`{"line":"%d"}`, line)}
	}
	before = []Admission{row(2, "S1", "a1"), row(3, "S2", "b2")}
	// The first of the batch a duplicate: what is decided of a row is
	// never taken from a zero value (its index 0).
	batch = []Admission{row(4, "S1", "a1"), row(3, "S2", "b2"), row(5, "S2", "xx"), row(6, "S3", "c3"), row(7, "S3", "c3"),
		row(8, "S4", "d4"), row(9, "S4", "yy"), row(10, "S5", "e5")}
	return before, batch
}

// TestAdmitManyAsAdmit: AdmitMany records every kind of row as Admit
// does it one by one (statuses, events), and the log it writes checks.
func TestAdmitManyAsAdmit(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		t.Parallel()
		before, batch := admitManyRows()
		at := time.UnixMilli(1_700_000_000_000)
		clock := func() time.Time { return at }
		one, many := be.open(t, WithClock(clock)), be.open(t, WithClock(clock))
		for _, j := range []*Journal{one, many} {
			for _, a := range before {
				if _, err := j.Admit(a); err != nil {
					t.Fatal(err)
				}
			}
		}
		var want []RowStatus
		for _, a := range batch {
			st, err := one.Admit(a)
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, st)
		}
		got, err := many.AdmitMany(batch)
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("line %d: AdmitMany %+v, Admit %+v", batch[i].Line, got[i], want[i])
			}
		}
		type ev struct {
			kind     EventKind
			line     int
			doc      int64
			sourceID string
		}
		events := func(j *Journal) []ev {
			var out []ev
			if err := j.Events(func(e Event) error { out = append(out, ev{e.Kind, e.Line, e.DocID, e.SourceID}); return nil }); err != nil {
				t.Fatal(err)
			}
			return out
		}
		if a, b := fmt.Sprint(events(many)), fmt.Sprint(events(one)); a != b {
			t.Errorf("events of AdmitMany:\n%s\nof Admit:\n%s", a, b)
		}
		for _, j := range []*Journal{one, many} {
			c, err := j.CheckChain()
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Problems) != 0 || c.Pending != 0 {
				t.Errorf("chain: %d pending, problems %+v", c.Pending, c.Problems)
			}
		}
	})
}

// TestAdmitManyRace: two handles (two processes) admitting the same
// manifest at once, in batches that overlap, record each row once and
// make each document once, and the log checks.
func TestAdmitManyRace(t *testing.T) {
	const rows = 700
	eachBackend(t, func(t *testing.T, be backend) {
		t.Parallel()
		loc := be.location(t)
		js := make([]*Journal, 2)
		for i := range js {
			j, err := Open(loc)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { j.Close() })
			js[i] = j
		}
		var all []Admission
		for line := 2; line < rows+2; line++ {
			all = append(all, benchAdmission(line))
		}
		var wg sync.WaitGroup
		for k, j := range js {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Batches of 50 and of 64: their bounds differ, so that
				// each waits for lines of the other's batch.
				size := 50 + 14*k
				for start := 0; start < len(all); start += size {
					sts, err := j.AdmitMany(all[start:min(start+size, len(all))])
					if err != nil {
						t.Error(err)
						return
					}
					for i, st := range sts {
						if st.DocID == 0 || st.SourceID != all[start+i].SourceID {
							t.Errorf("line %d: status %+v", all[start+i].Line, st)
						}
					}
				}
			}()
		}
		wg.Wait()
		for _, j := range js {
			j.settle()
		}
		var nRows, nDocs, nEvents int
		for q, n := range map[string]*int{`SELECT COUNT(*) FROM rows`: &nRows, `SELECT COUNT(*) FROM documents`: &nDocs,
			`SELECT COUNT(*) FROM events WHERE kind='row_admitted'`: &nEvents} {
			if err := js[0].db.QueryRow(q).Scan(n); err != nil {
				t.Fatal(err)
			}
		}
		if nRows != rows || nDocs != rows || nEvents != rows {
			t.Errorf("%d rows, %d documents, %d row_admitted events; want %d each", nRows, nDocs, nEvents, rows)
		}
		c, err := js[0].CheckChain()
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Problems) != 0 {
			t.Errorf("chain: problems %+v", c.Problems)
		}
	})
}
