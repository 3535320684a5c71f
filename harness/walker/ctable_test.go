package walker

import (
	"os"
	"path/filepath"
	"strings"
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

// The Makefile links the folders the registry names: a registry line without a regenerated
// fragment fails here.
func TestAgentMakeIsGenerated(t *testing.T) {
	got, err := os.ReadFile(filepath.Join("..", "..", AgentMakeFile))
	require.NoError(t, err)
	assert.Equal(t, string(AgentMake()), string(got), "%s is stale: run go generate ./harness/walker", AgentMakeFile)
}

// Each in-process walker's folder defines the struct its entry names, and every folder of C
// under walkers/ is claimed: the core, the plugins (libraries of their own), an in-process
// walker's Source, or an out-of-process walker's own folder (never linked into the agent).
func TestEveryCFolderIsClaimed(t *testing.T) {
	root := filepath.Join("..", "..")
	claimed := map[string]string{"walkers/core": "the agent's core", "walkers/plugins": "plugins", "walkers/testdata": "C the tests build alone"}
	for _, w := range registry {
		switch {
		case w.Source != "":
			claimed[w.Source] = w.Name
			files, err := filepath.Glob(filepath.Join(root, w.Source, "*.c"))
			require.NoError(t, err)
			var defined bool
			for _, f := range files {
				b, err := os.ReadFile(f)
				require.NoError(t, err)
				defined = defined || strings.Contains(string(b), "const struct wf_walker "+w.Symbol+" =")
			}
			assert.True(t, defined, "no C file in %s defines %s", w.Source, w.Symbol)
		case w.Placement == OutOfProcess:
			claimed["walkers/"+w.Name] = w.Name
		case !w.Pseudo:
			t.Errorf("in-process walker %s has no Source", w.Name)
		}
	}
	files, err := filepath.Glob(filepath.Join(root, "walkers", "*", "*.c"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		rel, err := filepath.Rel(root, filepath.Dir(f))
		require.NoError(t, err)
		_, ok := claimed[filepath.ToSlash(rel)]
		assert.True(t, ok, "%s: no registry line claims %s, so the agent does not link it", f, rel)
	}
}
