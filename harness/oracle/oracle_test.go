package oracle

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/methods"
	"github.com/walkfuzz/walkfuzz/harness/samplelog"
	"github.com/walkfuzz/walkfuzz/harness/walkclass"
)

func rec(walker uint16, sample uint64, ids ...uint64) *samplelog.Record {
	r := &samplelog.Record{Walker: walker, Tid: 3, Sample: sample, Result: int32(len(ids))}
	if len(ids) == 0 {
		r.Result = -5
	}
	for _, id := range ids {
		r.Frames = append(r.Frames, samplelog.Frame{Method: id})
	}
	return r
}

// Methods 5 and 50 are thread roots (Thread.run, main), the rest are not.
func isRoot(id uint64) bool { return id == 5 || id == 50 }

func TestBottomFrameCheck(t *testing.T) {
	c := New([]string{"asgct", "reference"}, nil, 2048, isRoot)
	require.NotNil(t, c)
	// The reference is taken later: its top moved (9 vs 1), its bottom must not.
	c.Add(rec(0, 1, 1, 2, 3, 4, 5))
	c.Add(rec(1, 1, 9, 2, 3, 4, 5))
	// Frames above the root differ: the thread returned and called others in between.
	c.Add(rec(0, 2, 1, 2, 3, 7, 5))
	c.Add(rec(1, 2, 1, 2, 3, 4, 5))
	c.Add(rec(0, 3, 1, 2, 3, 4)) // stopped early: its bottom (4) is higher up in the reference
	c.Add(rec(1, 3, 1, 2, 3, 4, 6, 6, 5))
	c.Add(rec(0, 4)) // async failed
	c.Add(rec(1, 4, 1, 5))
	c.Add(rec(1, 5, 1, 5))    // no async walk for this signal: nothing to compare
	c.Add(rec(0, 6, 1, 2, 8)) // a bottom that is no root and nowhere in the reference
	c.Add(rec(1, 6, 1, 2, 5))
	c.Add(rec(0, 7, 1, 2, 3)) // the reference ends in no root: the thread is still starting
	c.Add(rec(1, 7, 1, 2, 4))
	c.Add(rec(0, 8, 1, 5)) // launcher entry, then main: the thread moved between its entries
	c.Add(rec(1, 8, 1, 50))
	m := c.Counts["asgct"]
	assert.Equal(t, uint64(7), m[Compared])
	assert.Equal(t, uint64(2), m[walkclass.OK])
	assert.Equal(t, uint64(1), m[walkclass.MismatchBottom])
	assert.Equal(t, uint64(1), m[walkclass.TruncatedShort])
	assert.Equal(t, uint64(1), m[AsyncFailed])
	assert.Equal(t, uint64(1), m[walkclass.SkippedStarting])
	assert.Equal(t, uint64(1), m[walkclass.SkippedEntry])
	assert.Len(t, c.Examples, 2)

	// At the depth limit (3 here) the walk's bottom is not the thread's.
	d := New([]string{"asgct", "reference"}, nil, 3, isRoot)
	d.Add(rec(0, 9, 1, 2, 3))
	d.Add(rec(1, 9, 1, 2, 3, 4, 5))
	assert.Equal(t, uint64(1), d.Counts["asgct"][walkclass.OK])
}

func TestNoReferenceWalkerNoChecker(t *testing.T) {
	assert.Nil(t, New([]string{"asgct"}, nil, 64, isRoot))
	var c *Checker
	c.Add(rec(0, 1, 1)) // a nil checker ignores records
}

// A flagged walk is confirmed when another walker's walk of the same signal ended in the
// reference's root: the stack went down to it at the signal, so the walker lost frames.
func TestFlagConfirmedBySameSignal(t *testing.T) {
	c := New([]string{"asgct", "vmstructs", "reference"}, nil, 2048, isRoot)
	c.Add(rec(0, 1, 1, 2, 3))       // asgct stopped early
	c.Add(rec(1, 1, 1, 2, 3, 4, 5)) // vmstructs reached the root
	c.Add(rec(2, 1, 9, 3, 4, 5))
	c.Add(rec(0, 2, 1, 2, 8)) // both stopped short: nothing confirms
	c.Add(rec(1, 2, 1, 2, 8))
	c.Add(rec(2, 2, 1, 2, 4, 5))
	a := c.Counts["asgct"]
	assert.Equal(t, uint64(1), a[walkclass.TruncatedShort])
	assert.Equal(t, uint64(1), a[walkclass.MismatchBottom])
	assert.Equal(t, uint64(1), a[Confirmed])
	assert.Zero(t, c.Counts["vmstructs"][Confirmed])
	require.Len(t, c.Examples, 3)
	assert.Equal(t, "vmstructs", c.Examples[0].ConfirmedBy)
	assert.Empty(t, c.Examples[1].ConfirmedBy)
}

// A flagged walk ending in a method the VM calls (an implicit exception's constructor here)
// is counted at_vm_call: ASGCT's known stop, reported complete.
func TestFlagAtVMCall(t *testing.T) {
	tab := methods.New()
	require.Positive(t, tab.Parse([]byte("M\t0x7\tLjava/lang/NullPointerException;\t<init>\t()V\t1\t-\n")))
	c := New([]string{"asgct", "reference"}, tab, 2048, isRoot)
	c.Add(rec(0, 1, 1, 7))
	c.Add(rec(1, 1, 1, 7, 3, 5))
	c.Add(rec(0, 2, 1, 3))
	c.Add(rec(1, 2, 1, 3, 4, 5))
	m := c.Counts["asgct"]
	assert.Equal(t, uint64(2), m[walkclass.TruncatedShort])
	assert.Equal(t, uint64(1), m[AtVMCall])
}

// A carrier's reference holds its own frames (VirtualThread.runContinuation and below),
// never those of the virtual thread mounted on it: a walk that stopped inside the virtual
// thread's frames is flagged and counted on_carrier; a walk that went on to the carrier's
// root is ok, one that ended at the virtual thread's entry is skipped:mounted.
func TestCarrierReference(t *testing.T) {
	tab := methods.New()
	require.Positive(t, tab.Parse([]byte(
		"M\t0x20\tLjava/lang/VirtualThread;\trunContinuation\t()V\t1\t-\n"+
			"M\t0x21\tLjdk/internal/vm/Continuation;\trun\t()V\t1\t-\n"+
			"M\t0x22\tLjdk/internal/vm/Continuation;\tenter\t(Ljdk/internal/vm/Continuation;Z)V\t1\ts\n")))
	// 5: ForkJoinWorkerThread.run (the carrier's root), 0x22: Continuation.enter (the virtual
	// thread's), 50: main, 1-3: the virtual thread's frames, 4: ForkJoinPool.runWorker.
	roots := func(id uint64) bool { return isRoot(id) || id == 0x22 }
	c := New([]string{"vmstructs", "asgct", "reference"}, tab, 2048, roots)
	c.Add(rec(0, 1, 1, 2, 3)) // stopped inside the virtual thread's frames
	c.Add(rec(1, 1))          // asgct failed: nothing can confirm it
	c.Add(rec(2, 1, 0x21, 0x20, 4, 5))
	c.Add(rec(0, 2, 1, 2, 3, 0x22, 0x21, 0x20, 4, 5)) // on through the continuation
	c.Add(rec(2, 2, 0x21, 0x20, 4, 5))
	c.Add(rec(0, 3, 1, 2, 3, 0x22)) // at the virtual thread's entry
	c.Add(rec(2, 3, 0x21, 0x20, 4, 5))
	c.Add(rec(0, 4, 1, 2, 3)) // stopped inside: asgct went on to the carrier's root
	c.Add(rec(1, 4, 1, 2, 3, 0x22, 0x21, 0x20, 4, 5))
	c.Add(rec(2, 4, 0x21, 0x20, 4, 5))
	// The carrier ran its own frames at the safepoint; asgct stopped at the same frame.
	c.Add(rec(0, 5, 1, 2, 8))
	c.Add(rec(1, 5, 1, 2, 8))
	c.Add(rec(2, 5, 1, 2, 4, 5))
	c.Add(rec(0, 6, 1, 50)) // a root that is no virtual thread's entry: the thread moved
	c.Add(rec(2, 6, 1, 5))
	other := rec(0, 7, 1, 2, 8) // another thread, never seen running a virtual thread
	other.Tid = 4
	c.Add(other)
	ref := rec(2, 7, 1, 2, 4, 5)
	ref.Tid = 4
	c.Add(ref)
	m := c.Counts["vmstructs"]
	assert.Equal(t, uint64(1), m[walkclass.OK])
	assert.Equal(t, uint64(1), m[walkclass.SkippedMounted])
	assert.Equal(t, uint64(1), m[walkclass.SkippedEntry])
	assert.Equal(t, uint64(4), m[walkclass.MismatchBottom])
	assert.Equal(t, uint64(3), m[OnCarrier])
	assert.Equal(t, uint64(2), m[NoWitness])
	assert.Equal(t, uint64(1), m[WitnessBelow])
	assert.Equal(t, uint64(1), m[Confirmed])
	require.Len(t, c.Examples, 5) // and asgct's walk of signal 5
	assert.Equal(t, []string{OnCarrier, NoWitness}, c.Examples[0].Causes)
	assert.Equal(t, []Witness{{Walker: "asgct", Result: -5}}, c.Examples[0].SameSignal)
	assert.Contains(t, c.Examples[0].ReferenceTop, "Continuation.run")
	assert.Equal(t, []string{OnCarrier, WitnessBelow}, c.Examples[1].Causes)
	assert.Equal(t, "asgct", c.Examples[1].ConfirmedBy)
	assert.Equal(t, []string{OnCarrier}, c.Examples[2].Causes) // asgct walked, and lost the same frames
	assert.NotEmpty(t, c.Examples[2].SameSignal[0].Bottom)
	assert.Equal(t, []string{NoWitness}, c.Examples[4].Causes)
}

// A flagged walk is witnessed below when another walk of the signal holds its root-most
// frames and more under them; holding the bottom method alone (another call of a recursive
// method) is not enough.
func TestWitnessBelow(t *testing.T) {
	for _, tc := range []struct {
		name    string
		flagged []uint64
		other   []uint64
		want    bool
	}{
		{"went on below", []uint64{1, 2, 3}, []uint64{1, 2, 3, 4, 6}, true},
		{"went on below, deeper recursion", []uint64{2, 3, 2, 3}, []uint64{2, 3, 2, 3, 2, 3, 6}, true},
		{"stopped at the same frame", []uint64{1, 2, 3}, []uint64{9, 2, 3}, false},
		{"the bottom method only, elsewhere", []uint64{1, 2, 3}, []uint64{1, 8, 3, 4, 6}, false},
		{"the other walk failed", []uint64{1, 2, 3}, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := New([]string{"vmstructs", "asgct", "reference"}, nil, 2048, isRoot)
			c.Add(rec(0, 1, tc.flagged...))
			c.Add(rec(1, 1, tc.other...))
			c.Add(rec(2, 1, 1, 2, 3, 4, 7, 5))
			m := c.Counts["vmstructs"]
			require.Equal(t, uint64(1), m[walkclass.MismatchBottom]+m[walkclass.TruncatedShort])
			assert.Equal(t, tc.want, m[WitnessBelow] == 1)
		})
	}
}

// Unconfirmed flags are each kept as an example (up to keptUnconfirmed): every one must be
// sorted by cause. Confirmed ones are capped lower: a few show the walker's cause.
func TestEveryUnconfirmedFlagKept(t *testing.T) {
	c := New([]string{"vmstructs", "asgct", "reference"}, nil, 2048, isRoot)
	const n = keptConfirmed + 10
	for i := uint64(0); i < 2*n; i += 2 {
		c.Add(rec(0, i, 1, 2)) // unconfirmed
		c.Add(rec(2, i, 1, 2, 4, 5))
		c.Add(rec(0, i+1, 1, 2)) // confirmed by asgct
		c.Add(rec(1, i+1, 1, 2, 4, 5))
		c.Add(rec(2, i+1, 1, 2, 4, 5))
	}
	var confirmed, unconfirmed int
	for _, e := range c.Examples {
		if e.ConfirmedBy != "" {
			confirmed++
		} else {
			unconfirmed++
		}
	}
	assert.Equal(t, keptConfirmed, confirmed)
	assert.Equal(t, n, unconfirmed)
	assert.Equal(t, uint64(2*n), c.Counts["vmstructs"][walkclass.TruncatedShort])
}
