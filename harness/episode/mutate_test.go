package episode

import (
	"reflect"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// differing names the fields two episodes differ in (the seed left out).
func differing(a, b Episode) []string {
	var out []string
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	for i := 0; i < va.NumField(); i++ {
		name := va.Type().Field(i).Name
		if name == "Seed" {
			continue
		}
		fa, fb := va.Field(i), vb.Field(i)
		if fa.Kind() == reflect.Struct {
			for k := 0; k < fa.NumField(); k++ {
				if !reflect.DeepEqual(fa.Field(k).Interface(), fb.Field(k).Interface()) {
					out = append(out, name+"."+fa.Type().Field(k).Name)
				}
			}
			continue
		}
		if !reflect.DeepEqual(fa.Interface(), fb.Interface()) {
			out = append(out, name)
		}
	}
	return out
}

func TestMutateChangesOneDimension(t *testing.T) {
	dims := map[string]int{}
	for s := Seed(1); s <= 400; s++ {
		parent := Derive(s*7919, Pins{Workload: "deopt", Walkers: []string{"asgct", "vmstructs"}, JDK: "17"})
		before := parent.JSON()
		child, dim := Mutate(parent, s, nil)
		require.Equal(t, string(before), string(parent.JSON()), "the parent is not written into")
		assert.Equal(t, s, child.Seed)
		assert.Equal(t, parent.Workload, child.Workload)
		assert.Equal(t, parent.Walkers, child.Walkers)
		assert.Equal(t, parent.JDK, child.JDK)
		require.NoError(t, child.Validate())
		diff := differing(parent, child)
		if dim == "mode" { // cpu+wall's second signal is part of the mode
			diff = slices.DeleteFunc(diff, func(f string) bool { return f == "Signals.Signal2" })
		}
		if dim == "jit" { // period, method count and levels are one dimension
			diff = slices.DeleteFunc(diff, func(f string) bool { return f == "Perturb.JITMethods" || f == "Perturb.JITLevels" })
			if len(diff) == 0 {
				diff = []string{"Perturb.JIT*"}
			}
		}
		if dim == "seed" {
			assert.Empty(t, diff)
		} else {
			assert.Len(t, diff, 1, "%s changed %v", dim, diff)
		}
		dims[dim]++
		again, dim2 := Mutate(parent, s, nil)
		assert.Equal(t, child, again, "a mutation is a function of parent and seed")
		assert.Equal(t, dim, dim2)
	}
	for _, d := range Dimensions {
		assert.Greater(t, dims[d], 0, "dimension %s never mutated in 400 draws", d)
	}
}

func TestMutateKeepsToAllowedModes(t *testing.T) {
	for s := Seed(1); s <= 200; s++ {
		parent := Derive(s, Pins{Modes: []string{"wall", "tgkill"}})
		child, _ := Mutate(parent, s+1000, []string{"wall", "tgkill"})
		assert.Contains(t, []string{"wall", "tgkill"}, child.Signals.Mode)
	}
}

// vthreads is drawn last, in place of the workload drawn first, only where the caller's
// workload list allows it.
func TestVThreadsDrawnLate(t *testing.T) {
	n := 0
	for s := Seed(1); s <= 2000; s++ {
		if Derive(s*0x9E3779B97F4A7C15, Pins{}).Workload == "vthreads" {
			n++
		}
		assert.NotEqual(t, "vthreads", Derive(s, Pins{Workloads: []string{"recursion", "loops"}}).Workload)
	}
	assert.InDelta(t, 120, n, 45, "about 6% of seeds")
}

// calls came after vthreads: drawn last too (about 5% of the seeds vthreads did not take), only
// where the workload list allows it, and a seed that did not draw it keeps its workload.
func TestCallsDrawnLate(t *testing.T) {
	n := 0
	for s := Seed(1); s <= 2000; s++ {
		e := Derive(s*0x9E3779B97F4A7C15, Pins{})
		if e.Workload == "calls" {
			n++
		} else {
			assert.Contains(t, Builtin[:12], e.Workload)
		}
		assert.NotEqual(t, "calls", Derive(s, Pins{Workloads: []string{"recursion", "loops"}}).Workload)
	}
	assert.InDelta(t, 94, n, 40, "about 5% of seeds")
	assert.Equal(t, "calls", Derive(7, Pins{Workloads: []string{"calls"}}).Workload)
}

// Transfer moves an episode to other walkers or another JDK and nothing else, with the
// read-fault rate only where a walker takes it.
func TestTransferChangesOnlyWalkersOrJDK(t *testing.T) {
	parent := Derive(0x77, Pins{Workload: "recursion", Walkers: []string{"vmstructs"}, JDK: "17"})
	parent.Perturb.ReadFaultPPM = 100
	parent.Perturb.RemotePct = 25
	c := Transfer(parent, 0x78, nil, "25", nil)
	assert.Equal(t, []string{"JDK"}, differing(parent, c))
	assert.Equal(t, Seed(0x78), c.Seed)
	require.NoError(t, c.Validate())

	c = Transfer(parent, 0x79, []string{"asgct"}, "", nil)
	assert.ElementsMatch(t, []string{"Walkers", "Perturb.ReadFaultPPM", "Perturb.RemotePct"}, differing(parent, c))
	assert.Zero(t, c.Perturb.ReadFaultPPM, "ASGCT takes no read faults")
	assert.Zero(t, c.Perturb.RemotePct, "ASGCT never walks another thread")
	require.NoError(t, c.Validate())

	back := Transfer(c, 0x7a, []string{"asgct", "vmstructs"}, "", nil)
	donor := Derive(0x7a, Pins{Workload: "recursion", Walkers: back.Walkers, JDK: "17"})
	assert.Equal(t, donor.Perturb.ReadFaultPPM, back.Perturb.ReadFaultPPM)
	assert.Equal(t, donor.Perturb.RemotePct, back.Perturb.RemotePct)
	assert.Equal(t, []string{"asgct"}, c.Walkers, "the parent is not written")
}

// A profiler walker runs only in a mode its profiler has an engine for: ddprof has no
// cpu-timer (a campaign's draw of it was a harness error), async-profiler has; neither has
// cpu+wall. A mode asked for is kept (the session refuses it with one line).
func TestProfilerModesDrawn(t *testing.T) {
	modes := map[string]map[string]int{"ddprof:vm": {}, "ap:vm": {}}
	for s := Seed(1); s <= 3000; s++ {
		for w := range modes {
			e := Derive(s*0x9E3779B97F4A7C15, Pins{Walkers: []string{w}})
			modes[w][e.Signals.Mode]++
		}
	}
	assert.Zero(t, modes["ddprof:vm"]["cpu-timer"], "%v", modes["ddprof:vm"])
	assert.Zero(t, modes["ddprof:vm"][ModeCPUWall])
	assert.Zero(t, modes["ap:vm"][ModeCPUWall])
	assert.Greater(t, modes["ap:vm"]["cpu-timer"], 0, "%v", modes["ap:vm"])
	assert.Greater(t, modes["ddprof:vm"]["wall"], 0)
	assert.Equal(t, "cpu-timer", Derive(7, Pins{Walkers: []string{"ddprof:vm"}, Mode: "cpu-timer"}).Signals.Mode)
	assert.Equal(t, "wall", ProfilerMode([]string{"ddprof:vm"}, "cpu-timer", []string{"wall", "cpu-timer"}))
}
