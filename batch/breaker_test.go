package batch

import "testing"

// TestBreakerRearms: the breaker asks for one probe at a time, and after a
// probe, passed or failed, it asks again when documents keep failing: a
// good probe forgets the failures counted so far, it does not disarm the
// breaker for the rest of the run.
func TestBreakerRearms(t *testing.T) {
	var b breaker
	fail := func(from int64) (probes int) {
		for id := from; id < from+breakerThreshold; id++ {
			n, p := b.failed(id)
			if p {
				probes++
				if n != breakerThreshold {
					t.Errorf("a probe asked for after %d documents, want %d", n, breakerThreshold)
				}
			}
		}
		return probes
	}
	if got := fail(0); got != 1 {
		t.Fatalf("%d probes asked for after %d failing documents, want 1", got, breakerThreshold)
	}
	if _, p := b.failed(100); p {
		t.Error("a second probe asked for while the first runs")
	}
	b.probed(true)
	if n, p := b.failed(200); n != 1 || p {
		t.Errorf("after a good probe: %d failing documents, probe %v; want the count to start again", n, p)
	}
	if got := fail(300); got != 1 {
		t.Errorf("after a good probe, %d probes asked for when documents keep failing, want 1: the breaker did not re-arm", got)
	}
	b.probed(false)
	if _, p := b.failed(400); !p {
		t.Error("after a failed probe, the next failure asks for no probe")
	}
	b.probed(true)
	b.ok()
	if n, _ := b.failed(500); n != 1 {
		t.Errorf("after a success, %d failing documents, want 1", n)
	}
}
