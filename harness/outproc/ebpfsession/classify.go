package ebpfsession

import (
	"strings"
	"syscall"

	"github.com/walkfuzz/walkfuzz/harness/walkclass"
	"github.com/walkfuzz/walkfuzz/walkers/ebpf"
	"golang.org/x/sys/unix"
)

// EBPFEmpty is the class of a sample with no user frame at all.
var EBPFEmpty = walkclass.Error("empty")

// threadRoots are the native functions every thread's stack starts from: reaching one
// means the frame-pointer chain was followed to the end. Names are as in the ELF symbol
// tables (C++ names mangled); a row matches a symbol equal to it or, for rows ending in
// '*', starting with it.
var threadRoots = []string{
	"start_thread", // glibc, every pthread (symbol from libc6-dbg)
	"clone", "__clone", "clone3", "__clone3",
	"_start", "__libc_start_main", "__libc_start_call_main", // the launcher's primordial thread
	"_ZL19thread_native_entryP6Thread", // HotSpot: every JavaThread and VM thread
	"ThreadJavaMain", "JavaMain",       // the launcher's main Java thread (libjli)
}

func isThreadRoot(name string) bool {
	for _, r := range threadRoots {
		if p, ok := strings.CutSuffix(r, "*"); ok && strings.HasPrefix(name, p) || name == r {
			return true
		}
	}
	return false
}

// Summary is what a set of ebpf samples looks like once named and classified.
type Summary struct {
	Samples uint64            `json:"samples"`
	Classes map[string]uint64 `json:"classes"`
	// FullySymbolized counts samples whose every frame up to the thread root has a name
	// (a Java method, the interpreter, a VM blob or a native symbol).
	FullySymbolized uint64 `json:"fully_symbolized"`
	// Frames per Kind (unresolved, module, native, jit, interpreter, stub), up to the root.
	Frames                 map[string]uint64 `json:"frames"`
	SamplesWithUnresolved  uint64            `json:"samples_with_unresolved"`
	SamplesWithInterpreted uint64            `json:"samples_with_interpreted"`
	// PastRoot counts frames the chain yielded beyond the outermost thread root: the
	// kernel follows whatever the root left in rbp.
	PastRoot uint64 `json:"past_root"`
	// Methods counts JIT frames per compiled Java method.
	Methods map[string]uint64 `json:"methods"`
}

// Symbolizer names an address of the sampled process (ebpf.Symbolizer).
type Symbolizer interface {
	Symbolize(pc uint64) ebpf.Frame
}

// Classifier classifies samples one at a time (for ebpf.Config.OnSample) or in bulk.
type Classifier struct {
	sym   Symbolizer
	depth int
	sum   Summary
	buf   []ebpf.Frame
}

// NewClassifier classifies with sym against the effective depth limit: the session's
// depth, or kernel.perf_event_max_stack when that is lower.
func NewClassifier(sym Symbolizer, depth int) *Classifier {
	return &Classifier{sym: sym, depth: depth, sum: Summary{
		Classes: map[string]uint64{}, Frames: map[string]uint64{}, Methods: map[string]uint64{},
	}}
}

// Classify names and classifies samples (ebpf.Session.Samples, each weighted by its
// Count).
func Classify(samples []ebpf.Sample, sym Symbolizer, depth int) Summary {
	c := NewClassifier(sym, depth)
	for i := range samples {
		c.Add(&samples[i])
	}
	return c.Summary()
}

// Summary returns the totals so far.
func (c *Classifier) Summary() Summary { return c.sum }

// Add classifies one sample.
func (c *Classifier) Add(s *ebpf.Sample) {
	n := s.Count
	if n == 0 {
		n = 1
	}
	c.sum.Samples += n
	if s.Err != 0 {
		c.sum.Classes[walkclass.Error(unix.ErrnoName(syscall.Errno(-s.Err)))] += n
		return
	}
	if len(s.Frames) == 0 {
		c.sum.Classes[EBPFEmpty] += n
		return
	}
	c.buf = c.buf[:0]
	root := -1
	for i, pc := range s.Frames {
		if i > 0 {
			pc-- // inside the call instruction, not after it
		}
		f := c.sym.Symbolize(pc)
		c.buf = append(c.buf, f)
		if f.Kind == ebpf.Native && isThreadRoot(f.Name) {
			root = i // keep going: the outermost root ends the stack
		}
	}
	frames := c.buf
	switch {
	case root >= 0:
		c.sum.Classes[walkclass.OK] += n
		c.sum.PastRoot += uint64(len(frames)-root-1) * n
		frames = frames[:root+1]
	case len(frames) >= c.depth:
		c.sum.Classes[walkclass.TruncatedDepth] += n
	default:
		c.sum.Classes[walkclass.TruncatedShort] += n
	}
	named, interp := true, false
	for _, f := range frames {
		c.sum.Frames[f.Kind.String()] += n
		switch f.Kind {
		case ebpf.Unresolved, ebpf.ModuleOnly:
			named = false
		case ebpf.Interpreter:
			interp = true
		case ebpf.JIT:
			c.sum.Methods[f.Name] += n
		}
	}
	if named {
		c.sum.FullySymbolized += n
	} else {
		c.sum.SamplesWithUnresolved += n
	}
	if interp {
		c.sum.SamplesWithInterpreted += n
	}
}
