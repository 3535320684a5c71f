package runner

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/walkfuzz/walkfuzz/harness/artifacts"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/walkers/ebpf"
)

// ProbeWalker says whether a walker can run on this machine and JDK; the error is the
// one-line reason ("unsupported: ..."). In-process walkers are probed for real: the agent
// initializes them in a JVM that only prints its version.
func ProbeWalker(j jdk.JDK, walker string) error {
	switch walker {
	case EBPF:
		return ebpf.Probe()
	case JFR:
		if _, err := os.Stat(j.Tool("jfr")); err != nil {
			return fmt.Errorf("unsupported: JDK %s has no jfr tool to read recordings", j.Version)
		}
		return nil
	case "asgct":
		if !j.HasASGCT {
			return fmt.Errorf("unsupported: JDK %s does not export AsyncGetCallTrace", j.Version)
		}
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
	conf := fmt.Sprintf("log=%s\nwalkers=%s\n", filepath.Join(dir, SampleLog), walker)
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
	return fmt.Errorf("unsupported: the JVM did not start with walker %s: %s", walker, strings.TrimSpace(stderr.String()))
}
