package batch

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"filippo.io/age"

	"github.com/refbatch/refbatch/batch/audit"
	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/layout"
)

// TestRecipientsPinned: the first run records its recipient; a run with
// another is refused before it writes anything; --add-recipient extends
// the set, and the artifacts written after it decrypt with either key,
// those before only with the first; a plaintext run is refused.
func TestRecipientsPinned(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	k1, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	k2, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	samples := tinySamples(t)
	manifest := func(s sampleRow) string {
		return writeManifest(t, dir, [][4]string{{s.sourceID, s.path, s.participantID, s.date}})
	}
	run := func(m string, given, added []age.Recipient) (*Result, error) {
		o := testOptions(t, m, out, "")
		o.Plaintext, o.Recipients, o.AddRecipients = false, given, added
		return Run(context.Background(), o)
	}
	a, b := samples[0], samples[1]
	if _, err := run(manifest(a), []age.Recipient{k1.Recipient()}, nil); err != nil {
		t.Fatal(err)
	}

	mb := manifest(b)
	_, err = run(mb, []age.Recipient{k2.Recipient()}, nil)
	var re *journal.RecipientsError
	if !errors.As(err, &re) || !slices.Equal(re.Recorded, []string{k1.Recipient().String()}) {
		t.Fatalf("a run with another recipient: %v, want a *journal.RecipientsError naming %s", err, k1.Recipient())
	}
	if _, err := audit.Show(context.Background(), layout.Place{Out: out}, b.sourceID, []age.Identity{k1}); !errors.Is(err, layout.ErrNotFound) {
		t.Errorf("the refused run read %s: %v", b.sourceID, err)
	}

	res, err := run(mb, nil, []age.Recipient{k2.Recipient()})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{k1.Recipient().String(), k2.Recipient().String()}
	sort.Strings(want)
	if got := res.Report.Run.Recipients; !slices.Equal(got, want) {
		t.Errorf("report lists recipients %v, want %v", got, want)
	}
	for _, c := range []struct {
		source string
		id     *age.X25519Identity
		reads  bool
	}{{a.sourceID, k1, true}, {a.sourceID, k2, false}, {b.sourceID, k1, true}, {b.sourceID, k2, true}} {
		if _, err := audit.Show(context.Background(), layout.Place{Out: out}, c.source, []age.Identity{c.id}); (err == nil) != c.reads {
			t.Errorf("%s with identity %s: %v, want it read %v", c.source, c.id.Recipient(), err, c.reads)
		}
	}

	o := testOptions(t, mb, out, "")
	var ece *EncryptionChoiceError
	if _, err := Run(context.Background(), o); !errors.As(err, &ece) || !ece.Encrypted() || !slices.Equal(ece.Recipients, want) {
		t.Errorf("a plaintext run into the encrypted batch: %v, want an *EncryptionChoiceError naming %v", err, want)
	}
}
