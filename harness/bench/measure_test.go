package bench

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMeasureReader(t *testing.T) {
	rate, err := measureReader(t.TempDir(), 200000)
	require.NoError(t, err)
	t.Logf("reader: %.0f records/s", rate)
	assert.Greater(t, rate, 0.0)
	_, err = measureReader(t.TempDir(), 0)
	assert.Error(t, err)
}

func TestMeasureStoreWrite(t *testing.T) {
	us, err := measureStoreWrite(t.TempDir(), 200)
	require.NoError(t, err)
	assert.Greater(t, us, 0.0)
	t.Logf("store write: %.0f us per run", us)
}

func TestMeasureReport(t *testing.T) {
	secs, err := measureReport(t.TempDir(), 2000)
	require.NoError(t, err)
	assert.Greater(t, secs, 0.0)
	t.Logf("report for 2000 runs: %.3fs", secs)
}
