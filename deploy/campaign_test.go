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

// fakeKubectl logs every call (and what it was piped) and reports the shards' Job as running
// for two polls, then as ended.
const fakeKubectl = `#!/usr/bin/env bash
log="$FAKE_DIR/calls"
echo "kubectl $*" >> "$log"
if [[ " $* " == *" -f - "* ]]; then grep -E '^kind:|image:' >> "$log"; fi
if [[ "$*" == *"get job walkfuzz-campaign"* ]]; then
  n=$(( $(cat "$FAKE_DIR/polls" 2>/dev/null || echo 0) + 1 )); echo "$n" > "$FAKE_DIR/polls"
  if (( n >= 3 )); then printf 'SuccessCriteriaMet Complete '; fi
fi
`

// The merge starts only after the shards' Job has ended, and both run the given image.
func TestCampaignScriptWaitsForTheShards(t *testing.T) {
	dir := t.TempDir()
	kubectl := filepath.Join(dir, "kubectl")
	require.NoError(t, os.WriteFile(kubectl, []byte(fakeKubectl), 0o755))
	cmd := exec.Command("./campaign.sh", "registry.test/walkfuzz:0123abcd")
	cmd.Env = append(os.Environ(), "KUBECTL="+kubectl, "FAKE_DIR="+dir, "POLL_SECONDS=0")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	assert.Contains(t, string(out), "shards ended: SuccessCriteriaMet Complete")

	b, err := os.ReadFile(filepath.Join(dir, "calls"))
	require.NoError(t, err)
	calls := string(b)
	assert.Equal(t, 3, strings.Count(calls, "get job walkfuzz-campaign"), calls)
	lastPoll := strings.LastIndex(calls, "get job walkfuzz-campaign")
	merge := strings.Index(calls, "delete job walkfuzz-merge")
	require.Positive(t, merge, calls)
	assert.Less(t, lastPoll, merge, "the merge is applied after the last poll:\n%s", calls)
	assert.Less(t, strings.Index(calls, "kind: ConfigMap"), lastPoll, "the shards are applied before waiting")
	assert.Equal(t, 2, strings.Count(calls, "image: registry.test/walkfuzz:0123abcd"), calls)
	assert.NotContains(t, calls, "walkfuzz:COMMIT")
	assert.Contains(t, calls, "kubectl -n walkfuzz wait --for=condition=complete --timeout=1h job/walkfuzz-merge")
}
