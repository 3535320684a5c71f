// Package runner runs one episode: a real JVM with the agent, the sample log read live and
// after exit, the run's outcome decided, and results.json written.
package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/walkfuzz/walkfuzz/harness/artifacts"
	"github.com/walkfuzz/walkfuzz/harness/collect"
	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/finding"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/probe"
	"github.com/walkfuzz/walkfuzz/harness/results"
	"github.com/walkfuzz/walkfuzz/harness/samplelog"
)

// Options tune the harness, not the episode.
type Options struct {
	Dir         string        // run directory
	HangTimeout time.Duration // heartbeat silence that counts as a hang
	RingBytes   uint64        // sample-log ring size
	Progress    func(walks uint64, elapsed time.Duration)
	OnStart     func() // called once the JVM is running (after every input check passed)
	// Jars of the external suites (DaCapo, Renaissance); empty: their environment variables.
	DacapoJar, RenaissanceJar string
	// DoctorStacks, when set, rewrites the recorded known stacks before walks are compared
	// with them: tests use it to prove the oracle reports a wrong stack.
	DoctorStacks collect.Doctor
}

// Run executes the episode on the JDK and returns its results. An error is returned only
// for harness problems (bad input, unwritable directory, missing build); a JVM that crashes
// or hangs is a result with that outcome.
func Run(ctx context.Context, e episode.Episode, j jdk.JDK, opt Options) (*results.Results, error) {
	if err := e.Validate(); err != nil {
		return nil, usage("%v", err)
	}
	art, err := artifacts.Locate()
	if err != nil {
		return nil, usage("%v", err)
	}
	if err := probe.Unsupported(j, e.Walkers, e.JVMFlags); err != nil {
		return nil, usage("%v: pick another JDK with --jdk", err)
	}
	if opt.HangTimeout == 0 {
		opt.HangTimeout = 10 * time.Second
	}
	if opt.RingBytes == 0 {
		// Deep stacks under two walkers write ~100 MB/s: room for a second of them.
		opt.RingBytes = 256 << 20
	}
	dir, err := filepath.Abs(opt.Dir)
	if err != nil {
		return nil, usage("bad run directory %s: %v", opt.Dir, err)
	}
	if strings.ContainsAny(dir, "\n=") {
		return nil, usage("run directory %q holds a newline or '=': choose another with --out", dir)
	}
	created, err := prepareDir(dir)
	if err != nil {
		return nil, usage("%v", err)
	}
	col := collect.New(dir, &e, collect.Files{Methods: filepath.Join(dir, MethodTable), Codes: filepath.Join(dir, CodesFile),
		Roots: filepath.Join(dir, RootsFile), KnownStacks: filepath.Join(dir, KnownStacks)}, opt.DoctorStacks)
	var out outside
	extra, err := out.prepare(&e, j, dir, col)
	if err != nil {
		if created {
			os.RemoveAll(dir)
		}
		return nil, usage("%v", err)
	}
	args, err := javaArgs(dir, &e, art, opt, extra)
	if err != nil {
		if created {
			os.RemoveAll(dir)
		}
		return nil, usage("%v", err)
	}
	if err := setupFiles(dir, &e, opt.RingBytes); err != nil {
		if created {
			os.RemoveAll(dir)
		}
		return nil, Usagef("cannot prepare run directory %s: %w", dir, err)
	}
	res, err := execute(ctx, dir, e, j, args, opt, &out, col)
	var ue *UsageError
	if created && errors.As(err, &ue) {
		os.RemoveAll(dir) // refused (e.g. by the agent): nothing half-written stays behind
	}
	return res, err
}

func setupFiles(dir string, e *episode.Episode, ring uint64) error {
	if err := samplelog.Create(filepath.Join(dir, SampleLog), ring, 32768); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, AgentConf), []byte(agentConfig(dir, e)), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, EpisodeFile), e.JSON(), 0o644)
}

type process struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

func start(dir string, j jdk.JDK, args []string) (*process, error) {
	out, err := os.Create(filepath.Join(dir, Stdout))
	if err != nil {
		return nil, err
	}
	errf, err := os.Create(filepath.Join(dir, Stderr))
	if err != nil {
		out.Close()
		return nil, err
	}
	cmd := exec.Command(j.Java(), args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = out, errf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	p := &process{cmd: cmd, done: make(chan struct{})}
	started := make(chan error, 1)
	// The kernel sends Pdeathsig when the thread that forked the child ends, not the
	// process (go.dev/issue/27505). Go ends an OS thread when a goroutine locked to it
	// returns, and the drain and classifier goroutines of every run do (lowerPriority):
	// one that had locked the thread an earlier JVM was forked from killed that JVM when
	// its own run ended, a healthy run reported as "jvm-error, exit status -1" (1 of 45 runs
	// of a 4-minute demo campaign with 2 parallel JVMs). So the JVM is forked from a
	// goroutine locked to its thread until the JVM has been reaped: no other goroutine can
	// run there, nor lock and end it.
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			out.Close()
			errf.Close()
			started <- err
			return
		}
		started <- nil
		p.err = cmd.Wait()
		out.Close()
		errf.Close()
		jdk.RemovePidFiles(cmd.Process.Pid)
		close(p.done)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return p, nil
}

func (p *process) kill() {
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func execute(ctx context.Context, dir string, e episode.Episode, j jdk.JDK, args []string, opt Options, out *outside, col *collect.Collector) (*results.Results, error) {
	res := &results.Results{
		Seed:      e.Seed,
		Walkers:   e.Walkers,
		Workload:  e.Workload,
		DurationS: e.Duration().Seconds(),
		JDK:       results.JDK{Version: j.Version, Path: j.Path, Vendor: j.Vendor},
		RunDir:    dir,
		Episode:   e,
	}
	if res.Workload == "" {
		res.Workload = "custom"
	}
	began := time.Now()
	proc, err := start(dir, j, args)
	if err != nil {
		return nil, usage("cannot start %s: %v: check --jdk", j.Java(), err)
	}
	defer proc.kill() // the whole process group, whatever happens below
	if opt.OnStart != nil {
		opt.OnStart()
	}

	log, err := samplelog.Open(filepath.Join(dir, SampleLog))
	if err != nil {
		return nil, fmt.Errorf("sample log: %w", err)
	}
	defer log.Close()
	// Deep walks' frames go back to the reader once judged (samplelog/recycle.go): the
	// collector, the differential and the reference oracle take and give back references.
	log.RecycleFrames()
	col.Start(log)
	defer col.Halt()

	// Generous: JVM start-up (-Xcomp is slow), the workload's own stop, and exit.
	deadline := began.Add(e.Duration() + 30*time.Second + e.Duration()/2)
	// A JVM past the deadline that keeps working is watched until this, then ended as an
	// overload (judgeOverrun).
	hardDeadline := deadline.Add(2 * (e.Duration() + 30*time.Second))
	var overBase progress
	lastBeat, lastBeatAt := uint64(0), time.Now()
	var sampling time.Time
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	hangReason, overload := "", ""
	var atBeat handlerLoad
	var termSent time.Time
	crashWatch := finding.NewCrashWatch(dir)
	var reportSize int64
	var reportGrew time.Time
	pcNamed := false
loop:
	for {
		select {
		case <-proc.done:
			break loop
		case <-ctx.Done():
			proc.kill()
			<-proc.done
			return nil, ctx.Err()
		case <-tick.C:
		}
		col.Read(log, false)
		h := log.Header()
		out.tick(proc.cmd.Process.Pid, sampling, &e, j, false)
		if h.AgentState == samplelog.StateSampling && sampling.IsZero() {
			sampling = time.Now()
			res.StartupMs = sampling.Sub(began).Milliseconds()
			// The heartbeat is judged from here: a slow start-up (-Xcomp with JFR took
			// 10 s here) is not a silent agent.
			lastBeatAt = sampling
		}
		if opt.Progress != nil {
			opt.Progress(h.Walked, time.Since(began))
		}
		if h.HeartbeatCount != lastBeat {
			lastBeat, lastBeatAt = h.HeartbeatCount, time.Now()
			atBeat = takeHandlerLoad(log, proc.cmd.Process.Pid)
		}
		if crashWatch.Begun() {
			// The JVM is reporting a crash: judged when it exits. A crash inside the handler
			// leaves the thread's handler entry open while the report is written, and on a
			// loaded machine that took longer than stuckWalk: a crash reported as a hang of the
			// walker (TestReproExitCodes under make test's load).
			now := time.Now()
			if !pcNamed {
				pcNamed = namePC(dir, proc)
			}
			if n := crashWatch.Written(); n != reportSize || reportGrew.IsZero() {
				reportSize, reportGrew = n, now
			}
			if now.Sub(reportGrew) > reportStall || now.After(hardDeadline) {
				res.Notes = append(res.Notes, stalledReport(dir, proc, now.Sub(reportGrew)))
				proc.kill()
				break
			}
			continue
		}
		if !sampling.IsZero() && h.AgentState == samplelog.StateSampling && time.Since(lastBeatAt) > opt.HangTimeout {
			// Silence is a hang unless the handlers themselves were the load: see judgeSilence.
			if note := judgeSilence(atBeat, takeHandlerLoad(log, proc.cmd.Process.Pid), opt.HangTimeout); note.overload != "" {
				overload = note.overload
				proc.kill()
			} else {
				hangReason = note.hang
			}
			break
		}
		if e.StopAfterDuration && termSent.IsZero() && !sampling.IsZero() && time.Since(sampling) > e.Duration() {
			syscall.Kill(proc.cmd.Process.Pid, syscall.SIGTERM)
			termSent = time.Now()
			res.Notes = append(res.Notes, fmt.Sprintf("stopped with SIGTERM after its %s time limit", e.Duration()))
		}
		if !termSent.IsZero() && time.Since(termSent) > 15*time.Second {
			hangReason = "JVM did not exit within 15s of SIGTERM at its time limit"
			break
		}
		if time.Now().After(deadline) && termSent.IsZero() {
			// Past the deadline: watch the JVM's progress before calling it a hang.
			pid := proc.cmd.Process.Pid
			now := progress{load: takeHandlerLoad(log, pid), cpuNs: processCPU(pid), exiting: taskState(pid, uint32(pid)) == 'Z'}
			if overBase.load.at.IsZero() {
				overBase = now
				continue
			}
			if now.load.at.Sub(overBase.load.at) < overrunWindow {
				continue
			}
			late := time.Since(deadline)
			v := judgeOverrun(overBase, now, late, time.Now().After(hardDeadline))
			switch {
			case v.hang != "":
				hangReason = v.hang
			case v.overload != "":
				overload = v.overload
				proc.kill()
			default:
				overBase = now
				continue
			}
			break
		}
	}
	if hangReason != "" {
		res.NoteUnwritten(collectHang(dir, proc))
	}
	<-proc.done
	out.tick(proc.cmd.Process.Pid, sampling, &e, j, true)
	res.WallMs = time.Since(began).Milliseconds()
	col.Read(log, true)
	if err := log.Err(); err != nil { // the mapping faulted: what was read is not the run
		return nil, Usagef("%w", err)
	}
	h := log.Header()
	decideOutcome(res, dir, proc, h, hangReason, !termSent.IsZero(), overload != "")
	if overload != "" && res.Outcome == results.OK {
		res.Overload = overload
		res.Notes = append(res.Notes, "overload: "+overload)
	}
	if res.Outcome == results.HarnessError {
		return nil, usage("%s", res.Reason)
	}
	if note := col.Resolve(j.Tool("jfr")); note != "" {
		res.Notes = append(res.Notes, note)
	}
	col.Finish(res, log)
	jvmOut, _ := os.ReadFile(filepath.Join(dir, Stderr))
	stdout, _ := os.ReadFile(filepath.Join(dir, Stdout))
	out.finish(res, dir, j, string(jvmOut)+string(stdout))
	readWorkloadOutput(res, dir)
	if err := res.Write(dir); err != nil {
		return nil, Usagef("cannot write results.json in %s: %w", dir, err)
	}
	return res, nil
}

// collectHang asks the JVM for a thread dump, keeps it and a /proc task snapshot, then
// kills the process group.
// The error is a dump or snapshot that could not be written; the process is killed anyway.
func collectHang(dir string, p *process) error {
	pid := p.cmd.Process.Pid
	before, _ := os.ReadFile(filepath.Join(dir, Stdout))
	syscall.Kill(pid, syscall.SIGQUIT)
	select {
	case <-p.done:
	case <-time.After(3 * time.Second):
	}
	var errs []error
	if snap, err := finding.TakeSnapshot(pid); err == nil {
		errs = append(errs, os.WriteFile(filepath.Join(dir, finding.TaskSnap), []byte(snap), 0o644))
	}
	p.kill()
	<-p.done
	after, _ := os.ReadFile(filepath.Join(dir, Stdout))
	if len(after) > len(before) {
		errs = append(errs, os.WriteFile(filepath.Join(dir, finding.ThreadDump), after[len(before):], 0o644))
	} else {
		errs = append(errs, os.WriteFile(filepath.Join(dir, finding.ThreadDump), nil, 0o644))
	}
	return errors.Join(errs...)
}

// reportStall: a crash report that has not grown for this long is stuck. HotSpot gives a step
// of its report ErrorLogTimeout/4 (30 s by default) before it moves on; a fault in a signal
// handler that interrupted malloc deadlocks the report's first malloc, in every step.
var reportStall = 40 * time.Second

// stalledReport keeps what a stuck crash report leaves to title it by, before the process is
// killed: the faulting pc named from the live mappings (the short report on stdout may end
// before its problematic frame) and a /proc snapshot of the threads (tasks.txt, which shows
// where the reporter is stuck). It returns the note for results.json.
func stalledReport(dir string, p *process, quiet time.Duration) string {
	pid := p.cmd.Process.Pid
	stuck := ""
	if snap, err := finding.TakeSnapshot(pid); err == nil {
		os.WriteFile(filepath.Join(dir, finding.TaskSnap), []byte(snap), 0o644)
		if h := finding.Hang(dir); h.Title != "" {
			stuck = " (" + h.Title + ")"
		}
	}
	if _, err := os.Stat(filepath.Join(dir, finding.PCFrame)); err != nil {
		namePC(dir, p)
	}
	return fmt.Sprintf("HotSpot's crash report stalled: nothing written for %s%s; killed", quiet.Round(time.Second), stuck)
}

// namePC names the faulting pc of a crash being reported, from the live process's mappings
// and ELF symbols, into finding.PCFrame, once the short report on stdout has printed the pc;
// false until then. HotSpot names the pc itself with malloc, and a fault in a handler that
// interrupted malloc leaves its hs_err frame as "lib+0x.." after a 30 s step timeout: one
// bug, two titles, unless the harness names it (TestReproOnTwoJDKs under make test's load).
func namePC(dir string, p *process) bool {
	pc := finding.ScreenPC(dir)
	if pc == 0 {
		return false
	}
	if f := finding.CodeFrame(p.cmd.Process.Pid, pc); f != "" {
		os.WriteFile(filepath.Join(dir, finding.PCFrame), []byte(f+"\n"), 0o644)
	}
	return true
}

var errNoExit = errors.New("no exit status")

func exitStatus(p *process) (code int, sig syscall.Signal, err error) {
	if p.cmd.ProcessState == nil {
		return -1, 0, errNoExit
	}
	ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok {
		return p.cmd.ProcessState.ExitCode(), 0, nil
	}
	if ws.Signaled() {
		return -1, ws.Signal(), nil
	}
	return ws.ExitStatus(), 0, nil
}
