package journal

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
)

// TestPinRecipients: the first run records its set; a later run must give
// the same one, or add to it deliberately; plaintext and encrypted never
// mix; a refusal writes nothing.
func TestPinRecipients(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		const k1, k2, k3 = "age1one", "age1two", "age1three"
		type step struct {
			given, added []string
			want         []string // the set the run encrypts to; nil: refused
			event        EventKind
		}
		tests := []struct {
			name  string
			steps []step
		}{
			{"the first run records its set, sorted and deduplicated", []step{
				{given: []string{k2, k1, k2}, want: []string{k1, k2}, event: EventRecipients},
				{given: []string{k1, k2}, want: []string{k1, k2}},
				{given: []string{k2, " " + k1}, want: []string{k1, k2}},
			}},
			{"another key is refused", []step{
				{given: []string{k1}, want: []string{k1}, event: EventRecipients},
				{given: []string{k2}},
				{given: []string{k1, k2}},
				{given: []string{k1}, want: []string{k1}},
			}},
			{"a subset is refused", []step{
				{given: []string{k1, k2}, want: []string{k1, k2}, event: EventRecipients},
				{given: []string{k1}},
			}},
			{"added keys extend the set, once", []step{
				{given: []string{k1}, want: []string{k1}, event: EventRecipients},
				{added: []string{k2}, want: []string{k1, k2}, event: EventRecipientsAdded},
				{given: []string{k1}, added: []string{k2}, want: []string{k1, k2}},
				{given: []string{k1, k2}, want: []string{k1, k2}},
				{given: []string{k3}, added: []string{k1}},
				{given: []string{k2}, added: []string{k3}, want: []string{k1, k3, k2}, event: EventRecipientsAdded},
			}},
			{"added keys on a new batch are its set", []step{
				{given: []string{k1}, added: []string{k2}, want: []string{k1, k2}, event: EventRecipients},
			}},
			{"plaintext stays plaintext", []step{
				{want: []string{}, event: EventRecipients},
				{want: []string{}},
				{given: []string{k1}},
				{added: []string{k1}},
			}},
			{"encrypted stays encrypted", []step{
				{given: []string{k1}, want: []string{k1}, event: EventRecipients},
				{},
			}},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				j := be.open(t)
				var events []Event
				for i, s := range tc.steps {
					before, _, _ := j.Recipients()
					got, err := j.PinRecipients(s.given, s.added)
					var re *RecipientsError
					switch {
					case s.want == nil && !errors.As(err, &re):
						t.Fatalf("step %d: %v, %v; want a *RecipientsError", i, got, err)
					case s.want == nil:
						if after, _, _ := j.Recipients(); !slices.Equal(after, before) {
							t.Errorf("step %d: refused, but the set went from %v to %v", i, before, after)
						}
					case err != nil || !slices.Equal(got, s.want):
						t.Fatalf("step %d: %v, %v; want %v", i, got, err, s.want)
					}
					if s.event != "" {
						events = append(events, Event{Kind: s.event})
					}
				}
				var recorded []Event
				j.Events(func(e Event) error { recorded = append(recorded, e); return nil }, EventRecipients, EventRecipientsAdded)
				if len(recorded) != len(events) {
					t.Fatalf("%d events, want %d: %+v", len(recorded), len(events), recorded)
				}
				for i, e := range recorded {
					if e.Kind != events[i].Kind || e.DocID != 0 || e.Line != 0 {
						t.Errorf("event %d: %+v, want kind %s about no row", i, e, events[i].Kind)
					}
				}
			})
		}
	})
}

// TestRecipientsEvents: the events hold the set that resulted, and the
// keys added; Recipients tells a plaintext batch from an unrecorded one.
func TestRecipientsEvents(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		j := be.open(t)
		if keys, ok, err := j.Recipients(); err != nil || ok || keys != nil {
			t.Fatalf("new journal: %v %v %v, want nothing recorded", keys, ok, err)
		}
		if _, err := j.PinRecipients([]string{"age1b"}, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := j.PinRecipients(nil, []string{"age1a", "age1b"}); err != nil {
			t.Fatal(err)
		}
		type data struct {
			Added      []string `json:"added"`
			Recipients []string `json:"recipients"`
		}
		var got []data
		j.Events(func(e Event) error {
			var d data
			if err := json.Unmarshal(e.Data, &d); err != nil {
				t.Fatal(err)
			}
			got = append(got, d)
			return nil
		}, EventRecipients, EventRecipientsAdded)
		want := []data{{nil, []string{"age1b"}}, {[]string{"age1a"}, []string{"age1a", "age1b"}}}
		if len(got) != 2 || !slices.Equal(got[0].Added, want[0].Added) || !slices.Equal(got[0].Recipients, want[0].Recipients) ||
			!slices.Equal(got[1].Added, want[1].Added) || !slices.Equal(got[1].Recipients, want[1].Recipients) {
			t.Errorf("events %+v, want %+v", got, want)
		}

		p := be.open(t)
		if _, err := p.PinRecipients(nil, nil); err != nil {
			t.Fatal(err)
		}
		if keys, ok, err := p.Recipients(); err != nil || !ok || keys == nil || len(keys) != 0 {
			t.Errorf("plaintext batch: %v %v %v, want an empty set, recorded", keys, ok, err)
		}
	})
}
