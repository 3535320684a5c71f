package ebpf

import (
	"debug/elf"
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

func TestSymbolize(t *testing.T) {
	sym := fakeProcess(t)
	for pc, want := range map[uint64]Frame{
		0x10010:  {PC: 0x10010, Kind: Interpreter, Name: "Interpreter"},
		0x11010:  {PC: 0x11010, Kind: Stub, Name: "StubRoutines (1)"},
		0x12010:  {PC: 0x12010, Kind: JIT, Name: "long Recursion.recurse(int, long)"},
		0x1c000:  {PC: 0x1c000, Kind: Unresolved}, // code cache, not in the perf map
		0x102010: {PC: 0x102010, Kind: Native, Name: "_ZL19thread_native_entryP6Thread", Module: "/fake/libjvm.so"},
		0x203010: {PC: 0x203010, Kind: Native, Name: "start_thread", Module: "/fake/libc.so.6"},
		0x900000: {PC: 0x900000, Kind: Unresolved},
	} {
		if got := sym.Symbolize(pc); got != want {
			t.Errorf("Symbolize(%#x) = %+v, want %+v", pc, got, want)
		}
	}
}

func TestSymbolizeReturnAddress(t *testing.T) {
	sym := fakeProcess(t)
	// A call that is the last instruction of recurse returns to the first byte after it:
	// the classifier looks one byte back, into the method.
	end := uint64(0x12000 + 0x200)
	if f := sym.Symbolize(end); f.Kind != Unresolved {
		t.Errorf("Symbolize(end of method) = %v, want unresolved", f)
	}
	if f := sym.Symbolize(end - 1); f.Kind != JIT {
		t.Errorf("Symbolize(end of method - 1) = %v, want the method", f)
	}
}
