package runner

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/results"
	"github.com/walkfuzz/walkfuzz/harness/walkclass"
)

// The vmstructs walker's own checks, on the real agent. They replace the standalone test
// agent walkers/vmstructs/test (vstest.c and run.sh), which compared the walker with ASGCT in
// every signal on JDK 17 and 25 under -Xint, -Xcomp and default tiered compilation, checked
// that its callers sit at invokes, walked garbage contexts on every JDK, and hid a VMStructs
// entry to see the refusal:
//   -Xint, -Xcomp agreement          TestDifferentialAgreement (walkers_test.go)
//   tiered agreement, frame validity TestVMStructsTieredAgreement (here)
//   garbage contexts                 TestVMStructsSurvivesRegisterFuzzing (first JDK) and
//                                    TestVMStructsRegisterFuzzingEveryJDK (here, the others)
//   refusal by name                  TestVMStructsUnsupportedJDK (walkers_test.go) and
//                                    TestVMStructsRefusesEachKindOfEntry (here)

// vmstructsRun runs recursion for 5 s under walkers with registerPct% perturbed walks; the
// JVM must end the run on its own.
func vmstructsRun(t *testing.T, j jdk.JDK, registerPct int, walkers ...string) *results.Results {
	t.Helper()
	e := testEpisode("recursion", 5000)
	e.Walkers = walkers
	e.Perturb.RegisterPct = registerPct
	res, err := Run(context.Background(), e, j, Options{Dir: filepath.Join(t.TempDir(), "run")})
	require.NoError(t, err)
	require.Equal(t, results.OK, res.Outcome, "the JVM must live on: %s", res.Reason)
	return res
}

// Default tiered compilation, where frames move between the interpreter, C1 and C2 during the
// run: where both walkers return frames they name the same methods at the same depths, and
// the frames vmstructs returns pass the frame-validity oracle (each caller's bci is an invoke).
func TestVMStructsTieredAgreement(t *testing.T) {
	for _, j := range jdksUnderTest(t) {
		t.Run("jdk"+j.Version, func(t *testing.T) {
			res := vmstructsRun(t, j, 0, "asgct", "vmstructs")
			d := res.Differential["asgct~vmstructs"]
			require.NotNil(t, d, "no differential section")
			require.Greater(t, d["both_ok"], uint64(500))
			c := res.Classes["vmstructs"]
			var walks uint64
			for _, n := range c {
				walks += n
			}
			t.Logf("%s tiered: same methods on %d of %d samples both walked (%.4f); %v; vmstructs %v",
				j.Version, d["same_methods"], d["both_ok"], float64(d["same_methods"])/float64(d["both_ok"]), d, c)
			assert.LessOrEqual(t, float64(d["differ:frame"])/float64(d["both_ok"]), 0.01, "a method differs at the same depth")
			assert.Greater(t, c["ok"], c["truncated:short"])
			assert.LessOrEqual(t, float64(c["invalid"]), 0.001*float64(walks), "frames that cannot be right: %v", c)
			// Top frame kinds (the campaign's feedback tuples): vmstructs names tiers, and tiered
			// recursion is caught both interpreted and compiled; ASGCT names none.
			tops := res.TopKinds["vmstructs"][walkclass.OK]
			t.Logf("top kinds: vmstructs %v, asgct %v", res.TopKinds["vmstructs"], res.TopKinds["asgct"])
			assert.Positive(t, tops["interpreted"]+tops["compiled"]+tops["inlined"], "vmstructs ok walks by top kind: %v", tops)
			var sum uint64
			for _, n := range tops {
				sum += n
			}
			assert.Equal(t, c[walkclass.OK], sum, "every ok walk has a top kind")
			assert.Zero(t, res.TopKinds["asgct"][walkclass.OK]["compiled"], "ASGCT reports no tier")
		})
	}
}

// Garbage contexts on every JDK under test but the first (which
// TestVMStructsSurvivesRegisterFuzzing covers): the JVM lives on, and the walks the walker
// gives up on end in its own codes.
func TestVMStructsRegisterFuzzingEveryJDK(t *testing.T) {
	jdks := jdksUnderTest(t)
	if len(jdks) < 2 {
		t.Skip("one JDK under test: TestVMStructsSurvivesRegisterFuzzing covers it")
	}
	for _, j := range jdks[1:] {
		t.Run("jdk"+j.Version, func(t *testing.T) {
			res := vmstructsRun(t, j, 100, "vmstructs")
			assert.Zero(t, res.Classes["vmstructs"][walkclass.OK], "a perturbed walk is never among the walker's classes")
			c := res.Perturbed["vmstructs"]
			var codes uint64
			for class, n := range c {
				if strings.HasPrefix(class, "error:") {
					codes += n
				}
			}
			t.Logf("%s, every walk perturbed: %v", j.Version, c)
			assert.Greater(t, codes, uint64(100), "perturbed walks end in error codes: %v", c)
		})
	}
}

// The walker's required entries are a table of fields (with the names other JDKs use), type
// sizes and constants: hiding one of each kind is refused by that name before a run.
func TestVMStructsRefusesEachKindOfEntry(t *testing.T) {
	j := jdksUnderTest(t)[0]
	for _, c := range []struct{ hide, want string }{
		{"JavaThread::_stack_base,Thread::_stack_base", "missing JavaThread::_stack_base (or Thread::_stack_base)"},
		{"sizeof(PcDesc)", "missing sizeof(PcDesc)"},
		{"_thread_in_Java", "missing constant _thread_in_Java"},
	} {
		t.Run(c.hide, func(t *testing.T) {
			t.Setenv("WALKFUZZ_VMSTRUCTS_HIDE", c.hide)
			e := testEpisode("recursion", 2000)
			e.Walkers = []string{"vmstructs"}
			_, err := Run(context.Background(), e, j, Options{Dir: filepath.Join(t.TempDir(), "run")})
			var ue *UsageError
			require.ErrorAs(t, err, &ue)
			assert.Contains(t, err.Error(), "unsupported JDK")
			assert.Contains(t, err.Error(), c.want)
		})
	}
}
