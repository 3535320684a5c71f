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
			assert.Equal(t, want, e, "seed %s, walkers %s", s, strings.Join(ws, ","))
		}
	}
}
