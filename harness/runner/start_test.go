package runner

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/samplelog"
)

var errMainThread = errors.New("the goroutine ran on the main thread, which never ends: the test shows nothing")

// The test binary's main goroutine keeps the process's main thread, which the runtime
// never ends: a goroutine that locks a thread below then gets another one, which it ends.
//
// Every run of this package's tests poisons recycled walk frames on their last release
// (samplelog.PoisonRecycled): a check that read a walk after giving it back would judge
// poison (method 0xdeadbeef, frame type 0xdead) and the real-JVM tests' verdicts would fail.
func init() {
	runtime.LockOSThread()
	samplelog.PoisonRecycled.Store(true)
}

// The JVM is started with Pdeathsig, which the kernel sends when the thread that forked it
// ends. A run's goroutine may call start on a thread that a locked goroutine later ends (the
// drain and classifier goroutines lock theirs for good): the child must outlive it. Here the
// caller's thread is ended on purpose right after start returns.
func TestChildOutlivesTheThreadThatStartedIt(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "jdk", "bin")
	require.NoError(t, os.MkdirAll(bin, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(bin, "java"), []byte("#!/bin/sh\nexec sleep 1\n"), 0o755))
	j := jdk.JDK{Path: filepath.Join(dir, "jdk")}
	type started struct {
		p   *process
		err error
	}
	got := make(chan started, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the runtime ends this thread when the goroutine returns
		if syscall.Gettid() == os.Getpid() {
			got <- started{err: errMainThread}
			return
		}
		p, err := start(dir, j, nil)
		got <- started{p, err}
	}()
	s := <-got
	require.NoError(t, s.err)
	select {
	case <-s.p.done:
	case <-time.After(20 * time.Second):
		s.p.kill()
		t.Fatal("the child did not exit")
	}
	ws := s.p.cmd.ProcessState.Sys().(syscall.WaitStatus)
	assert.False(t, ws.Signaled(), "the child was killed by %v when the thread that started it ended", ws.Signal())
	assert.Equal(t, 0, ws.ExitStatus())
}
