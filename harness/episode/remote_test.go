package episode

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// remoteWalkerSets are the walker sets the remote-walk perturbation reaches; their golden
// episodes were written before remote_pct existed, so the test below shows that adding its
// draw changed nothing else of any of these seeds.
var remoteWalkerSets = map[string][]string{
	"vmstructs":       {"vmstructs"},
	"asgct+vmstructs": {"asgct", "vmstructs"},
	"fpwalk":          {"plugin:/x/libfpwalk.so"},
}

func TestRemoteDrawLeavesEarlierDrawsAlone(t *testing.T) {
	for _, s := range []Seed{0x5eed, 0x1, 0xdeadbeef, 0xffffffffffffffff, 0x123456789abcdef0} {
		for set, ws := range remoteWalkerSets {
			e := Derive(s, Pins{Walkers: ws})
			path := filepath.Join("testdata", "golden-walkers", s.String()+"-"+set+".json")
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
				require.NoError(t, os.WriteFile(path, e.JSON(), 0o644))
			}
			b, err := os.ReadFile(path)
			require.NoError(t, err, "run go test ./harness/episode -update")
			var want Episode
			require.NoError(t, json.Unmarshal(b, &want))
			assert.Contains(t, []int{0, 5, 25, 100}, e.Perturb.RemotePct)
			e.Perturb.RemotePct, want.Perturb.RemotePct = 0, 0 // the golden files may be rewritten with it since
			assert.Equal(t, want, e, "seed %s, walkers %s", s, strings.Join(ws, ","))
		}
	}
}

func TestRemotePctDrawnOnlyForWalkersThatWalkRemotely(t *testing.T) {
	seen := map[int]int{}
	for i := uint64(1); i <= 500; i++ {
		seed := Seed(i * 0x9E3779B97F4A7C15)
		for _, ws := range [][]string{{"asgct"}, {"jvmti-emulated"}, {"plugin:/x/bin/libwfdefect-stale-frame.so"}} {
			assert.Zero(t, Derive(seed, Pins{Walkers: ws}).Perturb.RemotePct, "%v never walks another thread", ws)
		}
		vs := Derive(seed, Pins{Walkers: []string{"asgct", "vmstructs"}})
		plug := Derive(seed, Pins{Walkers: []string{"plugin:/x/libfpwalk.so"}})
		assert.Equal(t, vs.Perturb.RemotePct, plug.Perturb.RemotePct)
		require.NoError(t, vs.Validate())
		seen[vs.Perturb.RemotePct]++
	}
	assert.Len(t, seen, 4)
	assert.Greater(t, seen[0], 300, "off in most episodes")
	bad := Derive(1, Pins{})
	bad.Perturb.RemotePct = 101
	assert.Error(t, bad.Validate())
}
