package ebpf

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestPerfMapGolden parses real perf maps (jcmd Compiler.perfmap on JDK 17 and 25 running
// the Recursion program that is now the callchain workload) and compares what the
// symbolizer makes of them with .golden.
func TestPerfMapGolden(t *testing.T) {
	maps, _ := filepath.Glob("testdata/perfmap/*.map")
	if len(maps) == 0 {
		t.Fatal("no perf maps in testdata/perfmap")
	}
	for _, path := range maps {
		t.Run(filepath.Base(path), func(t *testing.T) {
			pm, err := ReadPerfMap(path)
			if err != nil {
				t.Fatal(err)
			}
			got := describePerfMap(pm)
			golden := strings.TrimSuffix(path, ".map") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if got != string(want) {
				t.Errorf("%s differs from %s (run with -update to accept):\n%s", path, golden, got)
			}
		})
	}
}

// describePerfMap renders what a map means to the symbolizer: how its entries divide into
// kinds, the workload's methods, and lookups at the edges of every tenth entry.
func describePerfMap(pm *PerfMap) string {
	var b strings.Builder
	sym := newSymbolizer(nil, pm)
	kinds := map[Kind]int{}
	var workload []string
	for _, e := range pm.Entries {
		f := sym.Symbolize(e.Start)
		kinds[f.Kind]++
		if f.Kind == JIT && strings.Contains(e.Name, "Recursion.") {
			workload = append(workload, e.Name)
		}
	}
	fmt.Fprintf(&b, "entries %d malformed %d\n", len(pm.Entries), pm.Malformed)
	for k := Unresolved; k <= Stub; k++ {
		fmt.Fprintf(&b, "kind %s %d\n", k, kinds[k])
	}
	sort.Strings(workload)
	for _, w := range workload {
		fmt.Fprintf(&b, "workload %s\n", w)
	}
	for i := 0; i < len(pm.Entries); i += 10 {
		e := pm.Entries[i]
		for _, pc := range []uint64{e.Start - 1, e.Start, e.Start + e.Size - 1, e.Start + e.Size} {
			f := sym.Symbolize(pc)
			fmt.Fprintf(&b, "lookup %#x %s %q\n", pc, f.Kind, f.Name)
		}
	}
	return b.String()
}

func TestParsePerfMapLines(t *testing.T) {
	in := "0x00007f0000001000 0x0000000000000100 long Foo.bar(int, long)\n" +
		"\n" +
		"7f0000002000 40 Interpreter\n" + // perf also accepts hex without 0x
		"garbage\n" +
		"0x7f0000003000 0x0 empty\n" +
		"0x7f0000001080 0x10 StubRoutines (1)\n" // nested in Foo.bar's range, written later
	pm, err := ParsePerfMap(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(pm.Entries) != 3 || pm.Malformed != 2 {
		t.Fatalf("entries %d malformed %d, want 3 and 2: %+v", len(pm.Entries), pm.Malformed, pm.Entries)
	}
	for _, tc := range []struct {
		pc   uint64
		want string
	}{
		{0x7f0000000fff, ""},
		{0x7f0000001000, "long Foo.bar(int, long)"},
		{0x7f0000001085, "StubRoutines (1)"},
		{0x7f0000001095, "long Foo.bar(int, long)"},
		{0x7f00000010ff, "long Foo.bar(int, long)"},
		{0x7f0000001100, ""},
		{0x7f000000203f, "Interpreter"},
	} {
		e, _ := pm.Lookup(tc.pc)
		if e.Name != tc.want {
			t.Errorf("Lookup(%#x) = %q, want %q", tc.pc, e.Name, tc.want)
		}
	}
}

func TestIsJavaMethod(t *testing.T) {
	for name, want := range map[string]bool{
		"long Recursion.recurse(int, long)": true,
		"void Recursion.lambda$main$0(int)": true,
		"void java.lang.Object.<init>()":    true,
		"java.lang.Object java.lang.invoke.LambdaForm$MH/0x0000000800c01000.invoke(java.lang.Object)": true,
		"Interpreter":                 false,
		"StubRoutines (1)":            false,
		"StubRoutines (initialstubs)": false,
		"I2C/C2I adapters":            false,
		"C2 Runtime new_instance":     false,
	} {
		if got := isJavaMethod(name); got != want {
			t.Errorf("isJavaMethod(%q) = %v, want %v", name, got, want)
		}
	}
}
