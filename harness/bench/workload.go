package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/walkfuzz/walkfuzz/harness/artifacts"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
)

// workloadJVM is a JVM running one of bin/workloads.jar's workloads without the agent: the
// out-of-process walkers sample it from outside (depths for jfr, callchain for ebpf).
type workloadJVM struct {
	cmd  *exec.Cmd
	out  bytes.Buffer
	name string
}

// startWorkload starts workload with the JVM flags for d on threads worker threads, with
// its own key=value arguments.
func startWorkload(ctx context.Context, j jdk.JDK, flags []string, workload string, d time.Duration, threads int, keys ...string) (*workloadJVM, error) {
	art, err := artifacts.Locate()
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(art.Workloads); err != nil {
		return nil, fmt.Errorf("no workloads jar: %w (run make build)", err)
	}
	args := append(append([]string{}, flags...), "-cp", art.Workloads, "walkfuzz.workloads.Main", workload,
		"duration_ms="+strconv.FormatInt(d.Milliseconds(), 10), "threads="+strconv.Itoa(threads))
	w := &workloadJVM{name: workload, cmd: exec.CommandContext(ctx, j.Java(), append(args, keys...)...)}
	w.cmd.Stdout, w.cmd.Stderr = &w.out, &w.out
	if err := w.cmd.Start(); err != nil {
		return nil, err
	}
	return w, nil
}

// runWorkload runs a workload to its end.
func runWorkload(ctx context.Context, j jdk.JDK, flags []string, workload string, d time.Duration, threads int, keys ...string) error {
	w, err := startWorkload(ctx, j, flags, workload, d, threads, keys...)
	if err != nil {
		return err
	}
	return w.wait()
}

func (w *workloadJVM) pid() int { return w.cmd.Process.Pid }

// waitWorkers waits until the workload's first worker thread runs (its native thread is
// named wf-<workload>-0), so what follows measures the workload, not the JVM's start.
func (w *workloadJVM) waitWorkers(timeout time.Duration) error {
	want := "wf-" + w.name + "-0"
	for end := time.Now().Add(timeout); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		comms, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/comm", w.pid()))
		for _, c := range comms {
			if b, err := os.ReadFile(c); err == nil && strings.TrimSpace(string(b)) == want {
				return nil
			}
		}
	}
	return fmt.Errorf("%s did not start its workers within %s", w.name, timeout)
}

func (w *workloadJVM) wait() error {
	if err := w.cmd.Wait(); err != nil {
		return fmt.Errorf("workload %s: %w: %s", w.name, err, w.out.String())
	}
	return nil
}

func (w *workloadJVM) kill() {
	w.cmd.Process.Kill()
	w.cmd.Wait()
	jdk.RemovePidFiles(w.cmd.Process.Pid)
}
