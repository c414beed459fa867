package export

// The child side of a Renderer: ServeMain, and the faults tests inject.

import (
	"fmt"
	"os"
	"strings"

	"github.com/refbatch/refbatch/ocr/child"
)

// FaultsEnv names the environment variable that injects faults into the
// export's PDF children, for tests only: the child reads it, the parent
// passes it through, and production never sets it.
//
// The value is a list of kind=key entries separated by semicolons; a key
// is a prefix of 8 or more lowercase hex digits of a document's source
// SHA-256 (as the journal records it), or * for every document:
//
//	crash=3f2a9c01  the child kills itself with SIGSEGV on the document
//	hang=3f2a9c01   the child blocks forever on the document, using no CPU
//	alloc=3f2a9c01  the child allocates and touches memory without bound
//
// A malformed value makes the child fail to start, so a typo is loud.
const FaultsEnv = "REFBATCH_TEST_EXPORT_FAULTS"

// ServeMain is the export child's entry point, called by the binary's
// hidden export command. It returns the process exit code: 0 when the
// parent closed the request pipe, 1 on a failure, 2 when the command was
// run by hand.
func ServeMain() int {
	return child.ExitCode("refbatch export child", child.ServeMain(serveSetup, serveRender))
}

// faults are the faults the child was started with: key → kind.
var faults map[string]string

func serveSetup(s child.Setup) (struct{}, error) {
	f, err := parseFaults(os.Getenv(FaultsEnv))
	if err != nil {
		return struct{}{}, err
	}
	faults = f
	return struct{}{}, s.Apply()
}

func serveRender(req renderRequest) renderReply {
	child.BeginCall(req.Memory)
	defer child.EndCall()
	injectFault(req.Meta.SourceSHA256)
	var rep renderReply
	r, err := searchable(req.Source, req.Pages, req.Meta, req.PDF)
	rep.PDF, rep.Frames, rep.NotPDFA, rep.Straightened = r.PDF, r.Frames, r.NotPDFA, r.Straightened
	if err != nil {
		return renderReply{Err: Redacted(err)}
	}
	return rep
}

func parseFaults(s string) (map[string]string, error) {
	f := map[string]string{}
	for entry := range strings.SplitSeq(s, ";") {
		if entry = strings.TrimSpace(entry); entry == "" {
			continue
		}
		kind, key, _ := strings.Cut(entry, "=")
		if kind != "crash" && kind != "hang" && kind != "alloc" || !validKey(key) {
			return nil, fmt.Errorf("parsing %s entry %q: want crash, hang or alloc = the key * or 8 to 64 lowercase hex digits of a source's SHA-256", FaultsEnv, entry)
		}
		f[key] = kind
	}
	return f, nil
}

func validKey(key string) bool {
	if key == "*" {
		return true
	}
	if len(key) < 8 || len(key) > 64 {
		return false
	}
	return strings.Trim(key, "0123456789abcdef") == ""
}

// injectFault applies the fault set for the source with hash sum, if
// any; none of them returns.
func injectFault(sum string) {
	kind := faults["*"]
	for k, v := range faults {
		if k != "*" && strings.HasPrefix(sum, k) {
			kind = v
		}
	}
	child.Misbehave(child.Fault(kind))
}
