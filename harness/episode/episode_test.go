package episode

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite golden episodes")

// The same seed must give the same episode on every machine: these files pin it.
func TestGoldenSeeds(t *testing.T) {
	for _, s := range []Seed{0x5eed, 0x1, 0xdeadbeef, 0xffffffffffffffff, 0x123456789abcdef0} {
		e := Derive(s, Pins{})
		path := filepath.Join("testdata", "golden", s.String()+".json")
		if *update {
			require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
			require.NoError(t, os.WriteFile(path, e.JSON(), 0o644))
		}
		want, err := os.ReadFile(path)
		require.NoError(t, err, "run go test ./harness/episode -update")
		assert.JSONEq(t, string(want), string(e.JSON()), "seed %s", s)
	}
}

func TestEveryDerivedEpisodeIsValid(t *testing.T) {
	for i := uint64(0); i < 5000; i++ {
		e := Derive(Seed(i*0x9E3779B97F4A7C15), Pins{})
		require.NoError(t, e.Validate(), "seed %s", e.Seed)
		var back Episode
		require.NoError(t, json.Unmarshal(e.JSON(), &back))
		assert.Equal(t, e, back)
	}
}

func TestPinsOverrideOnlyTheirDimension(t *testing.T) {
	free := Derive(0x5eed, Pins{})
	pinned := Derive(0x5eed, Pins{Workload: "h2", Walkers: []string{"asgct", "vmstructs"}, IntervalUs: 37})
	assert.Equal(t, "h2", pinned.Workload)
	assert.Equal(t, []string{"asgct", "vmstructs"}, pinned.Walkers)
	assert.Equal(t, 37, pinned.Signals.IntervalUs)
	assert.Equal(t, free.Signals.Mode, pinned.Signals.Mode)
	assert.Equal(t, free.JVMFlags, pinned.JVMFlags)
	none := []string{}
	assert.Empty(t, Derive(0x5eed, Pins{JVMFlags: &none}).JVMFlags)
}

func TestParseSeed(t *testing.T) {
	for in, want := range map[string]Seed{"0x5eed": 0x5eed, "24301": 24301, " 0X10 ": 16} {
		got, err := ParseSeed(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got)
	}
	for _, bad := range []string{"", "0xZZ", "seed", "-1", "0x1ffffffffffffffff"} {
		_, err := ParseSeed(bad)
		assert.ErrorContains(t, err, "malformed seed", bad)
	}
}

func TestValidateNamesTheFix(t *testing.T) {
	base := Derive(1, Pins{})
	cases := map[string]func(e *Episode){
		"under the 10us floor": func(e *Episode) { e.Signals.IntervalUs = 5 },
		"unknown signal mode":  func(e *Episode) { e.Signals.Mode = "itimer" },
		"bad --inject":         func(e *Episode) { e.Inject = "segv@0" },
		"has no walker":        func(e *Episode) { e.Walkers = nil },
		`unknown walker "asgtc": use one of asgct, vmstructs,`: func(e *Episode) { e.Walkers = []string{"asgct", "asgtc"} },
		"walker plugin /nonexistent/libx.so not found: give the path of a built .so": func(e *Episode) {
			e.Walkers = []string{"plugin:/nonexistent/libx.so"}
		},
	}
	for want, mut := range cases {
		e := base
		mut(&e)
		assert.ErrorContains(t, e.Validate(), want)
	}
}

// A machine that refuses a signal mode gets the same episodes with another mode in its place;
// allowing every mode changes nothing.
func TestAllowedModesReplaceOnlyTheRefusedMode(t *testing.T) {
	noCPU := []string{"wall", "tgkill", "cpu-timer"}
	moved := map[string]int{}
	for i := uint64(0); i < 2000; i++ {
		seed := Seed(i * 0x9E3779B97F4A7C15)
		free := Derive(seed, Pins{})
		assert.Equal(t, free, Derive(seed, Pins{Modes: Modes}), "seed %s", seed)
		narrowed := Derive(seed, Pins{Modes: noCPU})
		assert.NotEqual(t, "cpu", narrowed.Signals.Mode, "seed %s", seed)
		if free.Signals.Mode == ModeCPUWall { // needs the cpu engine: drawn apart, left out here
			assert.NotEqual(t, ModeCPUWall, narrowed.Signals.Mode, "seed %s", seed)
			continue
		}
		if free.Signals.Mode != "cpu" {
			assert.Equal(t, free, narrowed, "seed %s", seed)
			continue
		}
		moved[narrowed.Signals.Mode]++
		narrowed.Signals.Mode = "cpu"
		assert.Equal(t, free, narrowed, "seed %s: only the mode changes", seed)
		assert.Equal(t, narrowed.Signals.Mode, Derive(seed, Pins{Mode: "cpu", Modes: noCPU}).Signals.Mode, "a pinned mode is the user's choice")
	}
	// The replacements keep the allowed modes' weights (25:10:5).
	assert.Greater(t, moved["wall"], moved["tgkill"])
	assert.Greater(t, moved["tgkill"], moved["cpu-timer"])
	assert.Positive(t, moved["cpu-timer"])
}

func TestReadFaultsDrawnForVMStructsAndPlugins(t *testing.T) {
	seen := map[int]int{}
	for i := uint64(1); i <= 500; i++ {
		seed := Seed(i * 0x9E3779B97F4A7C15)
		asgct := Derive(seed, Pins{Walkers: []string{"asgct"}})
		assert.Zero(t, asgct.Perturb.ReadFaultPPM, "asgct reads no memory through the agent")
		vs := Derive(seed, Pins{Walkers: []string{"asgct", "vmstructs"}})
		plug := Derive(seed, Pins{Walkers: []string{"plugin:/x/libfpwalk.so"}})
		assert.Equal(t, vs.Perturb.ReadFaultPPM, plug.Perturb.ReadFaultPPM)
		assert.Contains(t, []int{0, 100, 1000, 10000, 100000}, vs.Perturb.ReadFaultPPM)
		seen[vs.Perturb.ReadFaultPPM]++
		// Drawn last: every other dimension is what the same seed gives without it.
		assert.NoError(t, vs.Validate())
		vs.Perturb.ReadFaultPPM = 0
		vs.Perturb.RemotePct = 0 // drawn after it, for the same walkers
		vs.Walkers = asgct.Walkers
		assert.Equal(t, asgct, vs)
	}
	assert.Len(t, seen, 5)
	assert.Greater(t, seen[0], 200, "off in most episodes")
	bad := Derive(1, Pins{})
	bad.Perturb.ReadFaultPPM = 1000001
	assert.Error(t, bad.Validate())
}

// cpu+wall (two engines, so walkers are re-entered from their own handler) is drawn last and
// rarely, needs cpu and wall, and brings its second signal.
func TestTwoEnginesDrawnRarely(t *testing.T) {
	n := 0
	for i := uint64(1); i <= 2000; i++ {
		seed := Seed(i * 0x9E3779B97F4A7C15)
		e := Derive(seed, Pins{})
		require.NoError(t, e.Validate())
		if e.Signals.Mode != ModeCPUWall {
			assert.Zero(t, e.Signals.Signal2)
			continue
		}
		n++
		assert.Equal(t, SignalWall, e.Signals.Signal2)
		assert.NotEqual(t, ModeCPUWall, Derive(seed, Pins{Modes: []string{"wall", "tgkill"}}).Signals.Mode)
		assert.Equal(t, "tgkill", Derive(seed, Pins{Mode: "tgkill"}).Signals.Mode, "a pinned mode wins")
	}
	assert.Greater(t, n, 50)
	assert.Less(t, n, 200)
	pinned := Derive(1, Pins{Mode: ModeCPUWall})
	assert.Equal(t, SignalWall, pinned.Signals.Signal2)
	pinned.Signals.Signal2 = pinned.Signals.Signal
	assert.Error(t, pinned.Validate())
}

// JIT forcing and class redefinition are drawn last (issue 16), only for built-in workloads,
// and a hand-written episode with them is checked.
func TestJITAndRedefineDrawnLate(t *testing.T) {
	jit, redef := 0, 0
	for i := uint64(0); i < 2000; i++ {
		seed := Seed(i * 0x9E3779B97F4A7C15)
		e := Derive(seed, Pins{})
		if e.Perturb.JITPeriodMs > 0 {
			jit++
			levels, err := ParseJITLevels(e.Perturb.JITLevels)
			require.NoError(t, err)
			assert.NotEmpty(t, levels)
			assert.True(t, e.Perturb.JITMethods >= 1 && e.Perturb.JITMethods <= 8)
		}
		if e.Perturb.RedefineMs > 0 {
			redef++
		}
		app := Derive(seed, Pins{Workload: "h2"})
		assert.Zero(t, app.Perturb.JITPeriodMs, "seed %s", seed)
		assert.Zero(t, app.Perturb.RedefineMs, "seed %s", seed)
	}
	assert.InDelta(t, 300, jit, 70, "about 15%% of seeds force the JIT")
	assert.InDelta(t, 240, redef, 60, "about 12%% of seeds redefine classes")
	p := Plain(Pins{})
	assert.Zero(t, p.Perturb.JITPeriodMs)
	assert.Zero(t, p.Perturb.RedefineMs)

	base := Derive(1, Pins{})
	for want, mut := range map[string]func(e *Episode){
		"without jit_levels":            func(e *Episode) { e.Perturb.JITPeriodMs, e.Perturb.JITMethods = 50, 2 },
		"bad jit_levels \"0,5\"":        func(e *Episode) { e.Perturb.JITPeriodMs, e.Perturb.JITMethods, e.Perturb.JITLevels = 50, 2, "0,5" },
		"jit_methods 0 out of range":    func(e *Episode) { e.Perturb.JITPeriodMs, e.Perturb.JITLevels = 50, "4" },
		"act in the built-in workloads": func(e *Episode) { e.Workload, e.Perturb.RedefineMs = "h2", 20 },
		"negative perturbation":         func(e *Episode) { e.Perturb.RedefineMs = -1 },
	} {
		e := base
		mut(&e)
		assert.ErrorContains(t, e.Validate(), want)
	}
	ok := base
	ok.Perturb.JITPeriodMs, ok.Perturb.JITMethods, ok.Perturb.JITLevels, ok.Perturb.RedefineMs = 50, 3, "0,4", 20
	require.NoError(t, ok.Validate())
	var back Episode
	require.NoError(t, json.Unmarshal(ok.JSON(), &back))
	assert.Equal(t, ok, back, "stored whole in the episode file")
}
