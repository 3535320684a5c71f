package campaign

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMeasurements(t *testing.T) {
	us, err := MeasureStoreWrite(t.TempDir())
	require.NoError(t, err)
	assert.Greater(t, us, 0.0)
	secs, err := MeasureReport(t.TempDir(), 10000)
	require.NoError(t, err)
	assert.Greater(t, secs, 0.0)
	t.Logf("store write %.0f us/run; report for 10,000 runs %.2f s", us, secs)
}
