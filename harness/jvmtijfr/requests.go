// Package jvmtijfr turns the jvmti walker's requests into walks on a JDK that offers the JFR
// variant of OpenJDK's proposed JVMTI stack-trace API, where each trace arrives later as a
// jdk.StackTraceRequest event in a flight recording.
package jvmtijfr

import (
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/methods"
	"github.com/walkfuzz/walkfuzz/harness/samplelog"
	"github.com/walkfuzz/walkfuzz/harness/walker"
	"github.com/walkfuzz/walkfuzz/walkers/jfr"
)

// The JFR variant of OpenJDK's proposed JVMTI stack-trace API (walkers/jvmti/jvmti.c): the
// handler's request leaves a placeholder record (jfrRequested) with the request's time,
// thread and sample; the JVM writes the trace as a jdk.StackTraceRequest event whose
// userData packs the same (thread, sample). After the run each placeholder becomes the
// walk the event delivered, or notDelivered.
const (
	jfrRequested      = -4 // WF_JVMTI_JFR_REQUESTED
	notDelivered      = -5 // WF_JVMTI_JFR_NOT_DELIVERED
	jfrFailed         = -1 // the event's failed flag: the jvmti walker's "failed"
	Recording         = "jvmti-requests.jfr"
	requestSettings   = "jvmti-requests.jfc"
	requestRecordName = "walkfuzz-jvmti"
)

type reqKey struct {
	tid    uint32
	sample uint32 // low 32 bits, as userData carries it
}

// Requests gathers the placeholders of one run.
type Requests struct {
	recording string
	pending   map[reqKey]*samplelog.Record
	// wallMinusMono converts JFR's wall-clock event times to the records' CLOCK_MONOTONIC:
	// taken when the run starts (both clocks tick together within a run), never when the
	// recording is read, which may be much later or on another machine.
	wallMinusMono int64
}

// Start: when the episode runs the jvmti walker on a JDK that offers only the JFR variant,
// the flight recording that will carry the traces, its JVM flag, and the requests to gather
// (nil otherwise). wallMinusMono is the wall clock minus CLOCK_MONOTONIC, now.
func Start(e *episode.Episode, j jdk.JDK, dir string, wallMinusMono int64) ([]string, *Requests, error) {
	if !slices.Contains(e.Walkers, walker.JVMTI) || j.StackAPI != jdk.StackAPIJFR {
		return nil, nil, nil
	}
	jfc := filepath.Join(dir, requestSettings)
	if err := os.WriteFile(jfc, []byte(jfr.RequestSettings), 0o644); err != nil {
		return nil, nil, fmt.Errorf("cannot write %s: %v", jfc, err)
	}
	rec := filepath.Join(dir, Recording)
	flag := fmt.Sprintf("-XX:StartFlightRecording:name=%s,settings=%s,filename=%s,dumponexit=true", requestRecordName, jfc, rec)
	return []string{flag}, &Requests{recording: rec, pending: map[reqKey]*samplelog.Record{},
		wallMinusMono: wallMinusMono}, nil
}

// Hold keeps r, a walk of the named walker, when it is a placeholder; the caller skips it then.
func (q *Requests) Hold(name string, r *samplelog.Record) bool {
	if q == nil || name != walker.JVMTI || r.Result != jfrRequested {
		return false
	}
	q.pending[reqKey{r.Tid, uint32(r.Sample)}] = r
	return true
}

// Resolve turns the placeholders into walks, from the recording read with jfrTool, and
// passes each to add. It returns a note for results.json.
func (q *Requests) Resolve(jfrTool string, tab *methods.Table, add func(*samplelog.Record)) string {
	if q == nil || len(q.pending) == 0 {
		return ""
	}
	requested := len(q.pending)
	ids := tab.ByKey()
	wallMinusMono := q.wallMinusMono
	var delivered, unmatched, biased int
	err := jfr.ReadRequests(jfrTool, q.recording, func(ev *jfr.Request) error {
		k := reqKey{uint32(ev.UserData >> 32), uint32(ev.UserData)}
		ph, ok := q.pending[k]
		if !ok {
			unmatched++
			return nil
		}
		delete(q.pending, k)
		delivered++
		r := *ph
		r.Result = jfrFailed
		r.Frames = nil
		if !ev.Failed {
			r.Frames = requestFrames(ev.Frames, ids, tab)
			r.Result = int32(len(r.Frames))
		}
		if ev.Biased {
			biased++
			r.Flags |= samplelog.FlagBiased
		}
		if !ev.Start.IsZero() {
			if d := ev.Start.UnixNano() - wallMinusMono - int64(ph.TsNs); d > 0 {
				r.WalkNs = uint32(min(d, int64(^uint32(0))))
			}
		}
		// The trace was taken later, at a safepoint: the region at the request says
		// nothing about it, so the known-stack oracle does not judge it.
		r.Region = 0
		add(&r)
		return nil
	})
	for _, ph := range q.pending {
		r := *ph
		r.Result = notDelivered
		add(&r)
	}
	note := fmt.Sprintf("jvmti (JFR variant): %d requests, %d delivered as %s events (%d biased), %d not delivered",
		requested, delivered, jfr.StackTraceRequest, biased, len(q.pending))
	if unmatched > 0 {
		note += fmt.Sprintf(", %d events matched no request", unmatched)
	}
	if err != nil {
		note += "; " + strings.ReplaceAll(err.Error(), "\n", " ")
	}
	clear(q.pending)
	return note
}

// requestFrames names JFR's frames with the run's jmethodIDs; a method the table does not
// know gets a stable synthetic id (top bit set) and joins the table so it can be rendered.
func requestFrames(fs []jfr.Frame, ids map[string]uint64, tab *methods.Table) []samplelog.Frame {
	out := make([]samplelog.Frame, 0, len(fs))
	for _, f := range fs {
		internal := f.Class // JFR names classes in internal form, as the method table keys them
		m := methods.Method{Internal: internal, Class: strings.ReplaceAll(internal, "/", "."), Name: f.Name, Sig: f.Descriptor, MaxBci: -1}
		id, ok := ids[m.Key()]
		if !ok {
			h := fnv.New64a()
			h.Write([]byte(m.Key()))
			id = h.Sum64() | 1<<63
			m.ID = id
			tab.Add(m)
			ids[m.Key()] = id
		}
		fr := samplelog.Frame{Method: id, Bci: int32(f.Bci)}
		switch f.Type {
		case "Interpreted":
			fr.Type = samplelog.FrameInterpreted
		case "JIT compiled":
			fr.Type = samplelog.FrameCompiled
		case "Inlined":
			fr.Type = samplelog.FrameInlined
		case "Native":
			fr.Type, fr.Bci = samplelog.FrameNative, -3
		default:
			fr.Type = samplelog.FrameJava
		}
		out = append(out, fr)
	}
	return out
}
