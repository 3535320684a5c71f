package jfr

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/walkfuzz/walkfuzz/harness/episode"
)

//go:embed testdata/Depths.java
var depthsJava []byte

// DepthsRoot is the bottom frame of every Depths thread (a Thread subclass overriding
// run, which JFR cannot recognise by itself).
const DepthsRoot = "Depths$Deep.run()V"

// RunDepths records the Depths program (testdata/Depths.java) under javaHome: one busy
// thread per entry of depths, each spinning with exactly that many Java frames, for
// duration, with the recording Options plans for e. The plan's files go to dir.
func RunDepths(ctx context.Context, javaHome string, major int, e *episode.Episode, dir string, duration time.Duration, depths ...int) (Plan, error) {
	plan, err := Options(e, Target{JDKMajor: major, Dir: dir})
	if err != nil {
		return plan, err
	}
	src := filepath.Join(dir, "Depths.java")
	if err := os.WriteFile(src, depthsJava, 0o644); err != nil {
		return plan, err
	}
	classes := filepath.Join(dir, "classes")
	if out, err := exec.CommandContext(ctx, filepath.Join(javaHome, "bin", "javac"), "-d", classes, src).CombinedOutput(); err != nil {
		return plan, fmt.Errorf("javac Depths.java: %v: %s", err, out)
	}
	args := append(append([]string{}, plan.Flags...), "-Xlog:jfr=warning", "-cp", classes, "Depths", strconv.FormatInt(duration.Milliseconds(), 10))
	for _, d := range depths {
		args = append(args, strconv.Itoa(d))
	}
	if out, err := exec.CommandContext(ctx, filepath.Join(javaHome, "bin", "java"), args...).CombinedOutput(); err != nil {
		return plan, fmt.Errorf("java Depths: %v: %s", err, out)
	}
	return plan, nil
}
