package walker

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The agent's table is the registry's: a registry line without a regenerated table fails here.
func TestCTableIsGenerated(t *testing.T) {
	got, err := os.ReadFile(filepath.Join("..", "..", CTableFile))
	require.NoError(t, err)
	assert.Equal(t, string(CTable()), string(got), "%s is stale: run go generate ./harness/walker", CTableFile)
	assert.Contains(t, string(got), `X("asgct", wf_asgct_walker)`)
	assert.NotContains(t, string(got), `"jfr"`, "out-of-process walkers are not the agent's")
}
