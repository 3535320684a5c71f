package ebpf

import (
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"sync"
)

// elfSymbols are the function symbols of one ELF file, by virtual address.
type elfSymbols struct {
	loads []elf.ProgHeader // PT_LOAD segments, to turn a file offset into an address
	syms  []elfSym         // sorted by Addr
}

type elfSym struct {
	Addr, Size uint64
	Name       string
}

// debugRoot is where Debian's -dbg packages put separate debug files by build id
// (libc6-dbg has start_thread and clone3, which libc.so.6's .dynsym lacks).
var debugRoot = "/usr/lib/debug/.build-id"

var (
	elfCacheMu sync.Mutex
	elfCache   = map[string]*elfSymbols{} // by path; libraries do not change under a run
)

func loadELF(path string) (*elfSymbols, error) {
	elfCacheMu.Lock()
	defer elfCacheMu.Unlock()
	if s, ok := elfCache[path]; ok {
		return s, nil
	}
	s, err := readELF(path)
	if err != nil {
		return nil, err
	}
	elfCache[path] = s
	return s, nil
}

func readELF(path string) (*elfSymbols, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s := &elfSymbols{}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			s.loads = append(s.loads, p.ProgHeader)
		}
	}
	s.addFuncs(f.Symbols())
	s.addFuncs(f.DynamicSymbols())
	if dbg := debugFile(f); dbg != "" {
		if df, err := elf.Open(dbg); err == nil {
			s.addFuncs(df.Symbols())
			df.Close()
		}
	}
	sort.Slice(s.syms, func(i, j int) bool { return s.syms[i].Addr < s.syms[j].Addr })
	return s, nil
}

func (s *elfSymbols) addFuncs(syms []elf.Symbol, err error) {
	for _, sym := range syms {
		if elf.ST_TYPE(sym.Info) == elf.STT_FUNC && sym.Value != 0 {
			s.syms = append(s.syms, elfSym{Addr: sym.Value, Size: sym.Size, Name: sym.Name})
		}
	}
}

// debugFile finds the separate debug file of f by its GNU build id.
func debugFile(f *elf.File) string {
	sec := f.Section(".note.gnu.build-id")
	if sec == nil {
		return ""
	}
	b, err := sec.Data()
	// Elf64_Nhdr: namesz, descsz, type, then "GNU\0", then the id.
	if err != nil || len(b) < 16 {
		return ""
	}
	n := int(binary.LittleEndian.Uint32(b[4:]))
	if n < 2 || len(b) < 16+n {
		return ""
	}
	id := hex.EncodeToString(b[16 : 16+n])
	p := filepath.Join(debugRoot, id[:2], id[2:]+".debug")
	if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
		return ""
	}
	return p
}

// addr turns a file offset into the ELF's virtual address.
func (s *elfSymbols) addr(off uint64) (uint64, bool) {
	for _, p := range s.loads {
		if off >= p.Off && off < p.Off+p.Filesz {
			return off - p.Off + p.Vaddr, true
		}
	}
	return 0, false
}

// lookup names the function containing addr. A symbol without a size (hand-written
// assembly) covers up to the next symbol.
func (s *elfSymbols) lookup(addr uint64) (elfSym, bool) {
	i := sort.Search(len(s.syms), func(i int) bool { return s.syms[i].Addr > addr })
	for j := i - 1; j >= 0 && j >= i-8; j-- {
		sym := s.syms[j]
		if addr < sym.Addr+sym.Size {
			return sym, true
		}
		if sym.Size == 0 && j == i-1 {
			return sym, true
		}
	}
	return elfSym{}, false
}
