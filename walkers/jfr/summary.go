package jfr

import (
	"fmt"
	"regexp"
	"strconv"
	"time"
)

// Summary is a recording's samples, classified, per event type.
type Summary struct {
	Events map[string]*EventStats `json:"events"` // jdk.ExecutionSample, jdk.CPUTimeSample
	// Lost is the sum of jdk.CPUTimeSamplesLost's lostSamples: CPU-time samples JFR
	// dropped (its queue was full), so never walked.
	Lost       uint64 `json:"lost_samples"`
	LostEvents uint64 `json:"lost_events"`
	Other      uint64 `json:"other_events,omitempty"` // event types the walker does not read
}

// EventStats are the samples of one event type.
type EventStats struct {
	Samples uint64            `json:"samples"`
	Classes map[string]uint64 `json:"classes"`
	Biased  uint64            `json:"biased"` // JDK 25: the stack was taken at a later safepoint
	Failed  uint64            `json:"failed"` // JDK 25: also counted as error:failed
	// Threads are the classes per sampled thread, by name ("tid N" when unnamed).
	Threads   map[string]map[string]uint64 `json:"threads"`
	MaxFrames int                          `json:"max_frames"`
	First     time.Time                    `json:"first"`
	Last      time.Time                    `json:"last"`
	// PerS is samples per wall second between the first and the last sample;
	// PerThreadPerS the same divided by the threads sampled.
	PerS          float64 `json:"per_s"`
	PerThreadPerS float64 `json:"per_thread_per_s"`
	// MeanPeriodMs is jdk.CPUTimeSample's mean samplingPeriod: the thread CPU time between
	// one thread's samples (the achieved rate is its inverse; requested is the throttle).
	MeanPeriodMs float64 `json:"mean_period_ms,omitempty"`

	periodSum time.Duration
	periodN   uint64
}

func newSummary() *Summary { return &Summary{Events: map[string]*EventStats{}} }

func (s *Summary) count() uint64 {
	n := s.LostEvents + s.Other
	for _, e := range s.Events {
		n += e.Samples
	}
	return n
}

func (s *Summary) add(ev *event, roots Roots) {
	v := &ev.Values
	switch ev.Type {
	case CPUTimeSamplesLost:
		s.LostEvents++
		s.Lost += v.LostSamples
		return
	case ExecutionSample, CPUTimeSample:
	default:
		s.Other++
		return
	}
	es := s.Events[ev.Type]
	if es == nil {
		es = &EventStats{Classes: map[string]uint64{}, Threads: map[string]map[string]uint64{}}
		s.Events[ev.Type] = es
	}
	es.Samples++
	class := classifyStack(v.StackTrace, roots)
	if v.Failed {
		es.Failed++
		class = ClassFailed
	}
	if v.Biased {
		es.Biased++
	}
	es.Classes[class]++
	name := threadName(v.SampledThread, v.EventThread)
	if es.Threads[name] == nil {
		es.Threads[name] = map[string]uint64{}
	}
	es.Threads[name][class]++
	if v.StackTrace != nil {
		es.MaxFrames = max(es.MaxFrames, len(v.StackTrace.Frames))
	}
	if t, err := time.Parse(time.RFC3339Nano, v.StartTime); err == nil {
		if es.First.IsZero() || t.Before(es.First) {
			es.First = t
		}
		if t.After(es.Last) {
			es.Last = t
		}
	}
	if d, ok := parseISODuration(v.SamplingPeriod); ok {
		es.periodSum += d
		es.periodN++
	}
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

func (s *Summary) finish() {
	for _, es := range s.Events {
		if span := es.Last.Sub(es.First).Seconds(); span > 0 {
			es.PerS = float64(es.Samples) / span
			es.PerThreadPerS = es.PerS / float64(len(es.Threads))
		}
		if es.periodN > 0 {
			es.MeanPeriodMs = float64(es.periodSum) / float64(es.periodN) / 1e6
		}
	}
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
