package runner

import (
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// The two false "hang: unclassified" findings of a 200-episode campaign: -Xcomp start-up and
// class churn under 20 us cpu signals on a two-core machine loaded by other work, every
// thread still working, 35 s past the deadline.
func TestJudgeOverrun(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(d time.Duration, cpu, handler time.Duration) progress {
		return progress{load: handlerLoad{at: t0.Add(d), handlerNs: uint64(handler)}, cpuNs: uint64(cpu)}
	}
	before := at(0, 20*time.Second, 8*time.Second)
	working := at(10*time.Second, 27*time.Second, 11*time.Second) // 7 s of CPU in 10 s
	assert.Equal(t, overrun{}, judgeOverrun(before, working, 10*time.Second, false), "working: watch again")
	v := judgeOverrun(before, working, 80*time.Second, true)
	assert.Empty(t, v.hang)
	assert.Contains(t, v.overload, "70% of a CPU; threads in walkfuzz's handler 30% of the time")

	// Seed 0x5580d93deeea3cc5: 2048-frame walks at 20 us on a loaded machine; the handler's
	// wall time exceeds the CPU the threads got, which is still work, not a deadlock.
	inHandler := at(10*time.Second, 22*time.Second, 28*time.Second)
	v = judgeOverrun(before, inHandler, 10*time.Second, true)
	assert.Empty(t, v.hang)
	assert.Contains(t, v.overload, "20% of a CPU; threads in walkfuzz's handler 200% of the time")

	idle := at(10*time.Second, 20*time.Second+200*time.Millisecond, 8*time.Second)
	v = judgeOverrun(before, idle, 10*time.Second, false)
	assert.Contains(t, v.hang, "idle (2% of a CPU)")

	stuck := working
	stuck.load.stuckTid, stuck.load.stuckNs = 42, uint64(3*time.Second)
	v = judgeOverrun(before, stuck, 10*time.Second, false)
	assert.Contains(t, v.hang, "a walk on thread 42 has not returned for 3s")
}

// A JVM in exit (its main task a zombie, seed 0x864f4bc5643fb404 on a loaded machine: halt
// ended the main thread inside the handler, and writing the sample log's pages back kept the
// exit going for 20 s) is no hang, whatever the stale slots say: watched, then a note.
func TestJudgeOverrunExiting(t *testing.T) {
	t0 := time.Unix(1000, 0)
	before := progress{load: handlerLoad{at: t0}, cpuNs: uint64(20 * time.Second)}
	exiting := progress{load: handlerLoad{at: t0.Add(10 * time.Second), stuckTid: 7, stuckNs: uint64(8 * time.Second)},
		cpuNs: uint64(20 * time.Second), exiting: true}
	assert.Equal(t, overrun{}, judgeOverrun(before, exiting, 22*time.Second, false), "exiting: watch again")
	v := judgeOverrun(before, exiting, 80*time.Second, true)
	assert.Empty(t, v.hang)
	assert.Contains(t, v.overload, "a slow exit on this machine, not a hang")
}

// taskState reads this test's own thread; a task that does not exist has none.
func TestTaskState(t *testing.T) {
	pid := os.Getpid()
	assert.Contains(t, "RS", string(taskState(pid, uint32(syscall.Gettid()))))
	assert.True(t, taskLive(pid, uint32(pid)))
	assert.Zero(t, taskState(pid, 1<<30))
	assert.False(t, taskLive(pid, 1<<30))
}
