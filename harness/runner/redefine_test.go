package runner

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/results"
	"github.com/walkfuzz/walkfuzz/harness/walkclass"
)

var redefineLine = regexp.MustCompile(`(?m)^walkfuzz-redefine: (\d+) redefinitions.*$`)

// Class redefinition during walks (redefine_ms): classchurn (classes defined, compiled and
// unloaded) with workloads.jar as its own Java agent redefining every 20 ms (EMCP, obsolete
// methods, throwaway copies redefined and unloaded), under asgct and vmstructs in one handler.
// The workload counts its redefinitions (> 0); the run must end ok (a crash or hang here is a
// walker finding, reported with its seed) and every walker keeps classifying walks; the share
// of ok walks is logged.
func TestRedefinitionDuringWalks(t *testing.T) {
	for _, j := range jdksUnderTest(t) {
		t.Run("jdk"+j.Version, func(t *testing.T) {
			e := testEpisode("classchurn", 4000)
			e.Walkers = []string{"asgct", "vmstructs"}
			e.Perturb.RedefineMs = 20
			require.NoError(t, e.Validate())
			dir := filepath.Join(t.TempDir(), "run")
			res, err := Run(context.Background(), e, j, Options{Dir: dir})
			require.NoError(t, err)
			require.Equal(t, results.OK, res.Outcome, "finding? seed %s, walkers %v, redefine_ms 20: %s (run dir %s)", e.Seed, e.Walkers, res.Reason, dir)
			out, err := os.ReadFile(filepath.Join(dir, Stdout))
			require.NoError(t, err)
			m := redefineLine.FindSubmatch(out)
			require.NotNil(t, m, "no walkfuzz-redefine line: %s", tail(out))
			t.Logf("%s: %s", j.Version, m[0])
			n, _ := strconv.Atoi(string(m[1]))
			assert.Greater(t, n, 0, "no class was redefined")
			for _, w := range e.Walkers {
				cls := res.Classes[w]
				var total uint64
				for _, c := range cls {
					total += c
				}
				t.Logf("%s %s: %d walks, ok %.1f%%: %s", j.Version, w, total, 100*float64(cls["ok"])/float64(max(total, 1)), shares(cls))
				assert.Greater(t, total, uint64(0), "%s classified no walk", w)
				// The method table follows each redefinition (the agent lists the class again):
				// walks are judged against the bytecode they ran. Before it did, 10-17% of both
				// walkers' walks were flagged invalid here; frames of obsolete methods, which have
				// no jmethodID, stay possible.
				var invalid uint64
				for c, n := range cls {
					if walkclass.IsInvalid(c) {
						invalid += n
					}
				}
				assert.LessOrEqual(t, float64(invalid), 0.005*float64(total), "%s: walks flagged invalid under redefinition: %s", w, shares(cls))
			}
		})
	}
}
