// Package giveup judges every walk that ended in an error code by another walk of the same
// signal: when a second walker (the judge) completed a valid walk of the very same
// ucontext, the stack was walkable, and the error is a give-up (giveup:<code>) unless the
// code, or the place the thread was caught, is one the walker refuses by design
// (excused:<code>). An error whose judge did not complete either is justified:<code>; one
// with no judge walk on its signal is unjudged:<code>.
//
// A walker's own error share moves by a point or more from run to run (ASGCT: 6.9-8.4% on
// recursion, 13.6-14.7% on lambdas), so a walker that gives up on a few percent of walkable
// stacks does not show in it; judged signal by signal, it does.
package giveup

import (
	"encoding/json"
	"os"
	"strings"

	"github.com/walkfuzz/walkfuzz/harness/classify"
	"github.com/walkfuzz/walkfuzz/harness/methods"
	"github.com/walkfuzz/walkfuzz/harness/samplelog"
	"github.com/walkfuzz/walkfuzz/harness/walkclass"
)

// Counts per walker: these keys, and walkclass.Giveup(code), Excused(code), Justified(code),
// Unjudged(code) by the walker's code names.
const (
	Walks  = "walks"      // walks judged for this walker (perturbed and injected ones left out)
	Errors = "errors"     // those that ended in an error code
	Judged = "judged"     // errors with a judge walk on their signal
	PPM    = "giveup_ppm" // giveup:* walks per million walks
)

// ByDesign are AsyncGetCallTrace's codes that it returns on a walkable stack by design, so
// that a complete walk by another walker on the same signal proves no give-up: it does not
// walk threads in the VM or native code without a walkable anchor (unknown_not_Java), walks
// them from the anchor only through frames it can verify (not_walkable_not_Java: e.g. a
// thread stopped in a compiled loop's safepoint poll), nor
// while a GC runs or a Method* is not valid (GC_active), in the deoptimization handler
// (deopt), during thread start-up and exit (no_Java_frame, thread_exit, unknown_state,
// safepoint), or without ClassLoad events (no_class_load, the agent's fault).
var ByDesign = map[string]bool{
	"no_Java_frame": true, "no_class_load": true, "GC_active": true, "unknown_not_Java": true, "not_walkable_not_Java": true,
	"unknown_state": true, "thread_exit": true, "deopt": true, "safepoint": true,
}

// Tops of the judge's walk: where the thread was caught, as the judge saw it.
const (
	TopInterpreted = "interpreted" // an interpreter frame
	TopCompiled    = "compiled"    // a compiled (or inlined) frame
	TopJava        = "java"        // a Java frame of a judge that names no tiers (ASGCT)
	TopEntry       = "entry"       // a compiled frame at bci -1: its prologue
	TopStub        = "stub"        // a stub or VM frame above the first Java frame, or a call site below a stub
	TopNative      = "native"      // a native method
	// TopCall: a Java frame at an instruction that leaves the method's own code (an invoke,
	// an allocation, a runtime call, a return, the entry at bci 0), or whose bytecode is not
	// known: the thread may be in a callee's entry, a stub or an epilogue the judge stepped over.
	TopCall  = "call"
	TopOther = "other" // no Java frame, or a frame type the judge did not name
)

// Ordinary tops are those where the walker's own code decodes the frame: an error there, on
// a stack the judge walked to its root, is a give-up. Elsewhere (stubs, prologues, VM and
// native code) ASGCT refuses frames it cannot prove safe by design. A compiled top is not
// ordinary: the vmstructs walker names a compiled frame caught at an arbitrary pc by the next
// PcDesc's scope and recovers its caller by guessing, so its walk cannot tell the body from
// the prologue, the epilogue or a poll stub, where ASGCT rightly refuses (unknown_Java). With
// compiled tops judged, unmodified ASGCT's giveup share was 0.05-0.2% (JDK 17, recursion,
// lambdas, loops; 0.2% under -Xcomp), every one unknown_Java in a small compiled method. An
// interpreter frame names its method and bcp in fixed slots once it is built.
var Ordinary = map[string]bool{TopInterpreted: true, TopJava: true}

// Example shows a judged error beside the judge's walk.
type Example struct {
	Walker string   `json:"walker"`
	Class  string   `json:"class"`
	Judge  string   `json:"judge"`
	Top    string   `json:"judge_top"`
	Tid    uint32   `json:"tid"`
	Sample uint64   `json:"sample"`
	Frames []string `json:"judge_frames"`
}

type key struct {
	tid    uint32
	sample uint64
}

// Judge pairs the walks of one signal and judges each error among them.
type Judge struct {
	walkers []string // by record index; "" for walkers whose walks are not of the signal's instant
	paired  int      // walkers with a name: a signal is complete with this many walks
	class   func(*samplelog.Record) string
	errName func(*samplelog.Record) string
	tab     *methods.Table
	pending map[key][]*samplelog.Record
	order   []key
	// Counts by walker (see the constants).
	Counts   map[string]map[string]uint64
	Examples []Example
	kept     map[string]int
}

// New returns nil when fewer than two walkers walk in the handler: no error has a judge.
// class classifies a walk without counting it (classify.Classifier.Classify); errName
// names a failed walk's class (classify.Classifier.ErrorClass, error:<name>).
func New(walkers []string, tab *methods.Table, class, errName func(*samplelog.Record) string) *Judge {
	n := 0
	for _, w := range walkers {
		if w != "" {
			n++
		}
	}
	if n < 2 {
		return nil
	}
	return &Judge{walkers: walkers, paired: n, class: class, errName: errName, tab: tab,
		pending: map[key][]*samplelog.Record{}, Counts: map[string]map[string]uint64{}, kept: map[string]int{}}
}

// keep bounds the signals waiting for their other walks (a walk dropped with the ring full
// leaves its signal incomplete): the oldest is judged with what it has.
const keep = 4096

// Add takes every walk, in log order.
func (j *Judge) Add(r *samplelog.Record) {
	if j == nil || int(r.Walker) >= len(j.walkers) || j.walkers[r.Walker] == "" {
		return
	}
	if r.Flags&samplelog.FlagPerturbed != 0 || r.InjectedError() {
		return // no truth to judge by (register fuzzing) or walkfuzz's own error (read faults)
	}
	k := key{r.Tid, r.Sample}
	ws, ok := j.pending[k]
	if !ok {
		j.order = append(j.order, k)
	}
	r.Retain()
	ws = append(ws, r)
	if len(ws) < j.paired {
		j.pending[k] = ws
		j.evict()
		return
	}
	delete(j.pending, k)
	j.judge(ws)
}

// evict judges the oldest incomplete signals beyond keep.
func (j *Judge) evict() {
	for len(j.pending) > keep && len(j.order) > 0 {
		k := j.order[0]
		j.order = j.order[1:]
		if ws, ok := j.pending[k]; ok {
			delete(j.pending, k)
			j.judge(ws)
		}
	}
	if len(j.order) > 4*keep {
		live := j.order[:0]
		for _, k := range j.order {
			if _, ok := j.pending[k]; ok {
				live = append(live, k)
			}
		}
		j.order = live
	}
}

// Flush judges the signals still waiting (at the end of the run).
func (j *Judge) Flush() {
	if j == nil {
		return
	}
	for _, k := range j.order {
		if ws, ok := j.pending[k]; ok {
			delete(j.pending, k)
			j.judge(ws)
		}
	}
	j.order = nil
}

func (j *Judge) counts(w string) map[string]uint64 {
	m := j.Counts[w]
	if m == nil {
		m = map[string]uint64{Walks: 0, Errors: 0, Judged: 0, PPM: 0}
		j.Counts[w] = m
	}
	return m
}

// judge counts every walk of one signal and judges its errors by the others.
func (j *Judge) judge(ws []*samplelog.Record) {
	defer func() {
		for _, r := range ws {
			r.Release()
		}
	}()
	var okJudge *samplelog.Record // a walk of this signal classified ok, found once
	looked := false
	for _, r := range ws {
		name := j.walkers[r.Walker]
		m := j.counts(name)
		m[Walks]++
		if r.Result > 0 {
			continue
		}
		m[Errors]++
		code := strings.TrimPrefix(j.errName(r), walkclass.ErrorPrefix)
		if len(ws) < 2 {
			m[walkclass.Unjudged(code)]++
			continue
		}
		m[Judged]++
		if !looked {
			looked = true
			for _, o := range ws {
				if o.Result > 0 && j.class(o) == walkclass.OK {
					okJudge = o
					break
				}
			}
		}
		if okJudge == nil {
			m[walkclass.Justified(code)]++
			continue
		}
		top := Top(okJudge, j.tab)
		class := walkclass.Excused(code)
		if !ByDesign[code] && Ordinary[top] {
			class = walkclass.Giveup(code)
		}
		m[class]++
		if ek := name + class + top; j.kept[ek] < 3 {
			j.kept[ek]++
			e := Example{Walker: name, Class: class, Judge: j.walkers[okJudge.Walker], Top: top, Tid: r.Tid, Sample: r.Sample}
			for i := range okJudge.Frames {
				if i == 12 {
					break
				}
				e.Frames = append(e.Frames, classify.RenderFrame(&okJudge.Frames[i], j.tab))
			}
			j.Examples = append(j.Examples, e)
		}
	}
}

// Top is where a complete walk says the thread was caught (the Top* constants). Only an
// interpreted or compiled frame at an instruction that stays inside its method's code
// (Ordinary) is a place every walker decodes: the vmstructs walker recovers the caller of a
// stub, a callee's frame under construction or an epilogue by guessing, and reports it at
// its call site, where ASGCT rightly refuses (unknown_Java, not_walkable_Java).
func Top(r *samplelog.Record, tab *methods.Table) string {
	if r.Flags&samplelog.FlagCallsiteTop != 0 {
		return TopStub
	}
	for i := range r.Frames {
		f := &r.Frames[i]
		var kind string
		switch f.Type {
		case samplelog.FrameCPP, samplelog.FrameStub:
			return TopStub
		case samplelog.FrameNative:
			return TopNative
		case samplelog.FrameInterpreted:
			kind = TopInterpreted
		case samplelog.FrameCompiled, samplelog.FrameInlined:
			kind = TopCompiled
		case samplelog.FrameJava:
			// ASGCT names no tier: bci -3 is a native method, -1 a compiled prologue. It
			// decodes the frame itself, so where it completed, a walker built like it can.
			if f.Bci == -3 {
				return TopNative
			}
			kind = TopJava
		default:
			return TopOther
		}
		if f.Bci == -1 {
			return TopEntry
		}
		if !staysInMethod(tab.Get(f.Method), f.Bci) {
			return TopCall
		}
		return kind
	}
	return TopOther
}

// staysInMethod: the instruction at bci runs in the method's own code, calling nothing
// (no invoke, allocation, resolution, class initialisation, type check slow path, monitor,
// throw or return), is no backward branch (a loop's safepoint poll: a thread stopped in the
// poll's stub is reported at the loop's back edge) and is not the entry (bci 0). A compiled
// top frame caught at an arbitrary pc is named by the next PcDesc's scope, so its bci is
// often that of the next call or poll.
func staysInMethod(m *methods.Method, bci int32) bool {
	if m == nil || m.Native || m.Code == nil || bci <= 0 || !m.Code.Starts(bci) {
		return false
	}
	b := m.Code.Bytes
	switch op := b[bci]; {
	case leaves[op]:
		return false
	case (op >= 0x99 && op <= 0xa7) || op == 0xc6 || op == 0xc7: // if<cond>, goto, ifnull, ifnonnull
		return int(bci)+2 < len(b) && int16(uint16(b[bci+1])<<8|uint16(b[bci+2])) > 0
	case op == 0xc8: // goto_w
		return int(bci)+4 < len(b) && int32(uint32(b[bci+1])<<24|uint32(b[bci+2])<<16|uint32(b[bci+3])<<8|uint32(b[bci+4])) > 0
	}
	return true
}

// leaves are the opcodes that may leave the method's code (JVMS 6.5 numbering).
var leaves = func() [256]bool {
	var t [256]bool
	for _, op := range []byte{
		0x12, 0x13, 0x14, // ldc, ldc_w, ldc2_w: resolution
		0x53,                   // aastore: store check
		0x6c, 0x6d, 0x70, 0x71, // idiv, ldiv, irem, lrem: ArithmeticException
		0xac, 0xad, 0xae, 0xaf, 0xb0, 0xb1, // returns: the epilogue
		0xb2, 0xb3, 0xb4, 0xb5, // get/putstatic, get/putfield: resolution, class init
		0xb6, 0xb7, 0xb8, 0xb9, 0xba, // invokes
		0xbb, 0xbc, 0xbd, 0xbe, 0xbf, 0xc0, 0xc1, // new, newarray, anewarray, arraylength, athrow, checkcast, instanceof
		0xc2, 0xc3, 0xc5, // monitorenter, monitorexit, multianewarray
	} {
		t[op] = true
	}
	return t
}()

// Finish completes the counts (giveup_ppm).
func (j *Judge) Finish() {
	j.Flush()
	for _, m := range j.Counts {
		var g uint64
		for k, n := range m {
			if strings.HasPrefix(k, walkclass.GiveupPrefix) {
				g += n
			}
		}
		if m[Walks] > 0 {
			m[PPM] = g * 1_000_000 / m[Walks]
		}
	}
}

// WriteExamples stores the kept judgements.
func (j *Judge) WriteExamples(path string) error {
	b, _ := json.MarshalIndent(j.Examples, "", "  ")
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
