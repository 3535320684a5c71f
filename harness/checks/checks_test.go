package checks

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/walkfuzz/walkfuzz/harness/results"
	"github.com/walkfuzz/walkfuzz/harness/samplelog"
	"github.com/walkfuzz/walkfuzz/harness/walkclass"
)

func TestReferenceCheckOnlyWithReferenceWalker(t *testing.T) {
	assert.Len(t, New(Config{Walkers: []string{"asgct", "vmstructs"}}), 4)
	cs := New(Config{Walkers: []string{"asgct", "reference"}})
	require.Len(t, cs, 4)
	assert.IsType(t, &reference{}, cs[3])
}

// Results carry the episode's names: a failed walk of a listed walker is counted under its
// name with its code's name, in classes and in known stacks alike, and a listed in-process
// walker the log does not name (the agent stopped first) still has its row (an
// out-of-process one does not: it reports itself).
func TestChecksFinishUnderEpisodeNames(t *testing.T) {
	dir := t.TempDir()
	cs := New(Config{Walkers: []string{"asgct"}, Listed: []string{"asgct", "vmstructs", "jfr"},
		KnownStacks: dir + "/none.tsv"})
	for _, ch := range cs {
		ch.Add(&samplelog.Record{Walker: 0, Result: -5, Region: 7, Tid: 1, Sample: 1})
	}
	res := &results.Results{}
	for _, ch := range cs {
		require.NoError(t, ch.Finish(res, dir))
	}
	assert.Equal(t, uint64(1), res.Classes["asgct"]["error:unknown_Java"])
	assert.Equal(t, map[string]uint64{walkclass.OK: 0}, res.Classes["vmstructs"])
	assert.NotContains(t, res.Classes, "jfr")
	assert.Equal(t, uint64(1), res.KnownStack["asgct"]["error:unknown_Java"])
	assert.Equal(t, uint64(1_000_000), res.KnownStack["asgct"]["coverage_ppm"])
	assert.FileExists(t, dir+"/"+ExamplesFile)
}

// With two walkers in the handler, each error is judged by the other walk of its signal,
// under the episode's names, and the judgements' examples are written.
func TestErrorsJudgedWithTwoWalkers(t *testing.T) {
	dir := t.TempDir()
	cs := New(Config{Walkers: []string{"asgct", "vmstructs"}, Listed: []string{"asgct", "vmstructs"}, KnownStacks: dir + "/none.tsv"})
	for _, r := range []*samplelog.Record{
		{Walker: 0, Result: -3, Tid: 1, Sample: 1},
		{Walker: 1, Result: -1, Tid: 1, Sample: 1},
	} {
		for _, ch := range cs {
			ch.Add(r)
		}
	}
	res := &results.Results{}
	for _, ch := range cs {
		require.NoError(t, ch.Finish(res, dir))
	}
	assert.Equal(t, uint64(1), res.ErrorsJudged["asgct"][walkclass.Justified("unknown_not_Java")])
	assert.Equal(t, uint64(2), res.ErrorsJudged["asgct"]["walks"]+res.ErrorsJudged["vmstructs"]["walks"])
	assert.FileExists(t, dir+"/"+GiveupExamplesFile)
}
