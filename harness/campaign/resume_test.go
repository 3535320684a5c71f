package campaign

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/store"
)

func TestResumeRules(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "s.db"))
	require.NoError(t, err)
	defer st.Close()
	flags := Spec{SeedBase: 0x2025}

	_, _, err = Resume(st, "", false, flags)
	assert.ErrorIs(t, err, ErrNothingToResume, "an empty store and no id")

	_, _, err = Resume(st, "nosuch", false, flags)
	assert.ErrorIs(t, err, store.ErrNoCampaign, "an id the store does not hold")

	got, note, err := Resume(st, "", true, flags)
	require.NoError(t, err, "a campaign the flags name starts when absent (a retried shard)")
	assert.Equal(t, flags.ID(), got.ID())
	assert.Contains(t, note, "starting it")
}
