package ebpf

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Kind says how a frame was named.
type Kind uint8

const (
	Unresolved  Kind = iota // no mapping, or anonymous memory the perf map does not cover
	ModuleOnly              // inside a file mapping whose ELF has no symbol there
	Native                  // an ELF function symbol (libjvm, libc, ...)
	JIT                     // a compiled Java method, from the perf map
	Interpreter             // the template interpreter: an interpreted Java frame, method unknown
	Stub                    // another VM blob from the perf map: stubs, adapters, runtime blobs
)

var kindNames = [...]string{"unresolved", "module", "native", "jit", "interpreter", "stub"}

func (k Kind) String() string { return kindNames[k] }

// Frame is one named address.
type Frame struct {
	PC     uint64
	Kind   Kind
	Name   string // method, blob or symbol; "" when unresolved
	Module string // file of a native frame
}

func (f Frame) String() string {
	switch f.Kind {
	case Unresolved:
		return fmt.Sprintf("[unresolved %#x]", f.PC)
	case ModuleOnly:
		return fmt.Sprintf("%s+%#x", filepath.Base(f.Module), f.PC)
	case Native:
		return f.Name + " (" + filepath.Base(f.Module) + ")"
	}
	return f.Name
}

// Symbolizer names the addresses of one process: JIT code from its perf map, native code
// from its mappings and their ELF symbols. It is a snapshot: take it after the last
// sample and before the process exits.
type Symbolizer struct {
	maps    []mapping
	perfMap *PerfMap
	elfErrs map[string]error
}

// NewSymbolizer snapshots /proc/<pid>/maps and reads the perf map at perfMap ("" means
// /tmp/perf-<pid>.map; a missing map leaves JIT frames unresolved).
func NewSymbolizer(pid int, perfMap string) (*Symbolizer, error) {
	m, err := SnapshotMaps(pid)
	if err != nil {
		return nil, err
	}
	if perfMap == "" {
		perfMap = PerfMapPath(pid)
	}
	return NewSymbolizerFrom(m, perfMap)
}

// Maps is a snapshot of a process's mappings: what names its native frames.
type Maps struct{ ms []mapping }

// SnapshotMaps reads /proc/<pid>/maps. Take it while the process lives: a zombie's maps
// read empty.
func SnapshotMaps(pid int) (*Maps, error) {
	ms, err := readMaps(pid)
	if err != nil {
		return nil, fmt.Errorf("symbolizer: %w", err)
	}
	if len(ms) == 0 {
		return nil, fmt.Errorf("symbolizer: process %d has no mappings: it exited before the snapshot", pid)
	}
	return &Maps{ms: ms}, nil
}

// NewSymbolizerFrom names addresses from a snapshot of the mappings and the perf map at
// perfMap (a missing map leaves JIT frames unresolved).
func NewSymbolizerFrom(m *Maps, perfMap string) (*Symbolizer, error) {
	pm, err := ReadPerfMap(perfMap)
	if err != nil && !os.IsNotExist(err) {
		return nil, fmt.Errorf("symbolizer: %w", err)
	}
	return newSymbolizer(m.ms, pm), nil
}

func newSymbolizer(ms []mapping, pm *PerfMap) *Symbolizer {
	return &Symbolizer{maps: ms, perfMap: pm, elfErrs: map[string]error{}}
}

// PerfMapPath is where HotSpot writes a process's perf map.
func PerfMapPath(pid int) string { return fmt.Sprintf("/tmp/perf-%d.map", pid) }

// DumpPerfMap asks a running JVM to write its perf map now (the diagnostic command
// Compiler.perfmap, JDK 17+, through the attach listener) and moves it to dst. The JVM
// writes PerfMapPath under the pid it sees, which must be pid: the file is read from this
// process's /tmp, where it stays should the JVM exit right after writing it (its
// /proc/<pid>/root goes with it). It is removed whatever happens, so no run leaves one
// behind.
func DumpPerfMap(pid int, dst string, timeout time.Duration) error {
	src := PerfMapPath(pid)
	defer os.Remove(src)
	if _, err := attachCommand(pid, "Compiler.perfmap", timeout); err != nil {
		return fmt.Errorf("Compiler.perfmap: %w", err)
	}
	return movePerfMap(src, dst)
}

func movePerfMap(src, dst string) error {
	if os.Rename(src, dst) == nil {
		return nil
	}
	b, err := os.ReadFile(src) // another file system
	if err != nil {
		return fmt.Errorf("perf map: %w", err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		return fmt.Errorf("perf map: %w", err)
	}
	return nil
}

// Symbolize names pc. Return addresses point after their call, which may be the first
// byte of the next function, so callers pass pc-1 for every frame but the first.
func (s *Symbolizer) Symbolize(pc uint64) Frame {
	f := Frame{PC: pc}
	if e, ok := s.perfMap.Lookup(pc); ok {
		f.Name = e.Name
		switch {
		case e.Name == interpreterBlob:
			f.Kind = Interpreter
		case isJavaMethod(e.Name):
			f.Kind = JIT
		default:
			f.Kind = Stub
		}
		return f
	}
	m := findMapping(s.maps, pc)
	if m == nil || m.Path == "" || strings.HasPrefix(m.Path, "[") {
		return f
	}
	f.Module, f.Kind = m.Path, ModuleOnly
	syms, err := s.elf(m.Path)
	if err != nil {
		return f
	}
	if addr, ok := syms.addr(pc - m.Start + m.Offset); ok {
		if sym, ok := syms.lookup(addr); ok {
			f.Kind, f.Name = Native, sym.Name
		}
	}
	return f
}

func (s *Symbolizer) elf(path string) (*elfSymbols, error) {
	if err, failed := s.elfErrs[path]; failed {
		return nil, err
	}
	syms, err := loadELF(path)
	if err != nil {
		s.elfErrs[path] = err
	}
	return syms, err
}
