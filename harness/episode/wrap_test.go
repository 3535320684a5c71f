package episode

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A profiler walker's episode wraps the profiler's signal for every seed: the companions
// walk, nothing moves the context the profiler gets, and the rest of the draw is unchanged.
func TestWrapProfiler(t *testing.T) {
	for seed := Seed(0); seed < 200; seed++ {
		plain := Derive(seed, Pins{Walkers: []string{"vmstructs"}})
		e := Derive(seed, Pins{Walkers: []string{"ap:vm"}})
		if e.Signals.Mode == ModeCPUWall {
			assert.Zero(t, e.Signals.Wrap, "%s: cpu+wall has no profiler engine", seed)
			continue
		}
		want := map[string]int{"cpu": 27, "cpu-timer": 27, "wall": 26, "tgkill": 26}[e.Signals.Mode]
		require.Equal(t, want, e.Signals.Wrap, "%s %s", seed, e.Signals.Mode)
		assert.Equal(t, []string{"ap:vm", "asgct", "vmstructs"}, e.Walkers)
		assert.Zero(t, e.Perturb.RegisterPct+e.Perturb.ReadFaultPPM+e.Perturb.RemotePct+e.Perturb.ReferencePct, "%s", seed)
		assert.Equal(t, plain.Workload, e.Workload)
		assert.Equal(t, plain.Signals.IntervalUs, e.Signals.IntervalUs)
		assert.Equal(t, plain.Perturb.JITPeriodMs, e.Perturb.JITPeriodMs)
		require.NoError(t, e.Validate(), "%s", seed)
	}
	e := Plain(Pins{Walkers: []string{"asgct", "ddprof:vm"}, Mode: "wall"})
	assert.Equal(t, 26, e.Signals.Wrap)
	assert.Equal(t, []string{"asgct", "ddprof:vm", "vmstructs"}, e.Walkers)
	assert.Zero(t, Plain(Pins{Walkers: []string{"asgct"}}).Signals.Wrap, "no profiler, no wrap")
}

// A mutation that changes the mode moves the wrap to the new mode's signal.
func TestMutateKeepsWrap(t *testing.T) {
	parent := Derive(0x5eed, Pins{Walkers: []string{"ap:vm"}, Mode: "cpu"})
	moved := 0
	for seed := Seed(1); seed < 300; seed++ {
		child, dim := Mutate(parent, seed, nil)
		if want := map[string]int{"cpu": 27, "cpu-timer": 27, "wall": 26, "tgkill": 26}[child.Signals.Mode]; child.Signals.Wrap != want {
			t.Fatalf("%s (%s): mode %s wraps %d, want %d", seed, dim, child.Signals.Mode, child.Signals.Wrap, want)
		}
		if child.Signals.Wrap == 26 {
			moved++
		}
		assert.Zero(t, child.Perturb.RegisterPct+child.Perturb.ReadFaultPPM+child.Perturb.RemotePct, "%s (%s)", seed, dim)
	}
	assert.Positive(t, moved, "some mutation chose wall or tgkill")
}

// What the agent refuses under wrap is bad input, one line naming the way out.
func TestWrapRefusesPerturbation(t *testing.T) {
	for _, set := range []func(*Episode){
		func(e *Episode) { e.Perturb.RegisterPct = 5 },
		func(e *Episode) { e.Perturb.ReadFaultPPM = 100 },
		func(e *Episode) { e.Perturb.RemotePct = 5 },
		func(e *Episode) { e.Perturb.ReferencePct = 10 },
		func(e *Episode) { e.Inject = "segv@10" },
	} {
		e := Plain(Pins{Walkers: []string{"ap:vm"}, Workload: "lambdas"})
		set(&e)
		err := e.Validate()
		require.Error(t, err)
		assert.Contains(t, err.Error(), "drop them, or run the profiler walker apart")
	}
}

// A profiler walker's episode never draws cpu+wall (no profiler engine for two signals):
// over many seeds, every such episode wraps a signal.
func TestProfilerEpisodesNeverDrawTwoEngines(t *testing.T) {
	for s := Seed(1); s < 2000; s++ {
		e := Derive(s, Pins{Walkers: []string{"ap:vm"}})
		require.NotEqual(t, ModeCPUWall, e.Signals.Mode, "seed %s", s)
		require.NotZero(t, e.Signals.Wrap, "seed %s", s)
	}
	n := 0
	for s := Seed(1); s < 2000; s++ {
		if Derive(s, Pins{Walkers: []string{"asgct"}}).Signals.Mode == ModeCPUWall {
			n++
		}
	}
	assert.Positive(t, n, "other walkers still draw it")
}

// A transfer to a profiler's walker set wraps its signal like a fresh episode (companions,
// no perturbation of the context, a mode with a profiler engine); one away from it drops
// the wrap.
func TestTransferWraps(t *testing.T) {
	parent := Derive(0x5eed, Pins{Walkers: []string{"asgct"}, Mode: ModeCPUWall})
	parent.Perturb.RegisterPct = 5
	child := Transfer(parent, 0x77, []string{"ap:vm"}, "", nil)
	assert.Equal(t, []string{"ap:vm", "asgct", "vmstructs"}, child.Walkers)
	assert.Equal(t, "cpu", child.Signals.Mode, "cpu+wall has no profiler engine")
	assert.NotZero(t, child.Signals.Wrap)
	assert.Zero(t, child.Perturb.RegisterPct)
	back := Transfer(child, 0x78, []string{"vmstructs"}, "", nil)
	assert.Equal(t, []string{"vmstructs"}, back.Walkers)
	assert.Zero(t, back.Signals.Wrap, "no profiler, nothing to wrap")
}
