package asyncprofiler

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Signals the profilers' engines deliver (Linux x86_64).
const (
	SIGVTALRM = 26
	SIGPROF   = 27
)

// Engine is how a profiler takes its samples for one of walkfuzz's signal modes.
type Engine struct {
	Event  string // the event= option
	Signal int    // the signal its handler runs in
	// Sample is the JFR event type its samples are written as.
	Sample string
	Note   string
}

// Engines maps walkfuzz's signal modes (--mode) to async-profiler's engines. A mode
// missing here has no equivalent.
var Engines = map[string]Engine{
	"cpu": {Event: "cpu", Signal: SIGPROF, Sample: "jdk.ExecutionSample",
		Note: "perf_events task clock per thread, as walkfuzz's cpu mode (async-profiler falls back to ctimer where perf_events is refused)"},
	"cpu-timer": {Event: "ctimer", Signal: SIGPROF, Sample: "jdk.ExecutionSample",
		Note: "timer_create(CLOCK_THREAD_CPUTIME_ID) per thread, as walkfuzz's cpu-timer mode: tick-bound"},
	"wall": {Event: "wall", Signal: SIGVTALRM, Sample: "profiler.WallClockSample",
		Note: "one sampler thread signalling threads with tgkill (walkfuzz's wall mode uses per-thread timers instead)"},
	"tgkill": {Event: "wall", Signal: SIGVTALRM, Sample: "profiler.WallClockSample",
		Note: "one sampler thread signalling threads with tgkill, as walkfuzz's tgkill mode"},
}

// Target is what Options plans a profiler run for.
type Target struct {
	Lib        *Library
	Mode       string // vm, vmx, fp, dwarf, agct
	Signals    string // walkfuzz's signal mode: cpu, cpu-timer, wall, tgkill
	IntervalUs int    // the episode's interval
	Depth      int    // the stack depth asked for; 0: the profiler's default (2048)
	Dir        string // the run directory: the recording goes there
}

// Plan is one profiler run: the JVM flag that loads and starts it, and what it records.
type Plan struct {
	Flag      string   `json:"flag"`    // -agentpath:LIB=OPTIONS
	Options   string   `json:"options"` // OPTIONS
	Recording string   `json:"recording"`
	Events    []string `json:"events"` // JFR event types holding the samples
	Signal    int      `json:"signal"` // the signal the profiler samples in
	// Depth is the profiler's stack depth: a sample that long was cut there (Sample.CutAt).
	Depth   int      `json:"depth"`
	Library string   `json:"library"`
	Version string   `json:"version"`
	Notes   []string `json:"notes,omitempty"`
}

// DefaultDepth is async-profiler's jstackdepth when none is given.
const DefaultDepth = 2048

// RecordingName is the recording's file name in the run directory.
const RecordingName = "async-profiler.jfr"

// Options plans an async-profiler run: `start,event=E,interval=NS,cstack=C[,features=F]
// [,jstackdepth=D],file=DIR/async-profiler.jfr`. A mode the library lacks or a signal mode
// with no engine is an "unsupported: why" error.
func Options(t Target) (Plan, error) {
	m, ok := LookupMode(t.Mode)
	if !ok {
		return Plan{}, fmt.Errorf("unsupported: async-profiler has no mode %q (modes: %s)", t.Mode, strings.Join(ModeNames(), ", "))
	}
	if t.Lib == nil {
		return Plan{}, fmt.Errorf("unsupported: no async-profiler library: %s", FetchStep)
	}
	if err := t.Lib.Supports(m); err != nil {
		return Plan{}, err
	}
	eng, ok := Engines[t.Signals]
	if !ok {
		return Plan{}, fmt.Errorf("unsupported: async-profiler has no engine for signal mode %q", t.Signals)
	}
	if t.IntervalUs <= 0 {
		return Plan{}, fmt.Errorf("async-profiler: sampling interval %d µs", t.IntervalUs)
	}
	p := Plan{Recording: filepath.Join(t.Dir, RecordingName), Events: []string{eng.Sample}, Signal: eng.Signal,
		Library: t.Lib.Path, Version: t.Lib.Version, Notes: []string{eng.Note}}
	opts := []string{"start", "event=" + eng.Event, fmt.Sprintf("interval=%d", int64(t.IntervalUs)*1000), "cstack=" + m.Cstack}
	switch {
	case m.Features != "" && t.Lib.Has(m.Features+" feature"):
		opts = append(opts, "features="+m.Features)
	case m.Features != "":
		p.Notes = append(p.Notes, fmt.Sprintf("%s %s has no features=%s: cstack=%s walks Java frames with AsyncGetCallTrace", t.Lib.Profiler, t.Lib.Version, m.Features, m.Cstack))
	}
	if m.Name == "dwarf" && !VersionLess(t.Lib.Version, "4.4") && t.Lib.Version != "custom" {
		p.Notes = append(p.Notes, "cstack=dwarf is an alias of vm since async-profiler 4.4")
	}
	p.Depth = DefaultDepth
	if t.Depth > 0 {
		p.Depth = t.Depth
		opts = append(opts, fmt.Sprintf("jstackdepth=%d", t.Depth))
	}
	opts = append(opts, "file="+p.Recording)
	p.Options = strings.Join(opts, ",")
	p.Flag = "-agentpath:" + t.Lib.Path + "=" + p.Options
	return p, nil
}
