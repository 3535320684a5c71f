package collect

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/walkfuzz/walkfuzz/harness/checks"
	"github.com/walkfuzz/walkfuzz/harness/methods"
	"github.com/walkfuzz/walkfuzz/harness/samplelog"
)

// A signal with a walk the method table cannot name yet waits until nameHold after it was
// taken (the sweep naming a class loaded on a virtual thread may not be read yet), together
// with the signal's other walks; a flood of such walks (a walker's garbage ids) does not wait.
func TestUnnamedWalksWaitForTheSweep(t *testing.T) {
	tab := methods.New()
	tab.Add(methods.Method{ID: 7, Internal: "A", Name: "m", Sig: "()V"})
	var judged []uint64
	c := &Collector{table: tab, checks: []checks.Check{watcher(func(r *samplelog.Record) { judged = append(judged, r.Sample) })}}
	walk := func(sample uint64, ts uint64, id uint64) *samplelog.Record {
		return &samplelog.Record{Tid: 1, Sample: sample, TsNs: ts, Result: 1,
			Frames: []samplelog.Frame{{Type: samplelog.FrameInterpreted, Method: id}}}
	}
	now := uint64(100 * time.Second)
	cut := now - uint64(classifyLag)
	young := now - uint64(time.Second) // past classifyLag, within nameHold
	old := now - uint64(nameHold) - 1  // past nameHold
	c.pending = []*samplelog.Record{
		walk(1, young, 7),  // named: judged
		walk(2, young, 99), // unnamed: waits...
		walk(2, young, 7),  // ...with its signal's other walk
		walk(3, old, 99),   // unnamed but old enough: judged
		walk(4, now, 7),    // younger than classifyLag: waits anyway
	}
	c.consumePending(false, cut)
	assert.Equal(t, []uint64{1, 3}, judged)
	assert.Len(t, c.pending, 3)

	judged = nil
	c.consumePending(true, cut)
	assert.Equal(t, []uint64{2, 2, 4}, judged, "the end judges every walk")

	judged = nil
	for i := range maxHeld + 1 {
		c.pending = append(c.pending, walk(uint64(10+i), young, 99))
	}
	c.consumePending(false, cut)
	assert.Len(t, judged, maxHeld+1, "a flood of unnamed walks is judged at once")
}
