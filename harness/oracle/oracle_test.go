package oracle

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/samplelog"
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

func TestBottomFrameCheck(t *testing.T) {
	c := New([]string{"asgct", "reference"}, nil, 2048)
	require.NotNil(t, c)
	// The reference is taken later: its top moved (9 vs 1), its bottom must not.
	c.Add(rec(0, 1, 1, 2, 3, 4, 5))
	c.Add(rec(1, 1, 9, 2, 3, 4, 5))
	c.Add(rec(0, 2, 1, 2, 3, 7, 5)) // bottom differs
	c.Add(rec(1, 2, 1, 2, 3, 4, 5))
	c.Add(rec(0, 3, 1, 2, 3, 4)) // stopped early: its bottom (4) is higher up in the reference
	c.Add(rec(1, 3, 1, 2, 3, 4, 6, 6, 5))
	c.Add(rec(0, 4)) // async failed
	c.Add(rec(1, 4, 1, 5))
	c.Add(rec(1, 5, 1, 5)) // no async walk for this signal: nothing to compare
	m := c.Counts["asgct"]
	assert.Equal(t, uint64(4), m[Compared])
	assert.Equal(t, uint64(1), m[OK])
	assert.Equal(t, uint64(1), m[BottomMismatch])
	assert.Equal(t, uint64(1), m[Short])
	assert.Equal(t, uint64(1), m[AsyncFailed])
	assert.Len(t, c.Examples, 2)
}

func TestNoReferenceWalkerNoChecker(t *testing.T) {
	assert.Nil(t, New([]string{"asgct"}, nil, 64))
	var c *Checker
	c.Add(rec(0, 1, 1)) // a nil checker ignores records
}
