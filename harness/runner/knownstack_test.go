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
	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/knownstack"
	"github.com/walkfuzz/walkfuzz/harness/results"
	"github.com/walkfuzz/walkfuzz/harness/walkclass"
)

func mismatches(m map[string]uint64) uint64 {
	return m[walkclass.MismatchFrame] + m[walkclass.MismatchMissing] + m[walkclass.MismatchExtra] + m[walkclass.MismatchBci]
}

// knownStackRun runs e and returns walker's known-stack counts.
func knownStackRun(t *testing.T, j jdk.JDK, e episode.Episode, walker string) map[string]uint64 {
	t.Helper()
	res, err := Run(context.Background(), e, j, Options{Dir: filepath.Join(t.TempDir(), "run")})
	require.NoError(t, err)
	require.Equal(t, results.OK, res.Outcome, res.Reason)
	ks := res.KnownStack[walker]
	require.NotNil(t, ks, "no walk landed in a known-stack region")
	t.Logf("JDK %s, %s on %s: %v", j.Version, walker, e.Workload, ks)
	return ks
}

// Walks landing in known-stack regions match the stacks the threads recorded themselves.
func TestKnownStackRegionsMatch(t *testing.T) {
	for _, j := range jdksUnderTest(t) {
		t.Run("jdk"+j.Version, func(t *testing.T) {
			ks := knownStackRun(t, j, testEpisode("recursion", 5000), "asgct")
			require.Greater(t, ks["tagged"], uint64(200))
			compared := ks[walkclass.OK] + mismatches(ks)
			require.Greater(t, compared, uint64(100))
			assert.GreaterOrEqual(t, float64(ks[walkclass.OK])/float64(compared), 0.95)
		})
	}
}

// The vmstructs walker on lambdas, checked by the oracle. Regression test: it once resolved
// the caller of C1's counter_overflow stub with ASGCT's next-PcDesc rule and reported the
// inlined scopes of a slow path (StackWalker frames from KnownStack.enter) for 2-3% of the
// tagged walks; it also walked the skeletal frames of a deoptimization in progress.
func TestKnownStackVMStructsOnLambdas(t *testing.T) {
	for _, j := range jdksUnderTest(t) {
		t.Run("jdk"+j.Version, func(t *testing.T) {
			e := testEpisode("lambdas", 5000)
			e.Walkers = []string{"vmstructs"}
			ks := knownStackRun(t, j, e, "vmstructs")
			compared := ks[walkclass.OK] + mismatches(ks)
			require.Greater(t, compared, uint64(500))
			assert.LessOrEqual(t, float64(mismatches(ks))/float64(compared), 0.002, "vmstructs names wrong frames in known-stack regions")
		})
	}
}

// The oracle can fail: with two recorded frames swapped, the same walks become mismatches.
func TestKnownStackDoctoredStackIsReported(t *testing.T) {
	j := jdksUnderTest(t)[0]
	e := testEpisode("recursion", 4000)
	swap := func(st knownstack.Stacks) {
		for _, frames := range st { // swap the first two neighbours that name different methods
			for i := 0; i+1 < len(frames); i++ {
				if frames[i].String() != frames[i+1].String() && frames[i].Method != frames[i+1].Method {
					frames[i], frames[i+1] = frames[i+1], frames[i]
					break
				}
			}
		}
	}
	res, err := Run(context.Background(), e, j, Options{Dir: filepath.Join(t.TempDir(), "run"), DoctorStacks: swap})
	require.NoError(t, err)
	require.Equal(t, results.OK, res.Outcome, res.Reason)
	ks := res.KnownStack["asgct"]
	require.NotNil(t, ks)
	t.Logf("doctored: %v", ks)
	assert.Greater(t, ks[walkclass.MismatchFrame], ks[walkclass.OK], "a swapped stack must be reported as mismatch:frame")
}

var verifyLine = regexp.MustCompile(`walkfuzz-knownstacks-verify: (\d+) records named by the agent, (\d+) differ`)

// A new call path's known stack is named by the agent from the frames its lookup took
// (JVMTI), not by StackWalker: with -Dwalkfuzz.knownstacks.verify each such record is built
// both ways in the workload and compared byte for byte, on every workload that records
// regions (loops and lambdas enter lazily and record at the exit, recursion at the entry).
func TestKnownStackAgentNamesPathsAsStackWalker(t *testing.T) {
	for _, j := range jdksUnderTest(t) {
		for _, w := range []string{"recursion", "loops", "lambdas"} {
			t.Run("jdk"+j.Version+"/"+w, func(t *testing.T) {
				e := testEpisode(w, 2500)
				e.JVMFlags = append(e.JVMFlags, "-Dwalkfuzz.knownstacks.verify=true")
				dir := filepath.Join(t.TempDir(), "run")
				res, err := Run(context.Background(), e, j, Options{Dir: dir})
				require.NoError(t, err)
				require.Equal(t, results.OK, res.Outcome, res.Reason)
				stderr, err := os.ReadFile(filepath.Join(dir, Stderr))
				require.NoError(t, err)
				m := verifyLine.FindSubmatch(stderr)
				require.NotNil(t, m, "the workload printed no verify line:\n%s", stderr)
				named, _ := strconv.Atoi(string(m[1]))
				differ, _ := strconv.Atoi(string(m[2]))
				t.Logf("%d records named by the agent, %d differ", named, differ)
				assert.GreaterOrEqual(t, named, 5, "the agent named (almost) no paths: the StackWalker fallback ran instead")
				assert.Zero(t, differ, "the agent's record differs from StackWalker's:\n%s", stderr)
			})
		}
	}
}
