package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
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
