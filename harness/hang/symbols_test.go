package hang

import (
	"debug/elf"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A function and GCC's local alias of it share an address; the name printed is the one
// HotSpot prints (dladdr's, the exported one), whichever order the symbol table lists them in.
func TestLookupNamesTheExportedSymbol(t *testing.T) {
	fn := func(name string, bind elf.SymBind, at, size uint64) elf.Symbol {
		return elf.Symbol{Name: name, Info: elf.ST_INFO(bind, elf.STT_FUNC), Value: at, Size: size}
	}
	for _, order := range [][]elf.Symbol{
		{fn("wf_inject_fault", elf.STB_GLOBAL, 0xba80, 10), fn("wf_inject_fault.localalias", elf.STB_LOCAL, 0xba80, 10)},
		{fn("wf_inject_fault.localalias", elf.STB_LOCAL, 0xba80, 10), fn("wf_inject_fault", elf.STB_GLOBAL, 0xba80, 10)},
		{fn("wf_inject_fault.localalias", elf.STB_LOCAL, 0xba80, 10)}, // alias alone: the suffix goes
	} {
		syms := append([]elf.Symbol{fn("before", elf.STB_GLOBAL, 0xb000, 0x80)}, order...)
		sortSyms(syms)
		path := "/lib/libwalkfuzz.so"
		s := &symbolizer{files: map[string]*elfSyms{path: {
			loads: []elf.ProgHeader{{Type: elf.PT_LOAD, Off: 0, Vaddr: 0, Filesz: 0x10000}},
			syms:  syms,
		}}}
		m := procMap{lo: 0x7f0000000000, hi: 0x7f0000010000, path: path}
		assert.Equal(t, "libwalkfuzz.so:wf_inject_fault", s.lookup(m, 0x7f000000ba87))
		assert.Equal(t, "libwalkfuzz.so:before", s.lookup(m, 0x7f000000b010))
		assert.Equal(t, "libwalkfuzz.so+0xba90", s.lookup(m, 0x7f000000ba90), "past the function's size")
	}
}
