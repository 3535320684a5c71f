package results

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite testdata/*/results.json as this build encodes them")

// designKeys are the keys DESIGN.md's contract names, as paths into results.json; "*" is any
// walker (or pair) present. Tools and tests outside walkfuzz read these.
var designKeys = [][]string{
	{"seed"}, {"walkers"}, {"workload"}, {"duration_s"},
	{"jdk", "version"}, {"jdk", "path"},
	{"outcome"},
	{"signals", "interval_us"}, {"signals", "mode"}, {"signals", "requested"}, {"signals", "delivered"}, {"signals", "walked"},
	{"classes", "*", "ok"},
	{"latency_ns", "*", "p50"}, {"latency_ns", "*", "p99"}, {"latency_ns", "*", "max"},
}

// Keys only some runs have: a crash, known-stack regions, two walkers in one handler.
var designKeysWhen = map[string][][]string{
	"crash":        {{"crash", "title"}, {"crash", "bucket"}},
	"known_stack":  {{"known_stack", "*", "tagged"}, {"known_stack", "*", "ok"}, {"known_stack", "*", "mismatch:frame"}, {"known_stack", "*", "mismatch:missing"}},
	"differential": {{"differential", "*", "samples"}, {"differential", "*", "agree"}, {"differential", "*", "both_ok"}},
	"join": {{"join", "*", "samples"}, {"join", "*", "joined"}, {"join", "*", "our_signals"}, {"join", "*", "our_joined"},
		{"join", "*", "shed"}, {"join", "*", "joined_rate"}, {"join", "*", "our_rate"}, {"join", "*", "offset_us"}, {"join", "*", "gap_p99_us"}},
}

// lookup follows path through decoded JSON; "*" takes every member of an object.
func lookup(v any, path []string) bool {
	if len(path) == 0 {
		return true
	}
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	if path[0] != "*" {
		next, ok := m[path[0]]
		return ok && lookup(next, path[1:])
	}
	for _, next := range m {
		if !lookup(next, path[1:]) {
			return false
		}
	}
	return len(m) > 0
}

// Each testdata/<case>/results.json is a real run's (testdata/README says which). Reading
// and writing it again gives the same bytes: no key this build drops or renames, and every
// key DESIGN.md promises is there.
func TestResultsGolden(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("testdata", "*", "results.json"))
	require.NoError(t, err)
	require.NotEmpty(t, dirs)
	seen := map[string]bool{}
	for _, path := range dirs {
		dir := filepath.Dir(path)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			golden, err := os.ReadFile(path)
			require.NoError(t, err)
			r, err := Read(dir)
			require.NoError(t, err)
			out := t.TempDir()
			require.NoError(t, r.Write(out))
			got, err := os.ReadFile(filepath.Join(out, "results.json"))
			require.NoError(t, err)
			if *update {
				require.NoError(t, os.WriteFile(path, got, 0o644))
				golden = got
			}
			assert.JSONEq(t, string(golden), string(got), "%s does not survive a read and a write", path)
			assert.Equal(t, string(golden), string(got), "%s: encoded differently (run with -update if on purpose)", path)

			var doc map[string]any
			require.NoError(t, json.Unmarshal(got, &doc))
			for _, k := range designKeys {
				assert.True(t, lookup(doc, k), "%s lacks %v", path, k)
			}
			for top, keys := range designKeysWhen {
				if _, ok := doc[top]; !ok {
					continue
				}
				seen[top] = true
				for _, k := range keys {
					assert.True(t, lookup(doc, k), "%s lacks %v", path, k)
				}
			}
		})
	}
	for top := range designKeysWhen {
		assert.True(t, seen[top], "no golden run has %q: add one", top)
	}
}
