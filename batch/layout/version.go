package layout

import "runtime/debug"

// version is set at link time by the Makefile:
//
//	go build -ldflags "-X github.com/refbatch/refbatch/batch/layout.version=$(git describe --always --dirty)"
//
// A build without it (go build, go install) falls back to what the Go
// toolchain stamped into the binary.
var version string

// Version is refbatch's version as every artifact's provenance, every
// report and `refbatch version` record it: the one the build was given
// (make build: git describe), else the module version of a go install of
// a release, else "devel-" and the VCS revision the toolchain stamped
// (with "-dirty" for uncommitted changes), else "devel".
func Version() string {
	if version != "" {
		return version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "devel"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	return "devel-" + rev
}
