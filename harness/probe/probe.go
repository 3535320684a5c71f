// Package probe says whether a walker, or a JVM flag an episode may draw, can run on a JDK
// and this machine: first from what the walker registry knows of the JDK, then, for an
// in-process walker, by loading it in a JVM that only prints its version.
package probe

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"

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

// drawnCollectors are the collector flags an episode may draw that a HotSpot build may not
// run: ZGC is experimental before JDK 15 (JDK 11: "VM option 'UseZGC' is experimental and
// must be enabled via -XX:+UnlockExperimentalVMOptions"), and a vendor may leave Shenandoah
// or ZGC out of its build. Each is probed for real, once per JDK (flagRefusal).
var drawnCollectors = []string{"-XX:+UseZGC", "-XX:+UseShenandoahGC"}

var refusals sync.Map // JDK path + "\x00" + flag -> string ("" when the JVM starts with it)

// flagRefusal is why j's JVM does not start with flag (its first line of complaint), or "".
func flagRefusal(j jdk.JDK, flag string) string {
	if why, ok := zeroRefuses[flag]; ok && j.Zero() {
		return fmt.Sprintf("the Zero VM (JDK %s at %s) %s", j.Version, j.Path, why)
	}
	if !slices.Contains(drawnCollectors, flag) {
		return ""
	}
	key := j.Path + "\x00" + flag
	if v, ok := refusals.Load(key); ok {
		return v.(string)
	}
	var out bytes.Buffer
	cmd := exec.Command(j.Java(), flag, "-version")
	cmd.Stdout, cmd.Stderr = &out, &out
	why := ""
	var exit *exec.ExitError
	if err := cmd.Run(); errors.As(err, &exit) { // a java that cannot be started refuses nothing here: the run says why
		first, _, _ := strings.Cut(strings.TrimSpace(out.String()), "\n")
		why = fmt.Sprintf("JDK %s at %s does not start with %s (%s)", j.Version, j.Path, flag, strings.TrimSpace(first))
	}
	refusals.Store(key, why)
	return why
}

// RefusedFlags lists the JVM flags an episode may draw that j refuses: the Zero VM's, and
// the collectors its JVM does not start with.
func RefusedFlags(j jdk.JDK) []string {
	var out []string
	for _, f := range slices.Sorted(maps.Keys(zeroRefuses)) {
		if flagRefusal(j, f) != "" {
			out = append(out, f)
		}
	}
	for _, f := range drawnCollectors {
		if !slices.Contains(out, f) && flagRefusal(j, f) != "" {
			out = append(out, f)
		}
	}
	return out
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
		if why := flagRefusal(j, f); why != "" {
			return fmt.Errorf("unsupported: %s", why)
		}
	}
	return nil
}

// JDKFacts is what the walker registry judges a JDK by (harness/jdk reads it).
func JDKFacts(j jdk.JDK) walker.JDK { return j.WalkerFacts() }
