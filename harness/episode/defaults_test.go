package episode

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPlainIsTheDefaultsWithNothingHostile(t *testing.T) {
	e := Plain(Pins{})
	require.NoError(t, e.Validate())
	assert.Equal(t, "recursion", e.Workload)
	assert.Equal(t, "cpu", e.Signals.Mode)
	assert.Equal(t, 100, e.Signals.IntervalUs)
	assert.Equal(t, 10000, e.DurationMs)
	assert.Equal(t, "all", e.Signals.Pattern)
	assert.Empty(t, e.JVMFlags)
	assert.Zero(t, e.Perturb.DeoptIntervalMs)
	assert.Equal(t, 250, Plain(Pins{Workload: "deopt"}).Perturb.DeoptIntervalMs)
	assert.Equal(t, Plain(Pins{}), Plain(Pins{}), "deterministic")
}
