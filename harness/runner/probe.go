package runner

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

// ProbeWalker says whether a walker can run on this machine and JDK; the error is the
// one-line reason ("unsupported: ..."). In-process walkers are probed for real: the agent
// initializes them in a JVM that only prints its version.
func ProbeWalker(j jdk.JDK, name string) error {
	if err := zeroUnsupported(j, []string{name}); err != nil {
		return err
	}
	if handled, err := outproc.Probe(name, j); handled { // out-of-process: the session knows
		return err
	}
	if name == walker.ASGCT && !j.HasASGCT {
		return fmt.Errorf("unsupported: JDK %s does not export AsyncGetCallTrace", j.Version)
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
	conf := fmt.Sprintf("log=%s\nwalkers=%s\n", filepath.Join(dir, SampleLog), name)
	if err := os.WriteFile(filepath.Join(dir, AgentConf), []byte(conf), 0o644); err != nil {
		return err
	}
	cmd := exec.Command(j.Java(), "-agentpath:"+art.Agent+"=config="+filepath.Join(dir, AgentConf), "-version")
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
// openjdk-17-jre-zero: docs/jdk-builds.md); the walkers it refuses say so in the walker
// registry (walker.ZeroVMRefuses). It accepts the episodes' other flags.
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

// zeroUnsupported names the first walker or JVM flag the Zero VM refuses.
func zeroUnsupported(j jdk.JDK, walkersAndFlags ...[]string) error {
	if !j.Zero() {
		return nil
	}
	for _, list := range walkersAndFlags {
		for _, w := range list {
			why, ok := zeroRefuses[w]
			if !ok {
				why, ok = walker.ZeroVMRefuses(w)
			}
			if ok {
				return fmt.Errorf("unsupported: the Zero VM (JDK %s at %s) %s", j.Version, j.Path, why)
			}
		}
	}
	return nil
}
