package main

import (
	"strings"
	"testing"
)

// TestDidYouMean: a mistyped command or flag is a usage error (exit 2)
// that names what was meant; bare refbatch prints the short help on
// stderr and exits 2.
func TestDidYouMean(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"exprot"}, "did you mean refbatch export?"},
		{[]string{"run", "--worker", "2", "m.csv"}, "did you mean --workers?"},
		{[]string{"verify", "--identiy", "x"}, "did you mean --identity?"},
		{nil, "COMMANDS:"},
	} {
		r := refbatch(t, nil, tc.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) || r.stdout != "" {
			t.Errorf("refbatch %s: exit %d, want 2 saying %q on stderr\n%s%s", strings.Join(tc.args, " "), r.code, tc.want, r.stdout, r.stderr)
		}
	}
	if got := closest("xyzzy", []string{"run", "export"}); got != "" {
		t.Errorf("closest(xyzzy) = %q, want nothing: no command is near", got)
	}
}
