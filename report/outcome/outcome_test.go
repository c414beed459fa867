package outcome

import (
	"regexp"
	"testing"
)

var code = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// TestVocabulary: every code is snake_case and declared once across
// states, reasons, causes and bands (a value shared by two kinds would
// read two ways in the journal), and every reason leads to a final state
// that needs a reason.
func TestVocabulary(t *testing.T) {
	seen := map[string]string{}
	add := func(kind, v string) {
		t.Helper()
		if !code.MatchString(v) {
			t.Errorf("%s %q is not snake_case", kind, v)
		}
		if k, dup := seen[v]; dup {
			t.Errorf("%s %q is also a %s", kind, v, k)
		}
		seen[v] = kind
	}
	for _, s := range States() {
		add("state", string(s))
	}
	for _, r := range Reasons() {
		add("reason", string(r))
	}
	for _, c := range Causes() {
		add("cause", string(c))
	}
	for _, b := range Bands() {
		add("band", string(b))
	}
	if n := len(Reasons()); n != 28 {
		t.Errorf("%d reasons, want 28 (a new one needs its row in the outcomes topic and report text)", n)
	}
	for _, r := range Reasons() {
		st := r.State()
		if st != Review && st != Rejected {
			t.Errorf("reason %s leads to state %q, want review or rejected", r, st)
		}
		if r.NeedsPerson() == r.Permanent() {
			t.Errorf("reason %s: NeedsPerson %v, Permanent %v: exactly one must hold", r, r.NeedsPerson(), r.Permanent())
		}
	}
	if st := Reason("no_such_reason").State(); st != "" {
		t.Errorf("an unknown reason leads to %q, want none", st)
	}
}

func TestStates(t *testing.T) {
	final := map[State]bool{Done: true, Review: true, Rejected: true, Duplicate: true, Queued: false, "": false, "running": false}
	for s, want := range final {
		if s.Final() != want {
			t.Errorf("%q.Final() = %v, want %v", s, s.Final(), want)
		}
	}
	if got := States(); len(got) != 5 || got[0] != Done || got[4] != Queued {
		t.Errorf("States() = %v, want done first and queued last", got)
	}
}

func TestReasonStates(t *testing.T) {
	for _, tt := range []struct {
		reason Reason
		state  State
	}{
		{MissingField, Rejected}, {PageTooLarge, Rejected}, {MalformedPDF, Rejected}, {Conflict, Rejected},
		{EmptyText, Review}, {IDNotFound, Review}, {Timeout, Review}, {RenderError, Review}, {AttemptsExhausted, Review},
	} {
		if got := tt.reason.State(); got != tt.state {
			t.Errorf("%s.State() = %s, want %s", tt.reason, got, tt.state)
		}
	}
}

func TestCauses(t *testing.T) {
	for _, tt := range []struct {
		cause     Cause
		transient bool
	}{
		{CauseCrash, true}, {CauseOOM, true}, {CauseTransient, true}, {CauseIO, true}, {CauseSourceChanged, true},
		{CauseLeaseExpired, false}, {CauseOwnerDied, false}, {"", false},
	} {
		if got := tt.cause.Transient(); got != tt.transient {
			t.Errorf("%q.Transient() = %v, want %v", tt.cause, got, tt.transient)
		}
	}
}

// TestOpen: the one count behind run's exit 4. Every row in review is
// open, dismissed or not; a rejected row is open unless a person
// dismissed it or its reason asks nothing of anyone; done and queued rows
// never are.
func TestOpen(t *testing.T) {
	for _, tc := range []struct {
		state     State
		reason    Reason
		dismissed bool
		want      bool
	}{
		{Review, LowConfidence, false, true},
		{Review, LowConfidence, true, true},
		{Rejected, MissingFile, false, true},
		{Rejected, MissingFile, true, false},
		{Rejected, NoConsent, false, false},
		{Rejected, RejectedByPerson, false, false},
		{Done, "", false, false},
		{Queued, "", false, false},
	} {
		if got := Open(tc.state, tc.reason, tc.dismissed); got != tc.want {
			t.Errorf("Open(%s, %q, dismissed %v) = %v, want %v", tc.state, tc.reason, tc.dismissed, got, tc.want)
		}
	}
}
