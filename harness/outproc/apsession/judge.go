package apsession

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/walkfuzz/walkfuzz/harness/classify"
	"github.com/walkfuzz/walkfuzz/harness/join"
	"github.com/walkfuzz/walkfuzz/harness/methods"
	"github.com/walkfuzz/walkfuzz/harness/outproc"
	"github.com/walkfuzz/walkfuzz/harness/walkclass"
	"github.com/walkfuzz/walkfuzz/walkers/asyncprofiler"
)

// Judge classifies a profiler's samples by what is sound without ground truth on the same
// signal, in the class vocabulary of walkfuzz's own walkers (docs/profilers.md, "Judging"):
//
//   - a sample holding one of the profiler's failure frames ([break_interpreted],
//     [unknown_Java], ...) is error:<that name>, the innermost one;
//   - one with a Java frame whose method the run's method table does not hold is invalid;
//   - one whose bcis do not fit the methods' bytecode (the innermost Java frame's inside an
//     instruction, a caller's at no invoke, or at an invoke of another method than the frame
//     above it) is invalid:<reason>, harness/classify's frame-validity oracle;
//   - one whose outermost Java frame is a thread root (the run's roots, as harness/classify
//     judges the in-process walkers) is ok;
//   - one as deep as the profiler's stack depth is truncated:depth, any other truncated:short.
//
// Samples without a Java frame and without a failure frame (a thread in the VM or native
// code, a GC or compiler thread), or with only AsyncGetCallTrace's words for a thread not in
// Java (asyncprofiler.Benign: no_Java_frame, unknown_not_Java, thread_exit; async-profiler
// treats them so itself, and cstack=no samples every thread), say nothing of a Java walk: counted apart (NotJava), never
// among the classes. A walk that lost every Java frame without a marker looks the same; a
// same-signal join would tell them apart.
type Judge struct {
	roots outproc.Roots
	// known holds every method of the run's method table by pkg/Class.name(sig), and whether
	// it is static: the table's word, not the profiler's (JMC's reader gives no modifiers).
	known map[string]bool
	// code: the same keys' methods, for the frame-validity oracle (classify.FrameReason), the
	// versions of every method sharing a key pooled (addCode).
	code    map[string]*methods.Method
	depth   int
	Classes map[string]uint64
	// NotJava counts samples with no Java frame and no failure frame.
	NotJava uint64
	// UnnamedRoot counts samples whose outermost Java frame is async-profiler's placeholder
	// for a method it could no longer name (asyncprofiler.StaleMethod): whether the walk
	// reached a thread root cannot be told, so they are not judged.
	UnnamedRoot uint64
	// Unknown counts the invalid samples' unresolved methods, Short the truncated:short
	// samples' outermost Java methods, Misfit the frames the frame-validity oracle refused
	// (callee <- caller@bci): the notes name the commonest.
	Unknown, Short, Misfit map[string]uint64
	Notes                  []string

	misfitRedefined bool // the sample being judged has its misfit frame in a redefined method
	// misfitEntryBci: the sample being judged has its misfit frame at bci 0 among the scopes
	// of its top compiled frame (EntryBciPart).
	misfitEntryBci bool
	// redefined: the keys (as code's) of methods the agent listed again under one id.
	redefined map[string]bool
}

// NewJudge judges against the run's method table and roots.txt and the profiler's depth.
func NewJudge(methodTable, rootsFile string, depth int) *Judge {
	j := &Judge{depth: depth, Classes: map[string]uint64{}, Unknown: map[string]uint64{}, Short: map[string]uint64{}, Misfit: map[string]uint64{},
		known: map[string]bool{}, code: map[string]*methods.Method{}}
	var note string
	j.roots, note = outproc.JavaRoots(methodTable, rootsFile)
	if note != "" {
		j.Notes = append(j.Notes, note)
	}
	t, err := methods.Load(methodTable)
	if err != nil || t.Len() == 0 {
		j.known = nil
		j.Notes = append(j.Notes, "no method table: frames are not checked against it (no invalid class)")
		return j
	}
	j.redefined = map[string]bool{}
	t.Each(func(m *methods.Method) {
		if m.Redefined {
			j.redefined[hiddenFree(m.Key())] = true
		}
	})
	t.Each(func(m *methods.Method) { j.addCode(hiddenFree(m.Key()), m) })
	for k, id := range t.ByKey() {
		m, _ := t.Lookup(id)
		j.known[hiddenFree(k)] = m.Static
		cls := strings.TrimSuffix(m.NameKey(), "."+m.Name)
		if c, n := join.AccessorFree(cls, m.Name); c != cls {
			j.known[hiddenFree(c+"."+n+m.Sig)] = m.Static // a generated accessor: its number dropped, as ddprof names it
		}
	}
	return j
}

// hiddenFree drops a hidden class's address suffix, which JVMTI and JFR spell differently
// (Foo$$Lambda+0x0000.../Foo$$Lambda.0x0000..., LambdaForm$MH/0x...): two hidden classes of one
// name are told apart by neither, so the name up to the suffix is what is checked. A VM-
// anonymous class of JDK 14 and older carries its identity hash in decimal instead
// (LambdaForm$MH/2143192188, Foo$$Lambda$4/1618212626 in JVMTI's name), which ddprof's
// recording leaves out: dropped too.
func hiddenFree(key string) string {
	key = anonSuffix.ReplaceAllString(key, "$1")
	for _, sep := range []string{"+0x", ".0x", "/0x"} {
		if i := strings.Index(key, sep); i >= 0 {
			rest := key[i+len(sep):]
			j := strings.IndexFunc(rest, func(r rune) bool { return !strings.ContainsRune("0123456789abcdefABCDEF", r) })
			if j > 0 {
				return key[:i] + rest[j:]
			}
		}
	}
	return key
}

// anonSuffix is a VM-anonymous class's decimal suffix, before the method's name.
var anonSuffix = regexp.MustCompile(`/[0-9]+(\.[^./]+\()`)

// Add judges one sample; it returns its class, "" for a sample of no Java walk.
func (j *Judge) Add(s *asyncprofiler.Sample) string {
	class, _ := j.AddAttributed(s)
	return class
}

// RedefinedPart marks an invalid sample whose misfit frame is a method of a class redefined
// during the run (the agent listed it again under its id, methods.Method.Redefined): async-profiler
// reads such an interpreted frame against the wrong version of the method (the ledger's
// ap-redefined-interpreted; on JDK 11 with a bci no version of it has).
const RedefinedPart = join.RedefinedSuffix

// EntryBciPart marks an invalid sample whose misfit frame is a caller at bci 0 among the
// scopes of the sample's top compiled frame (every Java frame above it inlined, itself
// inlined or compiled): where HotSpot's debug information gives that scope InvocationEntryBci
// (-1), which async-profiler writes as 0 and our walkers keep as -1. Not a cause by itself: the
// same-signal join counts it as join.TopScopesSuffix only where our walk of the signal has the
// same compiled top frame and the same frames below it, the profiler having read that frame at
// another PcDesc (join.TopScopes).
const EntryBciPart = join.EntryBciPart

// AddAttributed is Add that also says which known cause an invalid sample's misfit frame
// points at (RedefinedPart, EntryBciPart), "" when none.
func (j *Judge) AddAttributed(s *asyncprofiler.Sample) (class, part string) {
	j.misfitRedefined, j.misfitEntryBci = false, false
	class = j.classify(s)
	switch {
	case !strings.HasPrefix(class, walkclass.InvalidPrefix):
	case j.misfitRedefined:
		part = RedefinedPart
	case j.misfitEntryBci:
		part = EntryBciPart
	}
	if class == unnamedRoot {
		j.UnnamedRoot++
		return "", ""
	}
	if class == "" {
		j.NotJava++
		return "", ""
	}
	j.Classes[class]++
	return class, part
}

func (j *Judge) classify(s *asyncprofiler.Sample) string {
	root, ok := s.RootJava()
	if m := s.Markers(); len(m) > 0 {
		if !ok && !slices.ContainsFunc(m, func(x string) bool { return !asyncprofiler.Benign(x) }) {
			return "" // AsyncGetCallTrace's word for a thread not in Java (cstack=no, agct)
		}
		return walkclass.Error(m[0])
	}
	if !ok {
		return ""
	}
	if unnamedOutermost(s) {
		return unnamedRoot
	}
	if j.known != nil {
		for _, f := range s.Frames {
			if !f.Java() {
				continue
			}
			c, n := join.AccessorFree(f.Class, f.Name)
			if key := c + "." + n + f.Descriptor; !j.has(key) {
				j.Unknown[key]++
				return walkclass.Invalid
			}
		}
	}
	if reason := j.validity(s); reason != "" {
		return walkclass.InvalidPrefix + reason
	}
	static := root.Static()
	if st, ok := j.known[hiddenFree(root.Class+"."+root.Name+root.Descriptor)]; ok {
		static = st
	}
	if j.roots(outproc.Method{Class: root.Class, Name: root.Name, Sig: root.Descriptor, Static: static}) {
		return walkclass.OK
	}
	if s.CutAt(j.depth) {
		return walkclass.TruncatedDepth
	}
	j.Short[root.Class+"."+root.Name+root.Descriptor]++
	return walkclass.TruncatedShort
}

// addCode keeps m under key for the frame-validity oracle. Several methods share a key: the
// copies of one class that other loaders define (the redefinition perturbation's RedefHot,
// whose copies run version 1 or 2), and the hidden classes of one name (the lambdas of one outer
// class: the same accept bytecode calling different bodies through one pool index). Their
// versions are pooled: a bci passes when it fits any of them. Judging by the first method alone
// flagged samples our own walkers read frame for frame (calls/17 -Xint with redefinitions: 3,548
// caller_not_invoke at RedefHot.descend@23; groovy/25: 201 caller_target at a lambda's accept).
func (j *Judge) addCode(key string, m *methods.Method) {
	old, ok := j.code[key]
	if !ok {
		j.code[key] = m
		return
	}
	if old == nil || m == nil || m.Code == nil {
		return
	}
	versions := append([]*methods.Code{old.Code}, old.Earlier...)
	merged := *old
	merged.Earlier = slices.Clone(old.Earlier)
	for _, c := range append([]*methods.Code{m.Code}, m.Earlier...) {
		if !slices.ContainsFunc(versions, c.SameCalls) {
			merged.Earlier = append(merged.Earlier, c)
			versions = append(versions, c)
		}
	}
	j.code[key] = &merged
}

// validity judges each Java frame's bci against its method's bytecode as harness/classify
// judges our own walkers' (classify.FrameReason): the innermost Java frame's must start an
// instruction, each caller's must be an invoke of the method above it. A frame between that
// is no Java frame (native, VM, a marker) leaves the next caller unjudged.
func (j *Judge) validity(s *asyncprofiler.Sample) string {
	if j.code == nil {
		return ""
	}
	var callee *methods.Method
	top := true
	inTopCompiled := true // every Java frame so far an inlined scope: still in the top compiled frame
	for _, f := range s.Frames {
		if !f.Java() {
			if !top {
				callee = nil
			}
			continue
		}
		c, n := join.AccessorFree(f.Class, f.Name)
		m := j.code[hiddenFree(c+"."+n+f.Descriptor)]
		if reason := classify.FrameReason(m, int32(f.Bci), top, callee); reason != "" {
			above := "(top)"
			if callee != nil {
				above = callee.Internal + "." + callee.Name
			}
			j.Misfit[fmt.Sprintf("%s %s <- %s.%s@%d", reason, above, f.Class, f.Name, f.Bci)]++
			j.misfitRedefined = j.redefined[hiddenFree(c+"."+n+f.Descriptor)]
			j.misfitEntryBci = !top && inTopCompiled && f.Bci == 0 && reason == classify.ReasonCallerNotInvoke && f.Compiled()
			return reason
		}
		callee, top = m, false
		inTopCompiled = inTopCompiled && f.Type == asyncprofiler.TypeInlined
	}
	return ""
}

// unnamedRoot is classify's word for a sample it cannot judge (Judge.UnnamedRoot).
const unnamedRoot = "\x00unnamed_root"

// unnamedOutermost: the sample's outermost Java frame, counting the placeholder of a method
// async-profiler could not name as one, is that placeholder.
func unnamedOutermost(s *asyncprofiler.Sample) bool {
	for i := len(s.Frames) - 1; i >= 0; i-- {
		f := s.Frames[i]
		if f.Unnamed() {
			return true
		}
		if f.Java() {
			return false
		}
	}
	return false
}

func (j *Judge) has(key string) bool {
	_, ok := j.known[hiddenFree(key)]
	return ok
}

// Total is the number of samples judged.
func (j *Judge) Total() uint64 {
	var n uint64
	for _, c := range j.Classes {
		n += c
	}
	return n
}

// Summary is the notes a run reports: what was not judged and the invalid frames' methods.
func (j *Judge) Summary(name string) []string {
	notes := append([]string(nil), j.Notes...)
	if j.UnnamedRoot > 0 {
		notes = append(notes, fmt.Sprintf("%d samples whose outermost Java frame async-profiler could not name (%s: its class was unloaded before the recording was written): not judged", j.UnnamedRoot, asyncprofiler.StaleMethod))
	}
	if j.NotJava > 0 {
		notes = append(notes, fmt.Sprintf("%d samples of threads not in Java (no Java frame, no failure frame): not judged", j.NotJava))
	}
	if len(j.Unknown) > 0 {
		notes = append(notes, "invalid: methods not in the method table: "+commonest(j.Unknown))
	}
	if len(j.Short) > 0 {
		notes = append(notes, "truncated:short: outermost Java frames: "+commonest(j.Short))
	}
	if len(j.Misfit) > 0 {
		notes = append(notes, "invalid by bytecode: frames that do not fit: "+commonest(j.Misfit))
	}
	for i := range notes {
		notes[i] = name + ": " + notes[i]
	}
	return notes
}

// commonest names a count map's three largest entries with their counts.
func commonest(m map[string]uint64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, b int) bool { return m[keys[a]] > m[keys[b]] || m[keys[a]] == m[keys[b]] && keys[a] < keys[b] })
	if len(keys) > 3 {
		keys = keys[:3]
	}
	for i, k := range keys {
		keys[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(keys, ", ")
}
