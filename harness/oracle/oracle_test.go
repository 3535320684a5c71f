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
