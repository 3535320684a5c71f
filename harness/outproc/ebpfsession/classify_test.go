package ebpfsession

import (
	"reflect"
	"testing"

	"github.com/walkfuzz/walkfuzz/harness/walkclass"
	"github.com/walkfuzz/walkfuzz/walkers/ebpf"
)

// fakeSymbols names a JVM-shaped address space as ebpf.Symbolizer would (walkers/ebpf's
// TestSymbolize holds the same process): a code cache covered by a perf map, a libjvm and
// a libc.
type fakeSymbols []struct {
	start, end uint64
	kind       ebpf.Kind
	name       string
}

func (f fakeSymbols) Symbolize(pc uint64) ebpf.Frame {
	for _, r := range f {
		if pc >= r.start && pc < r.end {
			return ebpf.Frame{PC: pc, Kind: r.kind, Name: r.name}
		}
	}
	return ebpf.Frame{PC: pc, Kind: ebpf.Unresolved}
}

var fakeProcess = fakeSymbols{
	{0x10000, 0x11000, ebpf.Interpreter, "Interpreter"},
	{0x11000, 0x11100, ebpf.Stub, "StubRoutines (1)"},
	{0x12000, 0x12200, ebpf.JIT, "long Recursion.recurse(int, long)"},
	{0x101000, 0x101100, ebpf.Native, "_ZN9JavaCalls11call_helperEP9JavaValueRK12methodHandleP17JavaCallArgumentsP10JavaThread"},
	{0x102000, 0x102100, ebpf.Native, "_ZL19thread_native_entryP6Thread"},
	{0x203000, 0x203100, ebpf.Native, "start_thread"},
	{0x204000, 0x204040, ebpf.Native, "clone3"},
}

func TestClassifyEBPF(t *testing.T) {
	const (
		interp  = 0x10010
		stub    = 0x11010
		recurse = 0x12010
		helper  = 0x101010
		entry   = 0x102010
		start   = 0x203010
		clone   = 0x204010
		anon    = 0x1c000 // code cache, not in the perf map
		wild    = 0x900000
	)
	samples := []ebpf.Sample{
		{Frames: []uint64{recurse, recurse, recurse, stub, helper, entry, start, clone}, Count: 5},
		{Frames: []uint64{recurse, interp, stub, helper, entry}, Count: 2},    // root is libjvm's
		{Frames: []uint64{recurse, anon, interp, stub, helper, entry, start}}, // an unnamed frame
		{Frames: []uint64{recurse, recurse, recurse, recurse}, Count: 3},      // depth 4 reached
		{Frames: []uint64{recurse, interp, wild}},                             // short
		{Frames: []uint64{recurse, entry, start, wild, wild}},                 // garbage past root
		{Err: -14, Count: 4}, // EFAULT
		{},                   // no frame
	}
	got := Classify(samples, fakeProcess, 4)
	want := Summary{
		Samples: 18,
		Classes: map[string]uint64{
			walkclass.OK: 9, walkclass.TruncatedDepth: 3, walkclass.TruncatedShort: 1, "error:EFAULT": 4, EBPFEmpty: 1,
		},
		FullySymbolized:        5 + 2 + 3 + 1,
		Frames:                 map[string]uint64{"jit": 15 + 2 + 1 + 12 + 1 + 1, "stub": 5 + 2 + 1, "native": 20 + 4 + 3 + 2, "interpreter": 2 + 1 + 1, "unresolved": 1 + 1},
		SamplesWithUnresolved:  2,
		SamplesWithInterpreted: 2 + 1 + 1,
		PastRoot:               2,
		Methods:                map[string]uint64{"long Recursion.recurse(int, long)": 15 + 2 + 1 + 12 + 1 + 1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Classify:\n got  %+v\n want %+v", got, want)
	}
}

// A return address right after a method's last instruction belongs to that method.
func TestClassifyEBPFReturnAddress(t *testing.T) {
	end := uint64(0x12000 + 0x200)
	got := Classify([]ebpf.Sample{{Frames: []uint64{0x12010, end, 0x102010}}}, fakeProcess, 10)
	if got.Frames["jit"] != 2 || got.Classes[walkclass.OK] != 1 {
		t.Errorf("return address at a method's end not attributed to it: %+v", got)
	}
}

func TestEBPFThreadRoots(t *testing.T) {
	for name, want := range map[string]bool{
		"start_thread":                     true,
		"clone3":                           true,
		"_ZL19thread_native_entryP6Thread": true,
		"_ZN6Thread8call_runEv":            false,
		"start_thread_x":                   false,
	} {
		if got := isThreadRoot(name); got != want {
			t.Errorf("isThreadRoot(%q) = %v, want %v", name, got, want)
		}
	}
}
