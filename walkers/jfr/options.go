package jfr

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Event types the walker records.
const (
	ExecutionSample    = "jdk.ExecutionSample"
	CPUTimeSample      = "jdk.CPUTimeSample"
	CPUTimeSamplesLost = "jdk.CPUTimeSamplesLost"
)

// JFR's limits.
const (
	DefaultDepth = 64
	MaxDepth     = 2048
	// minPeriodMs is jdk.ExecutionSample's floor: its period is whole milliseconds.
	minPeriodMs = 1
	// cpuTimeMajor is the first JDK with jdk.CPUTimeSample (JEP 509).
	cpuTimeMajor = 25
)

// Target is what Options plans a recording for.
type Target struct {
	JDKMajor   int    // the JDK that runs the workload: 17, 21, 25, ...
	Dir        string // the run directory: settings, recording and repository go there
	IntervalUs int    // the sampling interval asked for (the episode's signal interval)
	Depth      int    // the stack depth asked for; 0: JFR's default
}

// Plan is a recording: the JVM flags that start it and what was asked of it.
type Plan struct {
	Flags      []string `json:"flags"`
	Settings   string   `json:"settings"`   // the generated .jfc
	Recording  string   `json:"recording"`  // written when the JVM exits normally
	Repository string   `json:"repository"` // JFR's chunks, left behind by a crash
	Events     []string `json:"events"`     // sample event types recorded
	Depth      int      `json:"depth"`
	PeriodMs   int      `json:"execution_period_ms"`
	// ThrottleUs is jdk.CPUTimeSample's period in thread CPU time; 0 when not recorded.
	ThrottleUs int      `json:"cpu_time_throttle_us,omitempty"`
	Notes      []string `json:"notes,omitempty"`
}

// RequestedPerThreadHz is the rate each sampled thread should see for an event type:
// per wall second for jdk.ExecutionSample, per CPU second for jdk.CPUTimeSample.
func (p Plan) RequestedPerThreadHz(event string) float64 {
	switch event {
	case ExecutionSample:
		return 1000 / float64(p.PeriodMs)
	case CPUTimeSample:
		if p.ThrottleUs > 0 {
			return 1e6 / float64(p.ThrottleUs)
		}
	}
	return 0
}

// Options plans the recording for t: jdk.ExecutionSample at the sampling
// interval (floored to JFR's 1 ms), on JDK 25+ jdk.CPUTimeSample throttled to the exact
// interval plus jdk.CPUTimeSamplesLost, and the stack depth (default 64, at most 2048).
// It writes the settings file into t.Dir.
func Options(t Target) (Plan, error) {
	p := Plan{
		Settings:   filepath.Join(t.Dir, "walkfuzz.jfc"),
		Recording:  filepath.Join(t.Dir, "walkfuzz.jfr"),
		Repository: filepath.Join(t.Dir, "jfr-repository"),
		Events:     []string{ExecutionSample},
		Depth:      t.Depth,
	}
	us := t.IntervalUs
	if us <= 0 {
		return p, fmt.Errorf("jfr walker: sampling interval %d µs", us)
	}
	p.PeriodMs = (us + 999) / 1000
	switch {
	case us < minPeriodMs*1000:
		p.PeriodMs = minPeriodMs
		p.Notes = append(p.Notes, fmt.Sprintf("jdk.ExecutionSample runs at 1 ms, JFR's floor, not the episode's %d µs", us))
	case us%1000 != 0:
		p.Notes = append(p.Notes, fmt.Sprintf("jdk.ExecutionSample period rounded up from %d µs to %d ms (JFR takes whole milliseconds)", us, p.PeriodMs))
	}
	if t.JDKMajor >= cpuTimeMajor {
		p.ThrottleUs = us
		p.Events = append(p.Events, CPUTimeSample)
	} else {
		p.Notes = append(p.Notes, fmt.Sprintf("jdk.CPUTimeSample needs JDK %d+, this is JDK %d", cpuTimeMajor, t.JDKMajor))
	}
	switch {
	case p.Depth <= 0:
		p.Depth = DefaultDepth
	case p.Depth > MaxDepth:
		p.Notes = append(p.Notes, fmt.Sprintf("stack depth %d capped at JFR's %d", p.Depth, MaxDepth))
		p.Depth = MaxDepth
	}
	if err := os.WriteFile(p.Settings, []byte(settings(p)), 0o644); err != nil {
		return p, fmt.Errorf("jfr walker: %w", err)
	}
	p.Flags = []string{
		fmt.Sprintf("-XX:FlightRecorderOptions:stackdepth=%d,repository=%s", p.Depth, p.Repository),
		fmt.Sprintf("-XX:StartFlightRecording:name=walkfuzz,settings=%s,filename=%s,dumponexit=true", p.Settings, p.Recording),
	}
	return p, nil
}

// settings is a .jfc with only the walker's events, so the recording holds nothing else
// and the JVM pays for nothing else.
func settings(p Plan) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<configuration version="2.0" label="walkfuzz" description="walkfuzz jfr walker: stack samples only">
`)
	fmt.Fprintf(&b, `  <event name="%s">
    <setting name="enabled">true</setting>
    <setting name="period">%d ms</setting>
  </event>
`, ExecutionSample, p.PeriodMs)
	if p.ThrottleUs > 0 {
		fmt.Fprintf(&b, `  <event name="%s">
    <setting name="enabled">true</setting>
    <setting name="throttle">%dus</setting>
    <setting name="stackTrace">true</setting>
  </event>
  <event name="%s">
    <setting name="enabled">true</setting>
  </event>
`, CPUTimeSample, p.ThrottleUs, CPUTimeSamplesLost)
	}
	b.WriteString("</configuration>\n")
	return b.String()
}

// Files returns the recording to parse: the dump written at exit, or, when the JVM died
// before writing it, the chunks left in the repository.
func (p Plan) Files() []string {
	if _, err := os.Stat(p.Recording); err == nil {
		return []string{p.Recording}
	}
	chunks, _ := filepath.Glob(filepath.Join(p.Repository, "*", "*.jfr"))
	return chunks
}
