// Package probe says whether a walker, or a JVM flag an episode may draw, can run on a JDK
// and this machine: first from what the walker registry knows of the JDK, then, for an
// in-process walker, by loading it in a JVM that only prints its version.
package probe

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/walkfuzz/walkfuzz/harness/artifacts"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/outproc"
	"github.com/walkfuzz/walkfuzz/harness/walker"
)

// Walker says whether a walker can run on this machine and JDK; the error is the
// one-line reason ("unsupported: ..."). What the registry knows refuses first; in-process
// walkers are then probed for real: the agent initializes them in a JVM that only prints its
// version.
func Walker(j jdk.JDK, name string) error {
	if err := walker.UnsupportedErr(name, JDKFacts(j)); err != nil {
		return err
	}
	if handled, err := outproc.Probe(name, j); handled { // out-of-process: the session knows
		return err
	}
	art, err := artifacts.Locate()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "walkfuzz-probe")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	conf := fmt.Sprintf("log=%s\nwalkers=%s\n", filepath.Join(dir, "samples.bin"), name)
	if err := os.WriteFile(filepath.Join(dir, "agent.conf"), []byte(conf), 0o644); err != nil {
		return err
	}
	cmd := exec.Command(j.Java(), "-agentpath:"+art.Agent+"=config="+filepath.Join(dir, "agent.conf"), "-version")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if cmd.Run() == nil {
		return nil
	}
	for _, l := range strings.Split(stderr.String(), "\n") {
		if msg, ok := strings.CutPrefix(l, "walkfuzz agent: "); ok {
			if !strings.HasPrefix(msg, "unsupported") {
				msg = "unsupported: " + msg
			}
			return fmt.Errorf("%s", msg)
		}
	}
	return fmt.Errorf("unsupported: the JVM did not start with walker %s: %s", name, strings.TrimSpace(stderr.String()))
}

// zeroRefuses: JVM flags the Zero VM cannot run, and why (measured with Debian's
// openjdk-17-jre-zero: docs/jdk-builds.md); the walkers a JDK refuses say so in the walker
// registry (walker.Unsupported). It accepts the episodes' other flags.
var zeroRefuses = map[string]string{
	"-XX:+UseZGC": "has no ZGC (-XX:+UseZGC)",
}

// RefusedFlags lists the JVM flags an episode may draw that j refuses (the Zero VM's).
func RefusedFlags(j jdk.JDK) []string {
	if !j.Zero() {
		return nil
	}
	return slices.Sorted(maps.Keys(zeroRefuses))
}

// Unsupported names the first walker or JVM flag j refuses, as an "unsupported: " error.
func Unsupported(j jdk.JDK, walkers, flags []string) error {
	facts := JDKFacts(j)
	for _, w := range walkers {
		if err := walker.UnsupportedErr(w, facts); err != nil {
			return err
		}
	}
	for _, f := range flags {
		if why, ok := zeroRefuses[f]; ok && j.Zero() {
			return fmt.Errorf("unsupported: the Zero VM (JDK %s at %s) %s", j.Version, j.Path, why)
		}
	}
	return nil
}

// JDKFacts is what the walker registry judges a JDK by (harness/jdk reads it).
func JDKFacts(j jdk.JDK) walker.JDK { return j.WalkerFacts() }
