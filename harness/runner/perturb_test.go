package runner

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/results"
)

// The seeded compiler perturbations take effect in a real JVM: Shenandoah in place of the
// drawn collector, -XX:-Inline, and a CompileCommand on the workload's classes, as the JVM
// itself reports them (-XX:+PrintFlagsFinal, its CompileCommand echo), with walks landing.
func TestSeededCompilerPerturbationsTakeEffect(t *testing.T) {
	var e episode.Episode
	found := false
	for s := episode.Seed(1); s < 200000 && !found; s++ {
		e = episode.Derive(s, episode.Pins{Workload: "recursion", Walkers: []string{"asgct"}, Mode: "cpu", IntervalUs: 1000, DurationMs: 3000, Threads: 2})
		found = slices.Contains(e.JVMFlags, "-XX:+UseShenandoahGC") && slices.Contains(e.JVMFlags, "-XX:-Inline") &&
			slices.Contains(e.JVMFlags, "-XX:CompileCommand=dontinline,walkfuzz.workloads.Recursion*::*") &&
			!slices.Contains(e.JVMFlags, "-Xint")
	}
	require.True(t, found, "no seed draws all three perturbations")
	t.Logf("seed %s: %v", e.Seed, e.JVMFlags)
	e.JVMFlags = append(e.JVMFlags, "-XX:+PrintFlagsFinal")
	e.Perturb = episode.Perturbations{}
	for _, j := range jdksUnderTest(t) {
		t.Run("jdk"+j.Version, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			res, err := Run(context.Background(), e, j, Options{Dir: dir})
			require.NoError(t, err)
			require.Equal(t, results.OK, res.Outcome, res.Reason)
			assert.Greater(t, res.Signals.Walked, uint64(100))
			out, err := os.ReadFile(filepath.Join(dir, Stdout))
			require.NoError(t, err)
			for _, re := range []string{`bool UseShenandoahGC\s+= true`, `bool Inline\s+= false`, `bool UseParallelGC\s+= false`,
				`CompileCommand: dontinline walkfuzz/workloads/Recursion\*\.\*`} {
				assert.Regexp(t, regexp.MustCompile(re), string(out))
			}
		})
	}
}
