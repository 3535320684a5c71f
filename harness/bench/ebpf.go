package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/outproc/ebpfsession"
	"github.com/walkfuzz/walkfuzz/harness/walkclass"
	"github.com/walkfuzz/walkfuzz/walkers/ebpf"
)

// EBPFMeasurement is one sampled run of the callchain workload.
type EBPFMeasurement struct {
	JavaHome string `json:"java_home"`
	FreqHz   int    `json:"freq_hz"`
	Threads  int    `json:"threads"`
	// RequestedPerS is the ticks per second that can land in the JVM: FreqHz on every CPU
	// its busy threads keep busy.
	RequestedPerS float64 `json:"requested_per_s"`
	// JVMCPUs is the CPU time the JVM used per wall second while sampled (on a busy
	// machine it is less than its threads want); ExpectedPerS = FreqHz × JVMCPUs is the
	// rate a perfect sampler would deliver.
	JVMCPUs       float64             `json:"jvm_cpus"`
	ExpectedPerS  float64             `json:"expected_per_s"`
	Stats         ebpf.Stats          `json:"stats"`
	Summary       ebpfsession.Summary `json:"summary"`
	SymbolizedPct float64             `json:"symbolized_pct"` // samples fully symbolized
	OKPct         float64             `json:"ok_pct"`         // samples that reached a thread root
	// RecurseFrames is the mean number of CallChain.recurse JIT frames per sample: the deep
	// frames the walker must see through the perf map.
	RecurseFrames float64 `json:"recurse_frames"`
	// NsPerSample is the program's run time per kept sample, filtered-out ticks included.
	NsPerSample float64 `json:"bpf_ns_per_sample"`
}

// recursionDepth is deep enough that C2's inlining still leaves dozens of frames and
// shallow enough for the default perf_event_max_stack of 127.
const recursionDepth = 60

// measureEBPFRate runs callchain on j with one busy thread per CPU, lets the JIT warm up,
// samples it at freqHz for d and names the samples.
func measureEBPFRate(ctx context.Context, j jdk.JDK, freqHz int, d time.Duration) (EBPFMeasurement, error) {
	return measureEBPF(ctx, j, freqHz, 127, recursionDepth, d)
}

func measureEBPF(ctx context.Context, j jdk.JDK, freqHz, maxDepth, recursion int, d time.Duration) (EBPFMeasurement, error) {
	m := EBPFMeasurement{JavaHome: j.Path, FreqHz: freqHz, Threads: runtime.NumCPU()}
	if err := ebpf.Probe(); err != nil {
		return m, err
	}
	const warmup = 1500 * time.Millisecond
	tg, err := startWorkload(ctx, j, []string{"-XX:+PreserveFramePointer", "-Xmx256m"}, "callchain",
		warmup+d+time.Minute, m.Threads, "depth="+strconv.Itoa(recursion))
	if err != nil {
		return m, err
	}
	defer tg.kill()
	tmp, err := os.MkdirTemp("", "wf-ebpf-bench-")
	if err != nil {
		return m, err
	}
	defer os.RemoveAll(tmp)
	perfMap := filepath.Join(tmp, "perf.map")
	if err := tg.waitWorkers(30 * time.Second); err != nil {
		return m, err
	}
	time.Sleep(warmup)
	cpu0, err := cpuTime(tg.pid())
	if err != nil {
		return m, err
	}
	s, err := ebpf.Start(tg.pid(), freqHz, maxDepth)
	if err != nil {
		return m, err
	}
	time.Sleep(d)
	if m.Stats, err = s.Stop(); err != nil {
		return m, err
	}
	cpu1, err := cpuTime(tg.pid())
	if err != nil {
		return m, err
	}
	m.JVMCPUs = (cpu1 - cpu0).Seconds() / m.Stats.Duration.Seconds()
	m.ExpectedPerS = float64(freqHz) * m.JVMCPUs
	if err := ebpf.DumpPerfMap(tg.pid(), perfMap, 30*time.Second); err != nil {
		return m, err
	}
	sym, err := ebpf.NewSymbolizer(tg.pid(), perfMap)
	if err != nil {
		return m, err
	}
	m.Summary = ebpfsession.Classify(s.Samples(), sym, m.Stats.Depth)
	m.RequestedPerS = float64(freqHz * min(m.Threads, m.Stats.CPUs))
	if n := float64(m.Summary.Samples); n > 0 {
		m.SymbolizedPct = 100 * float64(m.Summary.FullySymbolized) / n
		m.OKPct = 100 * float64(m.Summary.Classes[walkclass.OK]) / n
		for name, c := range m.Summary.Methods {
			if strings.Contains(name, "CallChain.recurse(") {
				m.RecurseFrames += float64(c) / n
			}
		}
	}
	if m.Stats.Delivered > 0 {
		m.NsPerSample = float64(m.Stats.BPFRunTimeNs) / float64(m.Stats.Delivered)
	}
	return m, nil
}

// ebpfMetrics measures the ebpf walker at 10 and 20 kHz for d each. A run that cannot
// happen is one row with value -1, unit "error" and the reason.
func ebpfMetrics(ctx context.Context, j jdk.JDK, d time.Duration) []Metric {
	var out []Metric
	for _, hz := range []int{10000, 20000} {
		tag := fmt.Sprintf("%dkhz", hz/1000)
		m, err := measureEBPFRate(ctx, j, hz, d)
		if err != nil {
			out = append(out, Metric{Name: "ebpf_samples_per_s_" + tag, Value: -1, Unit: "error", Note: err.Error()})
			continue
		}
		note := strings.Join(append(m.Stats.Notes, m.Stats.Limits.Notes...), "; ")
		out = append(out,
			Metric{Name: "ebpf_requested_per_s_" + tag, Value: m.RequestedPerS, Unit: "samples/s",
				Note: fmt.Sprintf("%d Hz x %d busy CPUs", hz, min(m.Threads, m.Stats.CPUs))},
			Metric{Name: "ebpf_expected_per_s_" + tag, Value: m.ExpectedPerS, Unit: "samples/s",
				Note: fmt.Sprintf("%d Hz x %.2f CPUs the JVM got", hz, m.JVMCPUs)},
			Metric{Name: "ebpf_samples_per_s_" + tag, Value: m.Stats.SamplesPerS, Unit: "samples/s", Note: note},
			Metric{Name: "ebpf_ticks_per_s_" + tag, Value: m.Stats.TicksPerS, Unit: "ticks/s",
				Note: "cpu-clock overflows on all CPUs, any process"},
			Metric{Name: "ebpf_dropped_" + tag, Value: float64(m.Stats.Dropped), Unit: "samples"},
			Metric{Name: "ebpf_symbolized_pct_" + tag, Value: m.SymbolizedPct, Unit: "%"},
			Metric{Name: "ebpf_ok_pct_" + tag, Value: m.OKPct, Unit: "%", Note: "samples reaching a thread root"},
			Metric{Name: "ebpf_bpf_ns_per_run_" + tag, Value: m.Stats.BPFNsPerRun, Unit: "ns",
				Note: "BPF_ENABLE_STATS run_time_ns / run_cnt, filtered ticks included"},
			Metric{Name: "ebpf_bpf_ns_per_sample_" + tag, Value: m.NsPerSample, Unit: "ns"},
		)
	}
	return out
}

// cpuTime is the user and system time of all of pid's threads (/proc/<pid>/stat).
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name may hold spaces and parentheses: fields start after the last ')'.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	utime, err1 := strconv.ParseUint(f[11], 10, 64)
	stime, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %q %q", pid, f[11], f[12])
	}
	const userHZ = 100 // USER_HZ, fixed by the kernel ABI on x86
	return time.Duration(utime+stime) * time.Second / userHZ, nil
}
