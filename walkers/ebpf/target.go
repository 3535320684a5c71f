package ebpf

import (
	"bufio"
	"context"
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

//go:embed testdata/Recursion.java
var recursionJava []byte

// Target is a JVM running the Recursion program (testdata/Recursion.java) with frame
// pointers preserved: the workload the measurements and tests sample.
type Target struct {
	Pid      int
	JavaHome string
	cmd      *exec.Cmd
	out      strings.Builder
}

// StartRecursion compiles and starts Recursion in dir: threads busy threads recursing to
// depth frames for duration, then the JVM exits on its own.
func StartRecursion(ctx context.Context, javaHome, dir string, duration time.Duration, threads, depth int) (*Target, error) {
	src := filepath.Join(dir, "Recursion.java")
	if err := os.WriteFile(src, recursionJava, 0o644); err != nil {
		return nil, err
	}
	classes := filepath.Join(dir, "classes")
	if out, err := exec.CommandContext(ctx, filepath.Join(javaHome, "bin", "javac"), "-d", classes, src).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("javac Recursion.java: %v: %s", err, out)
	}
	t := &Target{JavaHome: javaHome}
	t.cmd = exec.CommandContext(ctx, filepath.Join(javaHome, "bin", "java"),
		"-XX:+PreserveFramePointer", "-Xmx256m", "-cp", classes, "Recursion",
		strconv.FormatInt(duration.Milliseconds(), 10), strconv.Itoa(threads), strconv.Itoa(depth))
	t.cmd.Stderr = &t.out
	stdout, err := t.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := t.cmd.Start(); err != nil {
		return nil, err
	}
	t.Pid = t.cmd.Process.Pid
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if !strings.HasPrefix(line, "ready ") {
		t.cmd.Process.Kill()
		t.cmd.Wait()
		return nil, fmt.Errorf("Recursion did not start (%q, %v): %s", line, err, t.out.String())
	}
	return t, nil
}

// Wait waits for the JVM to exit.
func (t *Target) Wait() error {
	if err := t.cmd.Wait(); err != nil {
		return fmt.Errorf("Recursion: %w: %s", err, t.out.String())
	}
	return nil
}

// Kill ends the JVM early and reaps it.
func (t *Target) Kill() {
	t.cmd.Process.Kill()
	t.cmd.Wait()
}
