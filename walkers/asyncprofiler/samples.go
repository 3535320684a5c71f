package asyncprofiler

import (
	"bufio"
	"bytes"
	_ "embed"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// readJfr is the reader ReadRecording runs with the JDK's java in source-file mode: the
// JDK's own JFR parser (jdk.jfr.consumer), printing the sample stream ParseSamples reads.
//
//go:embed ReadJfr.java
var readJfr []byte

// Sample is one stack sample as the profiler recorded it.
type Sample struct {
	Event     string    // jdk.ExecutionSample, profiler.WallClockSample, datadog.ExecutionSample
	Time      time.Time // the sample's start time
	TID       int64     // OS thread id; -1 when the event names no thread
	JavaTID   int64
	Thread    string // Java name, else OS name
	Truncated bool   // JFR's truncated flag as the profiler set it (see CutAt)
	NoStack   bool   // the event has no stack trace
	Frames    []Frame
	// The fields of the JDK's own samplers beside the stack (an X record; walkers/jfr reads
	// them): JDK 25's jdk.CPUTimeSample (failed, biased, samplingPeriod) and
	// jdk.CPUTimeSamplesLost (lostSamples). Has* say the event has the field.
	Failed, Biased       bool
	Period               time.Duration
	HasPeriod            bool
	Lost                 uint64
	HasFailed, HasBiased bool
	HasLost              bool
}

// Frame is one frame of a sample, innermost first.
type Frame struct {
	// Class is a Java frame's class in internal form (java/lang/Thread), a native frame's
	// library (libjvm.so; async-profiler 4.x), "" for kernel and marker frames.
	Class      string
	Name       string
	Descriptor string
	Modifiers  int
	Bci, Line  int
	Type       string // Interpreted, JIT compiled, Inlined, Native, C++, Kernel
}

// accStatic is ACC_STATIC of a method's modifiers.
const accStatic = 0x0008

// Static reports whether the frame's method is static.
func (f Frame) Static() bool { return f.Modifiers&accStatic != 0 }

// The JFR frame types of Java methods; any other frame is native, kernel or a marker.
const (
	TypeInterpreted = "Interpreted"
	TypeCompiled    = "JIT compiled"
	TypeC1Compiled  = "C1 compiled"
	TypeInlined     = "Inlined" // a scope inlined into the compiled frame below it
)

// javaTypes are the frame types of Java methods.
var javaTypes = map[string]bool{TypeInterpreted: true, TypeCompiled: true, TypeInlined: true, TypeC1Compiled: true}

// Compiled reports whether the frame is one of a compiled frame's scopes: the compiled
// method's own or one inlined into it.
func (f Frame) Compiled() bool {
	return f.Type == TypeCompiled || f.Type == TypeC1Compiled || f.Type == TypeInlined
}

// Java reports whether the frame is a Java method's.
func (f Frame) Java() bool { return javaTypes[f.Type] && f.Class != "" }

// StaleMethod names the frame async-profiler writes for a Java frame whose method it can no
// longer name when it writes the recording (JVMTI refuses the jmethodID: the method's class
// was unloaded since the sample): a frame of no class, typed Native, bci 0. It is a Java
// frame of the walk, not a failure; the method and its bci are lost.
const StaleMethod = "stale_jmethodID"

// ddprofStale is Datadog's java-profiler's name for the same placeholder (ddprof 1.22.0: a
// classless frame "jvmtiError", typed as the frame's tier, descriptor "()L;").
const ddprofStale = "jvmtiError"

// Unnamed reports whether f is a profiler's placeholder for a Java frame whose method it
// could no longer name when it wrote the recording (StaleMethod, ddprof's jvmtiError): a
// frame of the walk whose method and bci are lost, never a failure and never to be dropped.
func (f Frame) Unnamed() bool {
	return f.Class == "" && (f.Name == StaleMethod || f.Name == ddprofStale)
}

// markers are the frames async-profiler and its derivatives put where a walk failed,
// named after the failure: `[break_compiled]` in their text output, a classless frame in
// JFR. AsyncGetCallTrace's codes keep their names (unknown_Java is its -5).
var markers = map[string]bool{
	"unknown": true, "unknown_Java": true, "unknown_java": true, "unknown_nmethod": true, "unknown_scope": true,
	"unknown_state": true, "unknown_unwalkable": true, "unknown_not_Java": true,
	"not_walkable_Java": true, "not_walkable_not_Java": true, "no_Java_frame": true, "GC_active": true,
	"thread_exit": true, "deopt": true, "safepoint": true, "no_class_load": true,
	"break_compiled": true, "break_interpreted": true, "break_entry_frame": true, "break_not_walkable": true,
	"break_deopt": true, "break_stack_range": true, "break_stub": true,
}

// Marker is the failure a marker frame names ("break_compiled"), or "" for a real frame.
// Names of that form the table does not know yet (break_*, unknown_*) count too.
func (f Frame) Marker() string {
	if f.Class != "" || f.Type == "Kernel" || javaTypes[f.Type] {
		return ""
	}
	name := strings.TrimSuffix(strings.TrimPrefix(f.Name, "["), "]")
	if markers[name] || strings.HasPrefix(name, "break_") || strings.HasPrefix(name, "unknown_") {
		return name
	}
	return ""
}

// Benign reports whether a marker says the thread was not running Java rather than that
// a walk failed: AsyncGetCallTrace's 0, -3 and -8, which async-profiler itself treats as
// benign (FACTS); with cstack=no they are all a VM thread's sample holds.
func Benign(marker string) bool {
	switch marker {
	case "no_Java_frame", "unknown_not_Java", "thread_exit":
		return true
	}
	return false
}

// Markers are the sample's marker frames' names that fail its Java walk (MarkerAt),
// innermost first.
func (s *Sample) Markers() []string {
	var out []string
	for i := range s.Frames {
		if m := s.MarkerAt(i); m != "" {
			out = append(out, m)
		}
	}
	return out
}

// callStub is HotSpot's StubRoutines::call_stub, which the VM's JavaCalls enter Java through:
// the frame below a Java stack's outermost frame when the VM called it (a thread's run(),
// a class loader's loadClass, a <clinit>).
const callStub = "call_stub"

// MarkerAt is frame i's marker (Frame.Marker) if it fails the sample's Java walk, else "".
// A marker below a call stub that has Java frames above it does not: the walker reached the
// VM entry the Java stack began at and failed in the VM's native frames below it, which only
// a mixed walk (ddprof's cstack=vmx) goes on into. Seen: ddprof 1.22.0's vmx walks of
// recursion/17 ending `Thread.run, call_stub, unknown` (290 of 350 samples, all judged
// error:unknown though their Java stacks were whole: a walkfuzz false flag). Java frames
// below the stub, if the walker got there, still count.
func (s *Sample) MarkerAt(i int) string {
	m := s.Frames[i].Marker()
	if m == "" {
		return ""
	}
	java := false
	for _, f := range s.Frames[:i] {
		switch {
		case f.Java():
			java = true
		case java && f.Name == callStub:
			return ""
		}
	}
	return m
}

// CutAt reports whether the profiler cut the sample at its stack depth (jstackdepth): it
// holds depth frames besides kernel ones. The depth tells, not JFR's truncated flag, whose
// meaning differs: async-profiler 4.6 cuts at its depth without setting it (512-frame
// samples of the recursion workload at jstackdepth=512, truncated false), and ddprof 1.22.0
// sets it on short start-up stacks that end at a VM entry (Main.<clinit>,
// LauncherHelper.checkAndLoadMain), which harness/classify counts as complete.
func (s *Sample) CutAt(depth int) bool {
	n := 0
	for _, f := range s.Frames {
		if f.Type != "Kernel" {
			n++
		}
	}
	return depth > 0 && n >= depth
}

// RootJava is the sample's outermost Java frame: where a complete walk of a Java thread
// ends (frames below it are the VM's and libc's). ok is false without Java frames.
func (s *Sample) RootJava() (Frame, bool) {
	for i := len(s.Frames) - 1; i >= 0; i-- {
		if s.Frames[i].Java() {
			return s.Frames[i], true
		}
	}
	return Frame{}, false
}

// ReadRecording reads a recording's samples of the given event types with the JDK's own
// JFR parser (java is that JDK's java; 17+) and hands each to fn.
func ReadRecording(java, recording string, events []string, fn func(*Sample)) error {
	return ReadWith(java, nil, "ReadJfr.java", readJfr, recording, events, fn)
}

// ReadWith runs a reader that prints the sample stream (ParseSamples), given as Java source,
// with java in source-file mode and the classpath, on the recording: how walkers/ddprof reads
// recordings the JDK's own parser refuses.
func ReadWith(java string, classpath []string, srcName string, src []byte, recording string, events []string, fn func(*Sample)) error {
	dir, err := os.MkdirTemp("", "walkfuzz-reader")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, srcName)
	if err := os.WriteFile(path, src, 0o644); err != nil {
		return err
	}
	args := []string{"-XX:TieredStopAtLevel=1", "-Xshare:auto"}
	if len(classpath) > 0 {
		args = append(args, "-cp", strings.Join(classpath, ":"))
	}
	cmd := exec.Command(java, append(args, path, recording, strings.Join(events, ","))...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("reading %s: %w", recording, err)
	}
	perr := ParseSamples(out, fn)
	io.Copy(io.Discard, out)
	if werr := cmd.Wait(); werr != nil {
		return fmt.Errorf("reading %s with %s: %v: %s", recording, java, werr, firstLine(stderr.String()))
	}
	if perr != nil {
		return fmt.Errorf("reading %s: %w", recording, perr)
	}
	return nil
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// streamHeader opens the sample stream ReadJfr.java writes. Then, one per line, tab-separated:
//
//	M id class name descriptor modifiers      a method, before its first use
//	T id type                                 a frame type, before its first use
//	X failed biased period_ns lost            fields of the next S's event, "-" where it has none
//	S event sec.nanos tid javatid thread truncated(0|1|-) frames
//	E                                         the end: the reader finished
//
// frames are space-separated id:bci:line:type tokens, innermost first, with *N when a
// token repeats N times in a row.
const streamHeader = "walkfuzz-samples 1"

// ParseSamples reads the sample stream and hands each sample to fn. A stream without its
// end line was cut short (the reader died) and is an error after its samples.
func ParseSamples(r io.Reader, fn func(*Sample)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<28)
	if !sc.Scan() {
		return fmt.Errorf("empty sample stream: %v", sc.Err())
	}
	if sc.Text() != streamHeader {
		return fmt.Errorf("not a sample stream: %q", trim(sc.Text()))
	}
	methods := map[int]Frame{}
	types := map[int]string{}
	var x *Sample // the X record's fields, waiting for its S
	for n := 2; sc.Scan(); n++ {
		line := sc.Text()
		f := strings.Split(line, "\t")
		var err error
		switch f[0] {
		case "M":
			err = method(f, methods)
		case "T":
			if len(f) != 3 {
				err = fmt.Errorf("want 3 fields")
				break
			}
			var id int
			if id, err = strconv.Atoi(f[1]); err == nil {
				types[id] = f[2]
			}
		case "X":
			if len(f) != 5 {
				err = fmt.Errorf("want 5 fields")
				break
			}
			x = &Sample{}
			err = extras(x, f)
		case "S":
			var s *Sample
			if s, err = sample(f, methods, types); err == nil {
				if x != nil {
					s.Failed, s.HasFailed, s.Biased, s.HasBiased = x.Failed, x.HasFailed, x.Biased, x.HasBiased
					s.Period, s.HasPeriod, s.Lost, s.HasLost = x.Period, x.HasPeriod, x.Lost, x.HasLost
				}
				fn(s)
			}
			x = nil
		case "E":
			return nil
		default:
			err = fmt.Errorf("unknown record")
		}
		if err != nil {
			return fmt.Errorf("line %d %q: %w", n, trim(line), err)
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return fmt.Errorf("sample stream cut short (no end line)")
}

// extras fills the sample's fields from an X record.
func extras(s *Sample, x []string) error {
	var err error
	flag := func(v string, has, set *bool) {
		switch v {
		case "-":
		case "0", "1":
			*has, *set = true, v == "1"
		default:
			err = fmt.Errorf("bad flag %q", v)
		}
	}
	flag(x[1], &s.HasFailed, &s.Failed)
	flag(x[2], &s.HasBiased, &s.Biased)
	if err != nil {
		return err
	}
	if x[3] != "-" {
		ns, perr := strconv.ParseInt(x[3], 10, 64)
		if perr != nil || ns < 0 {
			return fmt.Errorf("bad period %q", x[3])
		}
		s.Period, s.HasPeriod = time.Duration(ns), true
	}
	if x[4] != "-" {
		n, perr := strconv.ParseUint(x[4], 10, 64)
		if perr != nil {
			return fmt.Errorf("bad lost count %q", x[4])
		}
		s.Lost, s.HasLost = n, true
	}
	return nil
}

func trim(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// internalName turns a binary class name into the internal form `jfr print` shows. A
// hidden class keeps the dot of its address suffix (Main$$Lambda$1.0x00007f4310001640).
func internalName(c string) string {
	if strings.IndexByte(c, '.') < 0 {
		return c
	}
	if i := strings.LastIndex(c, ".0x"); i > 0 {
		return strings.ReplaceAll(c[:i], ".", "/") + c[i:]
	}
	return strings.ReplaceAll(c, ".", "/")
}

func method(f []string, methods map[int]Frame) error {
	if len(f) != 6 {
		return fmt.Errorf("want 6 fields")
	}
	id, err := strconv.Atoi(f[1])
	if err != nil {
		return err
	}
	mod, err := strconv.Atoi(f[5])
	if err != nil {
		return err
	}
	methods[id] = Frame{Class: f[2], Name: f[3], Descriptor: f[4], Modifiers: mod}
	return nil
}

func sample(f []string, methods map[int]Frame, types map[int]string) (*Sample, error) {
	if len(f) != 8 {
		return nil, fmt.Errorf("want 8 fields")
	}
	s := &Sample{Event: f[1], Thread: f[5]}
	sec, nsec, ok := strings.Cut(f[2], ".")
	secs, err1 := strconv.ParseInt(sec, 10, 64)
	nanos, err2 := strconv.ParseInt(nsec, 10, 64)
	if !ok || err1 != nil || err2 != nil || nanos < 0 || nanos > 999999999 {
		return nil, fmt.Errorf("bad time %q", f[2])
	}
	s.Time = time.Unix(secs, nanos).UTC()
	var err error
	if s.TID, err = strconv.ParseInt(f[3], 10, 64); err != nil {
		return nil, err
	}
	if s.JavaTID, err = strconv.ParseInt(f[4], 10, 64); err != nil {
		return nil, err
	}
	switch f[6] {
	case "-":
		s.NoStack = true
	case "1":
		s.Truncated = true
	case "0":
	default:
		return nil, fmt.Errorf("bad truncated %q", f[6])
	}
	for _, tok := range strings.Fields(f[7]) {
		body, rep, hasRep := strings.Cut(tok, "*")
		count := 1
		if hasRep {
			if count, err = strconv.Atoi(rep); err != nil || count < 1 || count > 1<<20 {
				return nil, fmt.Errorf("bad repeat in %q", tok)
			}
		}
		p := strings.Split(body, ":")
		if len(p) != 4 {
			return nil, fmt.Errorf("bad frame %q", tok)
		}
		var v [4]int
		for i := range p {
			if v[i], err = strconv.Atoi(p[i]); err != nil {
				return nil, fmt.Errorf("bad frame %q", tok)
			}
		}
		fr, ok := methods[v[0]]
		if !ok {
			return nil, fmt.Errorf("frame %q: method %d not defined", tok, v[0])
		}
		typ, ok := types[v[3]]
		if !ok {
			return nil, fmt.Errorf("frame %q: type %d not defined", tok, v[3])
		}
		fr.Bci, fr.Line, fr.Type = v[1], v[2], typ
		if javaTypes[typ] {
			// The JDK's reader names classes in binary form (java.lang.Thread); method
			// tables and walkers/jfr use the internal form.
			fr.Class = internalName(fr.Class)
		}
		for range count {
			s.Frames = append(s.Frames, fr)
		}
	}
	return s, nil
}
