// Package methods reads the agent's method table, which names the jmethodIDs walkers return.
package methods

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Method is one line of the table.
type Method struct {
	ID          uint64
	Class       string // human form: java.lang.Thread, java.util.Map$Entry
	Internal    string // as the JVM spells it: java/util/Map$Entry
	Name        string
	Sig         string // JVM descriptor: (I)V
	MaxBci      int32  // last valid bytecode index; -1 when unknown (native, abstract)
	Native      bool
	Static      bool
	ThreadClass bool // declared by java.lang.Thread or a subclass
	// Swept: the agent's sweep wrote the method's class (flag w), no ClassPrepare announced
	// it: JDK 21+ posts none for a class loaded on a virtual thread. Its jmethodIDs were
	// created by that write, so a walk taken before it could not name the method by one.
	Swept bool
	// MethodPtr: the HotSpot Method* the jmethodID pointed at when the line was written (0
	// from an agent that did not write it).
	MethodPtr uint64
	Code      *Code // its bytecode, when the agent could write it (nil for native, abstract)
	// Earlier: the bytecode of versions before a redefinition listed the method again under
	// the same id (MaxBci is then the largest over all versions).
	Earlier []*Code
	// Redefined: the agent listed the method again under the same id (its class redefined or
	// retransformed during the run), whatever the new version's bytecode.
	Redefined bool
}

// String is the method as a Java programmer reads it: java.lang.Thread.run()V.
func (m Method) String() string { return m.Class + "." + m.Name + m.Sig }

// Key identifies the method across runs for root matching: java/lang/Thread.run()V.
func (m Method) Key() string { return m.internal() + "." + m.Name + m.Sig }

// NameKey is Key without the signature: java/lang/Thread.run.
func (m Method) NameKey() string { return m.internal() + "." + m.Name }

func (m Method) internal() string {
	if m.Internal != "" {
		return m.Internal
	}
	return humanName(m.Class) // the swap is its own inverse
}

// humanName swaps '/' and '.': java/util/Map$Entry becomes java.util.Map$Entry, and a
// hidden class's pkg/Foo$$Lambda.0x0800 becomes pkg.Foo$$Lambda/0x0800 as Class.getName has it.
func humanName(internal string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '/':
			return '.'
		case '.':
			return '/'
		}
		return r
	}, internal)
}

// Table maps jmethodIDs to methods. It is not safe for concurrent use; a nil *Table is an
// empty one.
type Table struct {
	path   string
	offset int64 // bytes of complete lines consumed so far
	byID   map[uint64]*Method
	mains  map[string]bool // internal names of classes declaring static main(String[])
	// byPtr: Method* -> jmethodID, for the swept methods only (RawMethodBit).
	byPtr  map[uint64]uint64
	sweeps []Sweep // the agent's sweeps that wrote classes, in the order written
	// pool: the last P line read, the invoke targets of the class whose M and B lines follow
	// it (the agent writes a class's lines together, under its lock).
	pool      *Pool
	malformed int
	// cache is a direct-mapped cache in front of byID for Get: the classifier looks up every
	// frame of every walk (2048 per walk on recursion) and consecutive walks repeat their
	// methods. An entry is dropped when Add replaces its method.
	cache [cacheSlots]cached
}

const cacheSlots = 1 << 12

type cached struct {
	id uint64
	m  *Method
}

// slot spreads jmethodIDs (8-byte aligned pointers into blocks of ids) over the cache.
func slot(id uint64) uint64 { return (id>>3 ^ id>>15) & (cacheSlots - 1) }

// New returns an empty table (not backed by a file) for callers that add methods themselves.
func New() *Table {
	return &Table{byID: make(map[uint64]*Method), mains: make(map[string]bool), byPtr: make(map[uint64]uint64)}
}

// RawMethodBit marks a frame's method as a raw HotSpot Method*, not a jmethodID: the vmstructs
// walker's VS_RAW_METHOD_BIT (walkers/vmstructs/vmstructs.h), for a method with no jmethodID
// at the walk (user-space pointers on x86_64 never have bit 63 set).
const RawMethodBit = uint64(1) << 63

// Load reads the method table at path. A missing file is an empty table (the agent may
// not have started); Refresh picks the file up later.
func Load(path string) (*Table, error) {
	t := New()
	t.path = path
	return t, t.Refresh()
}

// Refresh reads the lines the agent appended since the last Load or Refresh. A line
// without its newline is left for next time: the agent may be writing it, or died doing so.
func (t *Table) Refresh() error {
	if t.path == "" {
		return nil
	}
	// Most refreshes find nothing new: one stat instead of open, fstat and close.
	if st, err := os.Stat(t.path); err == nil && st.Size() == t.offset {
		return nil
	}
	f, err := os.Open(t.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("method table: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("method table: %w", err)
	}
	if st.Size() < t.offset { // rewritten from scratch: start over
		t.byID, t.mains, t.offset, t.malformed = make(map[uint64]*Method), make(map[string]bool), 0, 0
		t.byPtr, t.sweeps, t.pool = make(map[uint64]uint64), nil, nil
		t.cache = [cacheSlots]cached{}
	}
	data, err := io.ReadAll(io.NewSectionReader(f, t.offset, st.Size()-t.offset))
	if err != nil {
		return fmt.Errorf("method table %s: %w", t.path, err)
	}
	t.offset += int64(t.Parse(data))
	return nil
}

// Parse adds the complete lines of data and returns how many bytes they took; a trailing
// partial line is not consumed.
func (t *Table) Parse(data []byte) int {
	used := 0
	for {
		nl := bytes.IndexByte(data[used:], '\n')
		if nl < 0 {
			return used
		}
		line := string(data[used : used+nl])
		used += nl + 1
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "P\t") {
			if p, err := parsePoolLine(line); err == nil {
				t.pool = p
			} else {
				t.pool = nil
				t.malformed++
			}
			continue
		}
		if strings.HasPrefix(line, "B\t") {
			id, code, err := parseCodeLine(line)
			if m := t.byID[id]; err == nil && m != nil {
				if t.pool != nil && t.pool.Class == m.Internal {
					code.Pool = t.pool
				}
				m.Code = code
				// A listing again of an unchanged version: no need to keep its twin.
				m.Earlier = slices.DeleteFunc(m.Earlier, func(c *Code) bool { return bytes.Equal(c.Bytes, code.Bytes) })
			} else {
				t.malformed++
			}
			continue
		}
		if strings.HasPrefix(line, "S\t") {
			if sw, err := parseSweep(line); err == nil {
				t.sweeps = append(t.sweeps, sw)
			} else {
				t.malformed++
			}
			continue
		}
		m, err := ParseLine(line)
		if err != nil {
			t.malformed++
			continue
		}
		t.Add(m)
	}
}

// Sweep is one of the agent's sweeps that wrote classes no ClassPrepare announced (an S
// line: S <tab> start <tab> end, CLOCK_MONOTONIC ns as the walks' timestamps). The methods it
// wrote got their jmethodIDs during it.
type Sweep struct{ Start, End uint64 }

func parseSweep(line string) (Sweep, error) {
	f := strings.Split(line, "\t")
	if len(f) != 3 {
		return Sweep{}, fmt.Errorf("sweep line %q: want S, start, end", line)
	}
	start, err1 := strconv.ParseUint(f[1], 10, 64)
	end, err2 := strconv.ParseUint(f[2], 10, 64)
	if err1 != nil || err2 != nil || end < start {
		return Sweep{}, fmt.Errorf("sweep line %q: want start <= end, decimal ns", line)
	}
	return Sweep{start, end}, nil
}

// SweepLead: how long before a sweep's start a class it wrote may have been loaded. The
// sweep runs every 250 ms and finds a class loaded since the previous one; a class not yet
// prepared then waits for the next, and a busy service thread runs late.
const SweepLead = uint64(time.Second)

// Nameless reports whether a walk taken at ts (CLOCK_MONOTONIC ns) may hold a Java frame
// whose method had no jmethodID at all, which a walker can only report as a null id
// (AsyncGetCallTrace looks ids up and never creates one): a sweep that wrote classes ended
// after ts and began at most SweepLead after it. Outside such a window every executing
// method had its jmethodID (ClassPrepare's listing created them before any of the class's
// code ran), and a null id is a walker's error.
func (t *Table) Nameless(ts uint64) bool {
	if t == nil {
		return false
	}
	for _, s := range t.sweeps {
		if ts <= s.End && ts+SweepLead >= s.Start {
			return true
		}
	}
	return false
}

// Add puts m in the table. A later line for the same id and the same method is another
// version of it (the agent lists a redefined class again): its bytecode joins the earlier
// ones and MaxBci covers all. A later line naming another method replaces the entry.
func (t *Table) Add(m Method) {
	if old := t.byID[m.ID]; old != nil && old.Internal == m.Internal && old.Name == m.Name && old.Sig == m.Sig {
		m.MaxBci = max(m.MaxBci, old.MaxBci)
		m.Earlier = old.Earlier
		m.Swept = m.Swept || old.Swept // a swept class listed again (redefined, or raced by its ClassPrepare)
		m.Redefined = true
		if old.Code != nil && !slices.ContainsFunc(m.Earlier, func(c *Code) bool { return bytes.Equal(c.Bytes, old.Code.Bytes) }) {
			m.Earlier = append(m.Earlier, old.Code)
		}
	}
	t.byID[m.ID] = &m
	if c := &t.cache[slot(m.ID)]; c.id == m.ID {
		*c = cached{}
	}
	if m.Swept && m.MethodPtr != 0 {
		raw := m.MethodPtr | RawMethodBit
		t.byPtr[m.MethodPtr] = m.ID
		if c := &t.cache[slot(raw)]; c.id == raw {
			*c = cached{}
		}
	}
	if m.IsMain() {
		t.mains[m.internal()] = true
	}
}

// IsMain reports whether m is a launcher entry point: static void main(String[]).
func (m Method) IsMain() bool {
	return m.Static && m.Name == "main" && m.Sig == "([Ljava/lang/String;)V"
}

// DeclaresMain reports whether the class (internal name) declares static main(String[]).
// The agent lists a class's methods together when it is prepared, so a class whose
// <clinit> is in the table has its main there too.
func (t *Table) DeclaresMain(internal string) bool {
	return t != nil && t.mains[internal]
}

// Lookup returns the method with the given jmethodID.
func (t *Table) Lookup(id uint64) (Method, bool) {
	if t == nil {
		return Method{}, false
	}
	if m := t.Get(id); m != nil {
		return *m, true
	}
	return Method{}, false
}

// Get is Lookup without the copy, for hot loops; the result must not be modified. A raw
// Method* (RawMethodBit) names the method whose jmethodID pointed at it when a sweep wrote
// it: a walk taken before the sweep had no jmethodID for it to report. A raw Method* of any
// other method stays unknown: a method ClassPrepare announced had its jmethodID before its
// first bytecode ran, so a walker that reports it raw lost an id that existed.
func (t *Table) Get(id uint64) *Method {
	if t == nil {
		return nil
	}
	c := &t.cache[slot(id)]
	if c.m != nil && c.id == id {
		return c.m
	}
	m := t.byID[id]
	if m == nil && id&RawMethodBit != 0 {
		m = t.byID[t.byPtr[id&^RawMethodBit]]
	}
	if m != nil {
		*c = cached{id, m}
	}
	return m
}

// ByKey maps each method's Key to its id (for traces that name methods, such as JFR's).
func (t *Table) ByKey() map[string]uint64 {
	out := map[string]uint64{}
	if t == nil {
		return out
	}
	for id, m := range t.byID {
		out[m.Key()] = id
	}
	return out
}

// Each calls fn with every method of the table (each id's latest version), in no order.
func (t *Table) Each(fn func(*Method)) {
	if t == nil {
		return
	}
	for _, m := range t.byID {
		fn(m)
	}
}

// Len is the number of methods.
func (t *Table) Len() int {
	if t == nil {
		return 0
	}
	return len(t.byID)
}

// Malformed counts complete lines that could not be parsed.
func (t *Table) Malformed() int { return t.malformed }

// ParseLine parses one line (without its newline):
// M <tab> 0xID <tab> Lpkg/Class; <tab> name <tab> (sig)R <tab> maxbci <tab> flags [<tab> 0xMethod*]
func ParseLine(line string) (Method, error) {
	f := strings.Split(line, "\t")
	if (len(f) != 7 && len(f) != 8) || f[0] != "M" {
		return Method{}, fmt.Errorf("method line %q: want 7 tab-separated fields (8 with the Method*) starting with M", line)
	}
	var ptr uint64
	if len(f) == 8 {
		hex, ok := strings.CutPrefix(f[7], "0x")
		p, err := strconv.ParseUint(hex, 16, 64)
		if !ok || err != nil || p&RawMethodBit != 0 {
			return Method{}, fmt.Errorf("method line %q: Method* %q is not 0x hex below bit 63", line, f[7])
		}
		ptr = p
	}
	hex, ok := strings.CutPrefix(f[1], "0x")
	if !ok {
		return Method{}, fmt.Errorf("method line %q: id %q is not 0x hex", line, f[1])
	}
	id, err := strconv.ParseUint(hex, 16, 64)
	if err != nil {
		return Method{}, fmt.Errorf("method line %q: id: %w", line, err)
	}
	maxBci, err := strconv.ParseInt(f[5], 10, 32)
	if err != nil {
		return Method{}, fmt.Errorf("method line %q: max bci: %w", line, err)
	}
	if f[2] == "" || f[3] == "" || !strings.HasPrefix(f[4], "(") {
		return Method{}, fmt.Errorf("method line %q: empty class or name, or not a method descriptor", line)
	}
	internal := ClassName(f[2])
	m := Method{
		ID:          id,
		Internal:    internal,
		Class:       humanName(internal),
		Name:        f[3],
		Sig:         f[4],
		MaxBci:      int32(maxBci),
		Native:      strings.ContainsRune(f[6], 'n'),
		Static:      strings.ContainsRune(f[6], 's'),
		ThreadClass: strings.ContainsRune(f[6], 't'),
		Swept:       strings.ContainsRune(f[6], 'w'),
		MethodPtr:   ptr,
	}
	return m, nil
}

// ClassName turns a class signature (Ljava/lang/Thread;) into an internal name
// (java/lang/Thread); anything else, such as an array signature, is returned as it is.
func ClassName(sig string) string {
	if len(sig) >= 3 && sig[0] == 'L' && sig[len(sig)-1] == ';' {
		return sig[1 : len(sig)-1]
	}
	return sig
}
