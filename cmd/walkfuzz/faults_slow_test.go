//go:build faults

package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/walkfuzz/walkfuzz/harness/artifacts"
	"github.com/walkfuzz/walkfuzz/harness/store"
)

// The slow fault-injection cases of issue 33, on real JVMs: `make faults` runs them.

// started is the built CLI running in the background.
type started struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	done           chan struct{}
	code           int
}

func startCLI(t *testing.T, args ...string) *started {
	t.Helper()
	art, err := artifacts.Locate()
	require.NoError(t, err, "run make first")
	p := &started{cmd: exec.Command(filepath.Join(art.Bin, "walkfuzz"), args...), done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	require.NoError(t, p.cmd.Start())
	go func() {
		p.cmd.Wait()
		p.code = p.cmd.ProcessState.ExitCode()
		if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			p.code = 128 + int(ws.Signal())
		}
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

func (p *started) wait(t *testing.T, limit time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
		return p.code
	case <-time.After(limit):
		t.Fatalf("still running after %s: %s", limit, p.stderr.String())
		return -1
	}
}

func campaignArgs(dir, seedBase, budget string) []string {
	return []string{"fuzz", "--seed-base", seedBase, "--budget", budget, "-j", "1", "--duration-cap", "2s",
		"--walkers", "asgct", "--workloads", "recursion", "--jdks", "17", "--store", filepath.Join(dir, "s.db"),
		"--corpus", filepath.Join(dir, "corpus"), "--runs-dir", filepath.Join(dir, "runs")}
}

// storedRuns are the runs of the store campaignArgs names.
func storedRuns(t *testing.T, dir string) []store.Run {
	t.Helper()
	s, err := store.Open(filepath.Join(dir, "s.db"))
	require.NoError(t, err)
	defer s.Close()
	runs, err := s.Runs(store.Filter{})
	require.NoError(t, err)
	return runs
}

// noGoFault: no panic, no runtime fault in what the harness printed.
func noGoFault(t *testing.T, stderr string) {
	t.Helper()
	for _, s := range []string{"panic:", "fatal error", "goroutine ", "unexpected fault address"} {
		assert.NotContains(t, stderr, s)
	}
}

// SIGINT or SIGTERM at a random moment of a short campaign (early ones fell into the
// classifier's read of a closed log: index out of range, exit 2): exit 130, no Go fault,
// a resume hint that carries every path, and no false outcome stored.
func TestFaultsInterruptsAtRandomMoments(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 33))
	for i := 0; i < 8; i++ {
		sig, at := []syscall.Signal{syscall.SIGINT, syscall.SIGTERM}[i%2], time.Duration(100+rng.IntN(7000))*time.Millisecond
		t.Run(fmt.Sprintf("%s@%s", sig, at), func(t *testing.T) {
			p := startCLI(t, campaignArgs(dir, "0x"+strconv.FormatUint(rng.Uint64()>>1, 16), "60s")...)
			time.Sleep(at)
			p.cmd.Process.Signal(sig)
			code := p.wait(t, 2*time.Minute)
			stderr := p.stderr.String()
			assert.Equal(t, 130, code, stderr)
			noGoFault(t, stderr)
			if strings.Contains(stderr, "--resume") {
				assert.Contains(t, stderr, "--runs-dir "+filepath.Join(dir, "runs"))
				assert.Contains(t, stderr, "--corpus "+filepath.Join(dir, "corpus"))
			}
		})
	}
	runs := storedRuns(t, dir)
	for _, r := range runs {
		assert.NotEqual(t, "harness-error", r.Outcome, "%s: %s", r.Seed, r.Reason)
	}
	t.Logf("%d runs stored over the interrupted campaigns", len(runs))

	// report interrupted at a random moment: 130 (or 0 had it finished), no .tmp page left.
	for i := 0; i < 4; i++ {
		out := filepath.Join(dir, fmt.Sprintf("report%d", i))
		p := startCLI(t, "report", "--synthetic", "3000", "--out", out)
		// From 300 ms: a signal before main installs its handler (Go's start-up and package
		// initialisation, tens of ms on a loaded machine) still ends the process (143).
		time.Sleep(time.Duration(300+rng.IntN(1500)) * time.Millisecond)
		p.cmd.Process.Signal(syscall.SIGTERM)
		code := p.wait(t, time.Minute)
		assert.Contains(t, []int{0, 130}, code, p.stderr.String())
		left, _ := filepath.Glob(filepath.Join(out, "*.tmp"))
		more, _ := filepath.Glob(filepath.Join(out, "buckets", "*.tmp"))
		assert.Empty(t, append(left, more...), "no temporary page left")
	}
}

// Two fuzz processes on one campaign: the second is refused naming the first (they ran the
// same indices into the same run directories, storing false jvm-error and harness-error).
func TestFaultsTwoProcessesOneCampaign(t *testing.T) {
	dir := t.TempDir()
	first := startCLI(t, campaignArgs(dir, "0x42", "60s")...)
	deadline := time.Now().Add(time.Minute)
	for {
		if locks, _ := filepath.Glob(filepath.Join(dir, "s.db.lock-*")); len(locks) > 0 {
			break
		}
		require.True(t, time.Now().Before(deadline), "the first never took its lock: %s", first.stderr.String())
		time.Sleep(100 * time.Millisecond)
	}
	second := startCLI(t, append(campaignArgs(dir, "0x42", "30s"), "--resume")...)
	code := second.wait(t, time.Minute)
	assert.Equal(t, 2, code, second.stderr.String())
	assert.Contains(t, second.stderr.String(), fmt.Sprintf("held by pid %d", first.cmd.Process.Pid))
	first.cmd.Process.Signal(syscall.SIGINT)
	assert.Equal(t, 130, first.wait(t, 2*time.Minute), first.stderr.String())
}

// The disk fills while a campaign runs (a filler file on a 400 MiB tmpfs): the campaign
// stops in one line naming the path and "no space left", exit 2; what it stored are runs
// that ended with room, nothing is filed.
func TestFaultsDiskFillsDuringACampaign(t *testing.T) {
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=400m"); err != nil {
		t.Skipf("needs to mount a small tmpfs (root): %v", err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	p := startCLI(t, campaignArgs(dir, "0x35", "3m")...)
	time.Sleep(4 * time.Second)
	f, err := os.Create(filepath.Join(dir, "filler"))
	require.NoError(t, err)
	for err == nil {
		_, err = f.Write(make([]byte, 1<<20))
	}
	f.Close()
	code := p.wait(t, 3*time.Minute)
	stderr := p.stderr.String()
	assert.Equal(t, 2, code, stderr)
	assert.Contains(t, stderr, "no space left on device")
	noGoFault(t, stderr)
	filed, _ := filepath.Glob(filepath.Join(dir, "corpus", "*", "title"))
	assert.Empty(t, filed, "nothing filed")
	require.NoError(t, os.Remove(filepath.Join(dir, "filler")))
	for _, r := range storedRuns(t, dir) {
		assert.Equal(t, "ok", r.Outcome, "%s: %s", r.Seed, r.Reason)
	}
}

// The nightly with an unreadable bucket (chmod 000, as nobody): a failed replay in its
// verdict and JUnit file, exit 1 (it printed PASS, exit 0, the bucket absent from JUnit).
func TestFaultsNightlyFailsAnUnreadableBucket(t *testing.T) {
	dir, corp, _, st := lockedCorpus(t)
	junit := filepath.Join(dir, "junit.xml")
	out, stderr, code := asNobody(t, "nightly", "--budget", "1s", "--store", st, "--corpus", corp, "--runs-dir", filepath.Join(dir, "runs"),
		"--walkers", "asgct", "--workloads", "recursion", "--jdks", "17", "--junit", junit)
	t.Logf("nightly as nobody:\n%s%s", out, stderr)
	assert.Equal(t, 1, code, "a bucket that cannot be replayed fails the night")
	assert.Contains(t, out, "FAILED: unreadable")
	noGoFault(t, stderr)
	x, err := os.ReadFile(junit)
	require.NoError(t, err)
	assert.Contains(t, string(x), `name="replay locked"`)
	assert.Contains(t, string(x), "cannot be replayed")
}
