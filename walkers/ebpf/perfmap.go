package ebpf

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
)

// PerfMap is the JVM's map of its code cache (/tmp/perf-<pid>.map): compiled methods and
// the VM's own blobs (the interpreter, stubs, adapters), one per line as "START SIZE name"
// in hex.
type PerfMap struct {
	Entries   []PerfMapEntry // sorted by Start
	Malformed int            // lines that did not parse
}

// PerfMapEntry is one line.
type PerfMapEntry struct {
	Start, Size uint64
	Name        string
}

// ReadPerfMap parses the perf map at path.
func ReadPerfMap(path string) (*PerfMap, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParsePerfMap(f)
}

// ParsePerfMap parses a perf map. Later lines win where ranges overlap: a map appended to
// across dumps describes the newest code at an address last.
func ParsePerfMap(r io.Reader) (*PerfMap, error) {
	m := &PerfMap{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20) // method signatures can be long
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			continue
		}
		e, ok := parsePerfMapLine(line)
		if !ok {
			m.Malformed++
			continue
		}
		m.Entries = append(m.Entries, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("perf map: %w", err)
	}
	// Stable, so that among entries with one start the last written stays last.
	sort.SliceStable(m.Entries, func(i, j int) bool { return m.Entries[i].Start < m.Entries[j].Start })
	return m, nil
}

func parsePerfMapLine(line string) (PerfMapEntry, bool) {
	start, rest, ok1 := strings.Cut(line, " ")
	size, name, ok2 := strings.Cut(rest, " ")
	if !ok1 || !ok2 || name == "" {
		return PerfMapEntry{}, false
	}
	s, err1 := strconv.ParseUint(strings.TrimPrefix(start, "0x"), 16, 64)
	n, err2 := strconv.ParseUint(strings.TrimPrefix(size, "0x"), 16, 64)
	if err1 != nil || err2 != nil || n == 0 {
		return PerfMapEntry{}, false
	}
	return PerfMapEntry{Start: s, Size: n, Name: name}, true
}

// Lookup finds the entry covering pc.
func (m *PerfMap) Lookup(pc uint64) (PerfMapEntry, bool) {
	if m == nil {
		return PerfMapEntry{}, false
	}
	i := sort.Search(len(m.Entries), func(i int) bool { return m.Entries[i].Start > pc })
	// Walk back over entries that start at or before pc: the nearest may be a small blob
	// that ends before pc while an older, larger one still covers it.
	for j := i - 1; j >= 0 && j >= i-4; j-- {
		if e := m.Entries[j]; pc < e.Start+e.Size {
			return e, true
		}
	}
	return PerfMapEntry{}, false
}

// interpreterBlob is the name HotSpot gives the template interpreter's code.
const interpreterBlob = "Interpreter"

// isJavaMethod tells a compiled method ("long Recursion.recurse(int, long)") from a VM
// blob ("StubRoutines (1)", "I2C/C2I adapters"): a method's name before the parenthesis
// is a qualified Class.method.
func isJavaMethod(name string) bool {
	open := strings.IndexByte(name, '(')
	if open <= 0 || !strings.HasSuffix(name, ")") {
		return false
	}
	head := name[:open]
	qual := head[strings.LastIndexByte(head, ' ')+1:]
	return strings.Contains(qual, ".")
}
