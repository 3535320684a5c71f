// Package buildinfo says which walkfuzz build is running: its module version and git commit,
// stamped by the Makefile with -ldflags -X, so findings, stores and corpora can name the
// build that produced them and `git bisect` can tell builds apart.
package buildinfo

import (
	"runtime/debug"
	"strings"
)

// Set by `make bin/walkfuzz`:
//
//	-X github.com/walkfuzz/walkfuzz/harness/buildinfo.version=v0.0.0-…
//	-X github.com/walkfuzz/walkfuzz/harness/buildinfo.commit=9367cf5
//	-X github.com/walkfuzz/walkfuzz/harness/buildinfo.describe=9367cf5-dirty
var version, commit, describe string

// Info is one build's identity.
type Info struct {
	Version string `json:"version"` // the module version, "(devel)" for a checkout
	Commit  string `json:"commit"`  // short hash, "unknown" outside a git checkout
	Dirty   bool   `json:"dirty"`   // built from a tree with uncommitted changes
}

// Current is the running binary's identity: the -ldflags stamp, else what the Go toolchain
// recorded (go build in a checkout records vcs.revision; go test and go run do not).
func Current() Info {
	i := Info{Version: version, Commit: commit, Dirty: strings.HasSuffix(describe, "-dirty")}
	bi, ok := debug.ReadBuildInfo()
	if i.Version == "" && ok {
		i.Version = bi.Main.Version
	}
	if i.Commit == "" && ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				i.Commit = s.Value[:min(len(s.Value), 7)]
			case "vcs.modified":
				i.Dirty = s.Value == "true"
			}
		}
	}
	if i.Version == "" {
		i.Version = "(devel)"
	}
	if i.Commit == "" {
		i.Commit = "unknown"
	}
	return i
}

// String is the one-word form recorded beside every finding: "9367cf5", "9367cf5-dirty",
// or "unknown".
func (i Info) String() string {
	if i.Dirty {
		return i.Commit + "-dirty"
	}
	return i.Commit
}
