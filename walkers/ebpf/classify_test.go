package ebpf

import (
	"debug/elf"
	"reflect"
	"strings"
	"testing"
)

// fakeProcess is a JVM-shaped address space: a code cache covered by a perf map, and a
// libjvm and libc whose symbols are planted in the ELF cache.
func fakeProcess(t *testing.T) *Symbolizer {
	t.Helper()
	pm, err := ParsePerfMap(strings.NewReader(
		"0x10000 0x1000 Interpreter\n" +
			"0x11000 0x100 StubRoutines (1)\n" +
			"0x12000 0x200 long Recursion.recurse(int, long)\n"))
	if err != nil {
		t.Fatal(err)
	}
	plant := func(path string, syms ...elfSym) {
		elfCacheMu.Lock()
		defer elfCacheMu.Unlock()
		elfCache[path] = &elfSymbols{syms: syms, loads: []elf.ProgHeader{{Type: elf.PT_LOAD, Off: 0, Vaddr: 0, Filesz: 0x10000}}}
	}
	plant("/fake/libjvm.so",
		elfSym{0x1000, 0x100, "_ZN9JavaCalls11call_helperEP9JavaValueRK12methodHandleP17JavaCallArgumentsP10JavaThread"},
		elfSym{0x2000, 0x100, "_ZL19thread_native_entryP6Thread"})
	plant("/fake/libc.so.6", elfSym{0x3000, 0x100, "start_thread"}, elfSym{0x4000, 0x40, "clone3"})
	return newSymbolizer([]mapping{
		{Start: 0x10000, End: 0x20000, Exec: true},                            // code cache
		{Start: 0x100000, End: 0x110000, Exec: true, Path: "/fake/libjvm.so"}, // offset 0
		{Start: 0x200000, End: 0x210000, Offset: 0, Exec: true, Path: "/fake/libc.so.6"},
	}, pm)
}

func TestClassify(t *testing.T) {
	sym := fakeProcess(t)
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
	samples := []Sample{
		{Frames: []uint64{recurse, recurse, recurse, stub, helper, entry, start, clone}, Count: 5},
		{Frames: []uint64{recurse, interp, stub, helper, entry}, Count: 2},    // root is libjvm's
		{Frames: []uint64{recurse, anon, interp, stub, helper, entry, start}}, // an unnamed frame
		{Frames: []uint64{recurse, recurse, recurse, recurse}, Count: 3},      // depth 4 reached
		{Frames: []uint64{recurse, interp, wild}},                             // short
		{Frames: []uint64{recurse, entry, start, wild, wild}},                 // garbage past root
		{Err: -14, Count: 4}, // EFAULT
		{},                   // no frame
	}
	got := Classify(samples, sym, 4)
	want := Summary{
		Samples: 18,
		Classes: map[string]uint64{
			ClassOK: 9, ClassTruncatedDepth: 3, ClassTruncatedShort: 1, "error:EFAULT": 4, ClassEmpty: 1,
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

func TestSymbolizeReturnAddress(t *testing.T) {
	sym := fakeProcess(t)
	// A call that is the last instruction of recurse returns to the first byte after it.
	end := uint64(0x12000 + 0x200)
	if f := sym.Symbolize(end); f.Kind != Unresolved {
		t.Errorf("Symbolize(end of method) = %v, want unresolved", f)
	}
	got := Classify([]Sample{{Frames: []uint64{0x12010, end, 0x102010}}}, sym, 10)
	if got.Frames["jit"] != 2 || got.Classes[ClassOK] != 1 {
		t.Errorf("return address at a method's end not attributed to it: %+v", got)
	}
}

func TestThreadRoots(t *testing.T) {
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
