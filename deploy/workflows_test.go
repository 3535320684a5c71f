package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// actionlintVersion is the pinned release of github.com/rhysd/actionlint the suite checks the
// GitHub Actions workflows with (built from the Go module, no binary download).
const actionlintVersion = "v1.7.12"

// actionlint builds the pinned actionlint into a temporary directory, or skips the test with
// one line when the module cannot be fetched.
func actionlint(t *testing.T) string {
	t.Helper()
	bin := t.TempDir()
	cmd := exec.Command("go", "install", "github.com/rhysd/actionlint/cmd/actionlint@"+actionlintVersion)
	cmd.Env = append(os.Environ(), "GOBIN="+bin, "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		first, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
		t.Skipf("actionlint %s could not be fetched or built: %s", actionlintVersion, first)
	}
	return filepath.Join(bin, "actionlint")
}

// lint runs actionlint on the given workflow files: its report and whether it passed.
// Shellcheck and pyflakes stay off, so the result does not depend on what else is installed.
func lint(t *testing.T, bin string, files ...string) (string, bool) {
	t.Helper()
	args := append([]string{"-no-color", "-shellcheck=", "-pyflakes="}, files...)
	out, err := exec.Command(bin, args...).CombinedOutput()
	if _, failed := err.(*exec.ExitError); err != nil && !failed {
		t.Fatalf("actionlint: %v", err)
	}
	return string(out), err == nil
}

func workflows(t *testing.T) []string {
	files, err := filepath.Glob(filepath.Join("..", ".github", "workflows", "*.yml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	return files
}

func TestWorkflowsPassActionlint(t *testing.T) {
	bin := actionlint(t)
	out, ok := lint(t, bin, workflows(t)...)
	assert.True(t, ok, "actionlint:\n%s", out)

	// The same check fails on a broken copy: a job that needs a job that does not exist, an
	// input that is not declared.
	broken := filepath.Join(t.TempDir(), ".github", "workflows")
	require.NoError(t, os.MkdirAll(broken, 0o755))
	for _, f := range workflows(t) {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		s := strings.Replace(string(b), "needs: shard\n", "needs: shards\n", 1)
		s = strings.Replace(s, "inputs.budget ||", "inputs.budjet ||", 1)
		require.NotEqual(t, string(b), s, "%s: nothing to break", f)
		require.NoError(t, os.WriteFile(filepath.Join(broken, filepath.Base(f)), []byte(s), 0o644))
	}
	out, ok = lint(t, bin, filepath.Join(broken, "nightly.yml"), filepath.Join(broken, "fuzz-sharded.yml"))
	assert.False(t, ok)
	assert.Contains(t, out, `"shards"`)
	assert.Contains(t, out, `budjet`)
}
