package jfr

import (
	"fmt"
	"strings"
)

// Signals around JFR's CPU-time sampler (Linux, glibc).
const (
	SIGPROF = 27
	// AltSignal is SIGRTMIN+4 under glibc (SIGRTMIN is 34: glibc keeps 32 and 33). No JDK
	// uses it: HotSpot takes SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGPIPE, SIGXFSZ, SIGUSR2,
	// SIGHUP, SIGINT, SIGTERM, SIGQUIT and, for jdk.CPUTimeSample, SIGPROF; libnet and libnio
	// interrupt blocked I/O with SIGRTMAX-2 (62).
	AltSignal = 38
)

// AgentSignal is the signal the in-process agent's driver must use beside this recording:
// JDK 25's jdk.CPUTimeSample drives per-thread CPU timers with SIGPROF and refuses to run
// ("Conflicting SIGPROF handler found") when someone else handles SIGPROF. Unlike
// SIGPROF, a realtime signal sent with tgkill queues instead of coalescing.
func (p Plan) AgentSignal(sig int) (int, string) {
	if p.ThrottleUs > 0 && sig == SIGPROF {
		return AltSignal, fmt.Sprintf("agent driver moved from SIGPROF to SIGRTMIN+4 (%d): jdk.CPUTimeSample needs SIGPROF for itself", AltSignal)
	}
	return sig, ""
}

// jvmComplaints are what the JVM logs when a planned event cannot run.
var jvmComplaints = []struct{ match, note string }{
	{"Conflicting SIGPROF handler", "JFR refused jdk.CPUTimeSample: another SIGPROF handler is installed"},
	{"Failed to initialize timers for CPU thread sampler", "JFR could not start its CPU-time timers"},
}

// Check explains a recording that lacks what was planned, from its samples per event
// type and the JVM's output (stdout and stderr, where JFR logs its errors).
func (p Plan) Check(samples map[string]uint64, jvmOutput string) []string {
	var notes []string
	for _, c := range jvmComplaints {
		if strings.Contains(jvmOutput, c.match) {
			notes = append(notes, c.note)
		}
	}
	for _, ev := range p.Events {
		if samples[ev] == 0 {
			notes = append(notes, "no "+ev+" samples in the recording")
		}
	}
	return notes
}
