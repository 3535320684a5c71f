package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/results"
)

var reachedLine = regexp.MustCompile(`(?m)^walkfuzz-whitebox: method (\S+) level ([0-4]) reached$`)

// Forced compilation per method (jit_period_ms): every 50 ms WhiteBox drives 8 seeded methods
// of the recursion workload to seeded levels 0-4 while asgct walks. The workload prints a line
// the first time a method reaches a forced level; at least one must, on each JDK.
func TestWhiteBoxForcesLevels(t *testing.T) {
	for _, j := range jdksUnderTest(t) {
		t.Run("jdk"+j.Version, func(t *testing.T) {
			e := testEpisode("recursion", 4000)
			e.Perturb.JITPeriodMs, e.Perturb.JITMethods, e.Perturb.JITLevels = 50, 8, "0,1,2,3,4"
			require.NoError(t, e.Validate())
			dir := filepath.Join(t.TempDir(), "run")
			res, err := Run(context.Background(), e, j, Options{Dir: dir})
			require.NoError(t, err)
			require.Equal(t, results.OK, res.Outcome, "seed %s reason: %s", e.Seed, res.Reason)
			out, err := os.ReadFile(filepath.Join(dir, Stdout))
			require.NoError(t, err)
			perLevel := map[int]int{}
			methods := map[string]bool{}
			for _, m := range reachedLine.FindAllStringSubmatch(string(out), -1) {
				l, _ := strconv.Atoi(m[2])
				perLevel[l]++
				methods[m[1]] = true
			}
			t.Logf("%s: (method, level) pairs reached per level %v, %d methods", j.Version, perLevel, len(methods))
			for _, c := range res.WorkloadOut.Checks {
				if c.Name == "jit" {
					t.Logf("%s: %s", j.Version, c.Detail)
				}
			}
			for col, cls := range res.Classes {
				t.Logf("%s %s: %s", j.Version, col, shares(cls))
			}
			assert.NotEmpty(t, perLevel, "WhiteBox reported no forced level reached: %s", tail(out))
		})
	}
}

func tail(b []byte) string {
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return fmt.Sprintf("...%s", b)
}
