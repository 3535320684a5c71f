package hang

import (
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// symbolizer names code addresses of a live process from its executable mappings and the
// ELF symbol tables of the mapped files (.symtab when present, else .dynsym).
type symbolizer struct {
	maps  []procMap
	files map[string]*elfSyms
}

type procMap struct {
	lo, hi, off uint64
	path        string
}

type elfSyms struct {
	loads []elf.ProgHeader
	syms  []elf.Symbol // functions, by address
}

func newSymbolizer(pid int) *symbolizer {
	s := &symbolizer{files: map[string]*elfSyms{}}
	data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		if len(f) < 6 || len(f[1]) < 3 || f[1][2] != 'x' || !strings.HasPrefix(f[5], "/") {
			continue
		}
		lo, hi, _ := strings.Cut(f[0], "-")
		m := procMap{path: f[5]}
		m.lo, _ = strconv.ParseUint(lo, 16, 64)
		m.hi, _ = strconv.ParseUint(hi, 16, 64)
		m.off, _ = strconv.ParseUint(f[2], 16, 64)
		s.maps = append(s.maps, m)
	}
	sort.Slice(s.maps, func(i, j int) bool { return s.maps[i].lo < s.maps[j].lo })
	return s
}

// code names addr if it points into mapped code, else "".
func (s *symbolizer) code(addr uint64) string {
	i := sort.Search(len(s.maps), func(i int) bool { return s.maps[i].hi > addr })
	if i < len(s.maps) && addr >= s.maps[i].lo {
		return s.lookup(s.maps[i], addr)
	}
	return ""
}

// name names any address: in mapped code as code does, elsewhere (JIT code) "anon".
func (s *symbolizer) name(addr uint64) string {
	if n := s.code(addr); n != "" {
		return n
	}
	return "anon"
}

func (s *symbolizer) lookup(m procMap, addr uint64) string {
	lib := filepath.Base(m.path)
	fileOff := addr - m.lo + m.off
	e := s.load(m.path)
	if e != nil {
		for _, p := range e.loads {
			if fileOff < p.Off || fileOff >= p.Off+p.Filesz {
				continue
			}
			vaddr := fileOff - p.Off + p.Vaddr
			i := sort.Search(len(e.syms), func(i int) bool { return e.syms[i].Value > vaddr }) - 1
			if i >= 0 && vaddr < e.syms[i].Value+e.syms[i].Size {
				return lib + ":" + demangle(strings.TrimSuffix(e.syms[i].Name, ".localalias"))
			}
			break
		}
	}
	return fmt.Sprintf("%s+0x%x", lib, fileOff)
}

func (s *symbolizer) load(path string) *elfSyms {
	if e, ok := s.files[path]; ok {
		return e
	}
	s.files[path] = nil
	f, err := elf.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	e := &elfSyms{}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			e.loads = append(e.loads, p.ProgHeader)
		}
	}
	syms, err := f.Symbols()
	if err != nil || len(syms) == 0 {
		syms, _ = f.DynamicSymbols()
	}
	for _, sy := range syms {
		t := elf.ST_TYPE(sy.Info)
		if (t == elf.STT_FUNC || t == elf.STT_GNU_IFUNC) && sy.Size > 0 && sy.Value != 0 {
			e.syms = append(e.syms, sy)
		}
	}
	sortSyms(e.syms)
	s.files[path] = e
	return e
}

// sortSyms orders function symbols by address and, at one address, puts the global name last,
// which lookup takes: GCC gives an exported function a local alias (wf_inject_fault.localalias)
// that dladdr, and so HotSpot, never prints.
func sortSyms(syms []elf.Symbol) {
	global := func(sy elf.Symbol) bool { return elf.ST_BIND(sy.Info) != elf.STB_LOCAL }
	sort.SliceStable(syms, func(i, j int) bool {
		a, b := syms[i], syms[j]
		if a.Value != b.Value {
			return a.Value < b.Value
		}
		return !global(a) && global(b)
	})
}

// demangle turns the plain Itanium nested names HotSpot is made of (_ZN20SafepointSynchronize5beginEv)
// into A::B; anything else (templates, operators) stays mangled, which is still one token.
func demangle(name string) string {
	rest, ok := strings.CutPrefix(name, "_Z")
	if !ok {
		return name
	}
	nested := strings.HasPrefix(rest, "N")
	if nested {
		rest = strings.TrimPrefix(strings.TrimPrefix(rest, "N"), "K")
	}
	var parts []string
	for len(rest) > 0 && rest[0] >= '0' && rest[0] <= '9' {
		i := 0
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		n, _ := strconv.Atoi(rest[:i])
		if n <= 0 || i+n > len(rest) {
			return name
		}
		parts = append(parts, rest[i:i+n])
		rest = rest[i+n:]
		if !nested {
			break
		}
	}
	if len(parts) == 0 || (nested && !strings.HasPrefix(rest, "E")) {
		return name
	}
	return strings.Join(parts, "::")
}

// CodeFrame names pc of live process pid the way an hs_err log prints a native frame
// ("C  [libjvm.so+0x5f2a10]  JVM_handle_linux_signal"), from its mappings and the ELF symbols
// of the mapped file; "" when pc is in no file mapping. For a crash whose report stalled
// before it named its problematic frame.
func CodeFrame(pid int, pc uint64) string {
	s := newSymbolizer(pid)
	i := sort.Search(len(s.maps), func(i int) bool { return s.maps[i].hi > pc })
	if i == len(s.maps) || pc < s.maps[i].lo {
		return ""
	}
	m := s.maps[i]
	f := fmt.Sprintf("C  [%s+0x%x]", filepath.Base(m.path), pc-m.lo+m.off)
	if n := s.lookup(m, pc); strings.Contains(n, ":") {
		_, sym, _ := strings.Cut(n, ":")
		f += "  " + sym
	}
	return f
}
