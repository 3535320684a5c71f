package runner

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	psprocess "github.com/shirou/gopsutil/v4/process"

	"github.com/walkfuzz/walkfuzz/harness/collect"
	"github.com/walkfuzz/walkfuzz/harness/finding"
	"github.com/walkfuzz/walkfuzz/harness/results"
	"github.com/walkfuzz/walkfuzz/harness/samplelog"
)

// decideOutcome: hang (we stopped it), crash (hs_err or death by signal), jvm-error
// (non-zero exit), harness-error (the agent refused its configuration), else ok.
// killed: we sent SIGKILL because of an overload (judgeSilence), which is no finding.
func decideOutcome(res *results.Results, dir string, p *process, h samplelog.Header, hangReason string, terminated, killed bool) {
	code, sig, _ := exitStatus(p)
	if terminated && (sig == syscall.SIGTERM || code == 143) {
		code, sig = 0, 0 // our own SIGTERM at the time limit: a normal end
	}
	if killed && sig == syscall.SIGKILL {
		code, sig = 0, 0
	}
	res.ExitCode = code
	if sig != 0 {
		res.ExitSignal = sig.String()
	}
	switch crashed := finding.Crash(dir); {
	case hangReason != "":
		res.Outcome = results.Hang
		res.Reason = hangReason
		res.Hang = finding.Hang(dir)
	case crashed != nil:
		res.Outcome = results.Crash
		res.Crash = crashed
		res.Reason = "hs_err log written"
		if crashed.Log == Stdout || crashed.Log == Stderr {
			res.Reason = "crash report in " + crashed.Log + " only: no hs_err log"
		}
	case sig != 0 && sig.String() != "killed":
		res.Outcome = results.Crash
		res.Crash = finding.Killed(sig.String())
		res.Reason = res.Crash.Title
	case h.AgentState == samplelog.StateFailed || h.AgentState == samplelog.StateCreated:
		res.Outcome = results.HarnessError
		res.Reason = agentFailure(dir, h)
	case code != 0:
		res.Outcome = results.JVMError
		res.Reason = fmt.Sprintf("JVM exited with status %d: see %s", code, Stderr)
	default:
		res.Outcome = results.OK
	}
}

func agentFailure(dir string, h samplelog.Header) string {
	if h.Error != "" {
		return "agent: " + h.Error
	}
	stderr, _ := os.ReadFile(filepath.Join(dir, Stderr))
	for _, l := range strings.Split(string(stderr), "\n") {
		if strings.Contains(l, "walkfuzz agent:") || strings.HasPrefix(l, "Error") || strings.Contains(l, "Unrecognized") {
			return strings.TrimSpace(l) + " (JVM stderr in " + filepath.Join(dir, Stderr) + ")"
		}
	}
	return "the JVM never loaded the agent: see " + filepath.Join(dir, Stderr)
}

var throughputRe = regexp.MustCompile(`^walkfuzz-throughput: (\d+) ops in (\d+) ms`)
var checkRe = regexp.MustCompile(`^walkfuzz-check: (\S+) (pass|fail)\s*(.*)$`)

func readWorkloadOutput(res *results.Results, dir string) {
	b, err := os.ReadFile(filepath.Join(dir, Stdout))
	if err != nil {
		return
	}
	var w results.Workload
	found := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := throughputRe.FindStringSubmatch(line); m != nil {
			w.Ops, _ = strconv.ParseUint(m[1], 10, 64)
			w.Ms, _ = strconv.ParseUint(m[2], 10, 64)
			if w.Ms > 0 {
				w.OpsPerS = float64(w.Ops) * 1000 / float64(w.Ms)
			}
			found = true
		} else if m := checkRe.FindStringSubmatch(line); m != nil {
			w.Checks = append(w.Checks, results.Check{Name: m[1], Pass: m[2] == "pass", Detail: m[3]})
			found = true
		}
	}
	if found {
		res.WorkloadOut = &w
	}
}

// crashing: the JVM has begun an hs_err log in the run directory (-XX:ErrorFile).

// handlerLoad is what the thread table says about the handlers at one moment.
type handlerLoad struct {
	at        time.Time
	mono      uint64 // CLOCK_MONOTONIC at the same moment, to age handler_since
	delivered uint64 // signals that reached the handler, all threads
	handlerNs uint64 // wall time spent in the handler, all threads
	stuckTid  uint32 // a thread whose current handler entry is the oldest ...
	stuckNs   uint64 // ... and how long ago it entered
}

// takeHandlerLoad reads the thread table of the JVM pid (0: no process to ask). A thread
// whose task is gone or dead is not in a walk, whatever its slot says: a process that exits
// (System.exit, halt) ends its threads where they are, a handler included, and nothing
// clears handler_since then (seen as a false "walk has not returned" on a JVM whose exit was
// slowed by I/O on a loaded machine).
func takeHandlerLoad(log *samplelog.Log, pid int) handlerLoad {
	l := handlerLoad{at: time.Now(), mono: collect.MonoNow()}
	for _, t := range log.Threads() {
		l.delivered += t.Delivered
		l.handlerNs += t.HandlerNs
		if t.Alive && t.HandlerSince != 0 && l.mono > t.HandlerSince && l.mono-t.HandlerSince > l.stuckNs {
			if pid > 0 && !taskLive(pid, t.Tid) {
				continue
			}
			l.stuckTid, l.stuckNs = t.Tid, l.mono-t.HandlerSince
		}
	}
	return l
}

// taskState is the state letter of thread tid of process pid (R, S, D, Z, ...), 0 when the
// task is gone or its stat unreadable.
func taskState(pid int, tid uint32) byte {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/stat", pid, tid))
	if err != nil {
		return 0
	}
	// "tid (comm) S ...": comm may hold spaces and parentheses; the state follows the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return 0
	}
	return b[i+2]
}

// taskLive: the task exists and is neither a zombie nor dead.
func taskLive(pid int, tid uint32) bool {
	switch taskState(pid, tid) {
	case 0, 'Z', 'X', 'x':
		return false
	}
	return true
}

// silence is judgeSilence's verdict: exactly one of hang (a finding) and overload (a note).
type silence struct{ hang, overload string }

// overloadShare: handlers that used this share of all CPUs' time while the heartbeat was
// silent were the load that stalled the JVM. The agent's own budget (handler.c) allows at
// most half of it, so reaching a quarter takes a sustained flood of signals.
const overloadShare = 0.25

// stuckWalk: a handler entered this long ago and not left is a walk that does not return.
const stuckWalk = 2 * time.Second

// judgeSilence decides what a silent heartbeat means, from the handlers' load when the
// heartbeat last ticked (before) and now. A walk that does not return is a hang of the
// walker; a JVM stalled while no handler runs is a hang too (something the walker did, or
// the JVM itself); a JVM stalled while the handlers, every walk returning, took a large
// share of the CPUs is walkfuzz's overload, not a finding.
func judgeSilence(before, now handlerLoad, timeout time.Duration) silence {
	if now.stuckNs > uint64(stuckWalk) {
		return silence{hang: fmt.Sprintf("agent heartbeat silent for %s; a walk on thread %d has not returned for %s",
			timeout, now.stuckTid, time.Duration(now.stuckNs).Round(time.Millisecond))}
	}
	wall := now.at.Sub(before.at)
	if wall > 0 && now.handlerNs > before.handlerNs {
		share := float64(now.handlerNs-before.handlerNs) / (float64(wall) * float64(runtime.NumCPU()))
		if share >= overloadShare {
			return silence{overload: fmt.Sprintf("JVM stalled %s while signal handlers took %.0f%% of %d CPUs (%d signals) and every walk returned: too many signals for this machine, not a walker hang",
				wall.Round(time.Second), 100*share, runtime.NumCPU(), now.delivered-before.delivered)}
		}
	}
	return silence{hang: fmt.Sprintf("agent heartbeat silent for %s", timeout)}
}

// progress is what the runner samples of a JVM that runs past its deadline.
type progress struct {
	load  handlerLoad
	cpuNs uint64 // the process's CPU time, every thread (JIT and GC included)
	// exiting: the JVM's main task is a zombie while other tasks remain: the process is in
	// exit (every thread is being torn down), no Java code or walk runs any more.
	exiting bool
}

// overrunWindow is how long a JVM past its deadline is watched before it is judged.
const overrunWindow = 10 * time.Second

// overrunProgress: the CPU share of one core the JVM must use to count as working (its own
// code, or walkfuzz's handler taking the signals) rather than stuck.
const overrunProgress = 0.10

// overrun is judgeOverrun's verdict: at most one of hang (a finding) and overload (a note);
// neither means keep watching.
type overrun struct{ hang, overload string }

// judgeOverrun decides what a JVM still running past its deadline means, from two samples
// overrunWindow apart. The deadline alone proves nothing: -Xcomp start-up and 2048-frame
// walks under a 20 us signal rate on a loaded two-core machine ran 35 s past it while every
// thread kept working (four false "hang: unclassified" findings in 300 campaign episodes).
// A walk that does not return is a hang of the walker; a JVM that stopped using the CPU is
// stuck (a deadlock: a hang); a JVM still using it, in its own code or in the handler with
// every walk returning, is watched again until capped, then ended as an overload note.
// Handler time is wall time (it includes preemption), so it only describes, never decides.
func judgeOverrun(before, now progress, late time.Duration, capped bool) overrun {
	if now.exiting {
		// Its threads are gone or going: nothing of a walker's can be running. A slow exit
		// (the kernel writing dirty pages back) is the machine's, watched until capped.
		if capped {
			return overrun{overload: fmt.Sprintf("JVM still exiting %s after its workload should have stopped (its threads were ending, no walk running): a slow exit on this machine, not a hang",
				late.Round(time.Second))}
		}
		return overrun{}
	}
	if now.load.stuckNs > uint64(stuckWalk) {
		return overrun{hang: fmt.Sprintf("JVM still running %s after its workload should have stopped; a walk on thread %d has not returned for %s",
			late.Round(time.Second), now.load.stuckTid, time.Duration(now.load.stuckNs).Round(time.Millisecond))}
	}
	wall := now.load.at.Sub(before.load.at)
	var busy, handler float64
	if wall > 0 {
		if now.cpuNs > before.cpuNs {
			busy = float64(now.cpuNs-before.cpuNs) / float64(wall)
		}
		if now.load.handlerNs > before.load.handlerNs {
			handler = float64(now.load.handlerNs-before.load.handlerNs) / float64(wall)
		}
	}
	switch {
	case busy < overrunProgress:
		return overrun{hang: fmt.Sprintf("JVM still running %s after its workload should have stopped, idle (%.0f%% of a CPU)",
			late.Round(time.Second), 100*busy)}
	case capped:
		return overrun{overload: fmt.Sprintf("JVM still running %s after its workload should have stopped, but working (%.0f%% of a CPU; threads in walkfuzz's handler %.0f%% of the time, every walk returned): too slow on this machine under this signal rate, not a hang",
			late.Round(time.Second), 100*busy, 100*handler)}
	}
	return overrun{}
}

// processCPU is the process's CPU time (user and system, every thread) in ns; 0 when it
// cannot be read.
func processCPU(pid int) uint64 {
	p, err := psprocess.NewProcess(int32(pid))
	if err != nil {
		return 0
	}
	t, err := p.Times()
	if err != nil {
		return 0
	}
	return uint64((t.User + t.System) * 1e9)
}
