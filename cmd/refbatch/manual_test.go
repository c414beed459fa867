package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/refbatch/refbatch/report/outcome"
)

// helpIn runs `refbatch help ARGS...` in this process: what help prints
// needs no binary.
func helpIn(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(append([]string{"refbatch", "help"}, args...), &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestHelpTopics: `refbatch help TOPIC` prints each topic, its first
// heading in capitals and its code blocks indented, without markdown's
// fences; `refbatch help` lists the topics; a name that is neither a
// command nor a topic is a usage error naming the topics.
func TestHelpTopics(t *testing.T) {
	t.Parallel()
	if len(topics()) < 10 {
		t.Fatalf("%d topics, want the manual's ten or more", len(topics()))
	}
	_, list, _ := helpIn(t)
	app := newApp(io.Discard, io.Discard)
	for _, tp := range topics() {
		if !strings.Contains(list, tp.name) {
			t.Errorf("refbatch help does not list the topic %s", tp.name)
		}
		if topicSummaries[tp.name] == "" {
			t.Errorf("the topic %s has no summary in topicSummaries", tp.name)
		}
		code, out, errOut := helpIn(t, tp.name)
		if code != 0 {
			t.Errorf("help %s: exit %d\n%s", tp.name, code, errOut)
			continue
		}
		if app.Command(tp.name) != nil {
			// A command of the same name (manifest) comes first, then the topic.
			if !strings.Contains(out, "\n"+strings.ToUpper(tp.title)+"\n") {
				t.Errorf("help %s does not show the topic after the command", tp.name)
			}
		} else if !strings.HasPrefix(out, strings.ToUpper(tp.title)+"\n") {
			t.Errorf("help %s starts %.80q, want its title in capitals", tp.name, out)
		}
		if strings.Contains(out, "```") {
			t.Errorf("help %s shows markdown's code fences", tp.name)
		}
	}
	// help COMMAND is the command's help, then its reference.
	if code, out, _ := helpIn(t, "run"); code != 0 || !strings.Contains(out, "refbatch run - ") || !strings.Contains(out, "\nDETAILS:\n") || !strings.Contains(out, "Rerunning after fixes") {
		t.Errorf("help run: exit %d\n%s", code, out)
	}
	code, _, errOut := helpIn(t, "no-such-topic")
	if code != exitUsage || !strings.Contains(errOut, `no command or topic "no-such-topic"`) || !strings.Contains(errOut, "outcomes") {
		t.Errorf("help no-such-topic: exit %d\n%s", code, errOut)
	}
}

// TestManualAgrees: the README, help and the man pages agree. Every
// command help lists is in the README's command list and has a man page
// and (but version and completion) a reference with an example;
// every state, reason code and band a row can end in is in `refbatch help
// outcomes` and in refbatch-outcomes(7); every topic is named in the
// README.
func TestManualAgrees(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	app := newApp(io.Discard, io.Discard)
	if err := writeManPages(app, dir, dir); err != nil {
		t.Fatal(err)
	}
	for _, c := range manCommands(app.VisibleCommands()) {
		if !regexp.MustCompile("`refbatch " + c.Name + "\\b").Match(readme) {
			t.Errorf("the README's command list lacks refbatch %s", c.Name)
		}
		if _, err := os.Stat(filepath.Join(dir, "refbatch-"+c.Name+".1")); err != nil {
			t.Errorf("refbatch %s has no man page: %v", c.Name, err)
		}
		if ref, ok := reference(c.Name); !strings.Contains(ref, "```") && c.Name != "version" && c.Name != "completion" {
			t.Errorf("refbatch %s has no example in its reference (commands/%s.md, %v)", c.Name, c.Name, ok)
		}
	}
	for _, tp := range topics() {
		if !strings.Contains(string(readme), "refbatch help "+tp.name) {
			t.Errorf("the README does not point to refbatch help %s", tp.name)
		}
	}
	_, help, _ := helpIn(t, "outcomes")
	page, err := os.ReadFile(filepath.Join(dir, "refbatch-outcomes.7"))
	if err != nil {
		t.Fatal(err)
	}
	codes := []string{}
	for _, st := range outcome.States() {
		if st.Final() {
			codes = append(codes, string(st))
		}
	}
	for _, r := range outcome.Reasons() {
		codes = append(codes, string(r))
	}
	for _, b := range outcome.Bands() {
		codes = append(codes, string(b))
	}
	for _, code := range codes {
		if !strings.Contains(help, "`"+code+"`") {
			t.Errorf("refbatch help outcomes lacks %s", code)
		}
		if !strings.Contains(string(page), `\fB`+strings.ReplaceAll(code, "-", `\-`)+`\fR`) {
			t.Errorf("refbatch-outcomes(7) lacks %s", code)
		}
	}
}
