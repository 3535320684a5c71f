package runner

import (
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
	working := at(10*time.Second, 27*time.Second, 11*time.Second) // 4 s of CPU outside the handler in 10 s
	assert.Equal(t, overrun{}, judgeOverrun(before, working, 10*time.Second, false), "working: watch again")
	v := judgeOverrun(before, working, 80*time.Second, true)
	assert.Empty(t, v.hang)
	assert.Contains(t, v.overload, "40% of a CPU outside the handler")

	inHandler := at(10*time.Second, 27*time.Second, 14*time.Second) // all of it in walkfuzz's handler but 0.5 s
	v = judgeOverrun(before, inHandler, 10*time.Second, false)
	assert.Empty(t, v.hang, "10%% outside the handler is just enough to count as working, %v", v)
	idle := at(10*time.Second, 20*time.Second+200*time.Millisecond, 8*time.Second)
	v = judgeOverrun(before, idle, 10*time.Second, false)
	assert.Contains(t, v.hang, "its threads idle (2% of a CPU outside the handler)")

	stuck := working
	stuck.load.stuckTid, stuck.load.stuckNs = 42, uint64(3*time.Second)
	v = judgeOverrun(before, stuck, 10*time.Second, false)
	assert.Contains(t, v.hang, "a walk on thread 42 has not returned for 3s")
}
