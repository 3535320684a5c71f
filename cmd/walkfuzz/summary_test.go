package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/results"
)

func TestSummaryNoWalksIsNoData(t *testing.T) {
	var b bytes.Buffer
	printSummary(&b, &results.Results{Outcome: results.OK, Walkers: []string{"ebpf", "jvmti-emulated"},
		Classes: map[string]map[string]uint64{"ebpf": {"ok": 0}, "jvmti-emulated": {"ok": 10}}})
	out := b.String()
	assert.Contains(t, out, "walker ebpf: no walks (no data)\n")
	assert.NotRegexp(t, `\s0\.00%`, out)
	assert.Contains(t, out, "walker jvmti-emulated: 10 walks (safepoint-biased")
}

// A walker's judged errors print one line under its classes: give-ups by code, then the rest.
func TestSummaryErrorsJudged(t *testing.T) {
	var b bytes.Buffer
	printSummary(&b, &results.Results{Outcome: results.OK, Walkers: []string{"asgct", "vmstructs"},
		Classes: map[string]map[string]uint64{"asgct": {"ok": 990, "error:unknown_Java": 10}, "vmstructs": {"ok": 1000}},
		ErrorsJudged: map[string]map[string]uint64{"asgct": {"walks": 1000, "errors": 10, "judged": 9, "giveup_ppm": 3000,
			"giveup:unknown_Java": 3, "excused:unknown_Java": 5, "justified:unknown_Java": 1, "unjudged:unknown_Java": 1}}})
	out := b.String()
	assert.Contains(t, out, "  errors judged by another walk of the same signal: 10 errors: giveup 3 (0.300% of walks) [unknown_Java 3], excused 5, justified 1, unjudged 1\n")
	assert.Equal(t, 1, bytes.Count(b.Bytes(), []byte("errors judged")), "vmstructs had no errors: no line")
}

// A wrapped profiler run (the results golden of one): the signals line says whose signal was
// walked, and the join line gives the rates and the agreement with each of our walkers.
func TestSummaryJoin(t *testing.T) {
	r, err := results.Read("../../harness/results/testdata/join")
	require.NoError(t, err)
	var b bytes.Buffer
	printSummary(&b, r)
	out := b.String()
	assert.Contains(t, out, "signals (the profiler's signal 27, wrapped): delivered 16312, walked 16280, shed 32 (handler-time budget spent)\n")
	assert.Contains(t, out, "join ap:agct: 99.8% of its samples joined once wrapped (16280 of 16315), 100.0% of our signals (16280 of 16280), 32 shed; "+
		"agrees with asgct on 100.00% (13863 of 13863 both complete); agrees with vmstructs on 98.84% (13702 of 13863 both complete)\n")
}
