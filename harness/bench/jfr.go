package bench

import (
	"context"
	"fmt"
	"github.com/walkfuzz/walkfuzz/harness/outproc/jfrsession"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/outproc"
	"github.com/walkfuzz/walkfuzz/walkers/jfr"
)

// depthsRoot is the bottom frame of the depths workload's threads (a Thread subclass's
// run, which JFR cannot recognise by itself).
const depthsRoot = "walkfuzz/workloads/WfThread.run()V"

// runDepths records the depths workload on j: one busy thread per entry of depths, each
// spinning with exactly that many Java frames, for d, with the recording jfr.Options plans
// for the interval and stack depth. The plan's files go to dir. Thread i is named
// wf-depths-i.
func runDepths(ctx context.Context, j jdk.JDK, intervalUs, depth int, dir string, d time.Duration, depths ...int) (jfr.Plan, error) {
	plan, err := jfr.Options(jfr.Target{JDKMajor: j.Major, Dir: dir, IntervalUs: intervalUs, Depth: depth})
	if err != nil {
		return plan, err
	}
	list := make([]string, len(depths))
	for i, n := range depths {
		list[i] = strconv.Itoa(n)
	}
	flags := append(append([]string{}, plan.Flags...), "-Xlog:jfr=warning")
	return plan, runWorkload(ctx, j, flags, "depths", d, len(depths), "depths="+strings.Join(list, ","))
}

// JFRRate compares what one event type delivered with what was asked.
type JFRRate struct {
	Samples uint64  `json:"samples"`
	PerS    float64 `json:"per_s"`
	// Per sampled thread: per wall second for jdk.ExecutionSample, per CPU second (from
	// the mean samplingPeriod) for jdk.CPUTimeSample.
	RequestedPerThreadHz float64 `json:"requested_per_thread_hz"`
	AchievedPerThreadHz  float64 `json:"achieved_per_thread_hz"`
}

// JFRRates is one measured recording.
type JFRRates struct {
	JDKMajor int                 `json:"jdk_major"`
	Threads  int                 `json:"threads"`
	Plan     jfr.Plan            `json:"plan"`
	Summary  *jfrsession.Summary `json:"summary"`
	Events   map[string]JFRRate  `json:"events"`
}

// measureJFRRates records depths (one busy thread per CPU, 32 frames deep) on j for d at
// intervalUs, and compares the achieved sampling rates with the requested ones.
func measureJFRRates(ctx context.Context, j jdk.JDK, intervalUs int, d time.Duration) (JFRRates, error) {
	r := JFRRates{JDKMajor: j.Major, Threads: runtime.NumCPU(), Events: map[string]JFRRate{}}
	dir, err := os.MkdirTemp("", "walkfuzz-jfr")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(dir)
	depths := make([]int, r.Threads)
	for i := range depths {
		depths[i] = 32
	}
	if r.Plan, err = runDepths(ctx, j, intervalUs, jfr.DefaultDepth, dir, d, depths...); err != nil {
		return r, err
	}
	if r.Summary, err = jfrsession.Parse(j.Tool("jfr"), r.Plan.Recording, outproc.RootKeys(depthsRoot)); err != nil {
		return r, err
	}
	for _, ev := range r.Plan.Events {
		rate := JFRRate{RequestedPerThreadHz: r.Plan.RequestedPerThreadHz(ev)}
		if es := r.Summary.Events[ev]; es != nil {
			rate.Samples, rate.PerS, rate.AchievedPerThreadHz = es.Samples, es.PerS, es.PerThreadPerS
			if ev == jfr.CPUTimeSample && es.MeanPeriodMs > 0 {
				rate.AchievedPerThreadHz = 1000 / es.MeanPeriodMs
			}
		}
		r.Events[ev] = rate
	}
	return r, nil
}

// jfrMetrics measures each JDK at the 100 µs interval for d: per event type the
// requested and achieved per-thread rates, samples per second, and lost samples. A JDK
// that cannot be measured is one row with value -1, unit "error" and the reason.
func jfrMetrics(ctx context.Context, jdks []jdk.JDK, d time.Duration) []Metric {
	var out []Metric
	for _, j := range jdks {
		tag := fmt.Sprintf("jdk%d", j.Major)
		r, err := measureJFRRates(ctx, j, 100, d)
		if err != nil {
			out = append(out, Metric{Name: "jfr_" + tag, Value: -1, Unit: "error", Note: err.Error()})
			continue
		}
		for _, ev := range r.Plan.Events {
			short := map[string]string{jfr.ExecutionSample: "execution", jfr.CPUTimeSample: "cputime"}[ev]
			rate := r.Events[ev]
			per := "per wall s"
			if ev == jfr.CPUTimeSample {
				per = "per CPU s, from the mean samplingPeriod"
			}
			out = append(out,
				Metric{Name: fmt.Sprintf("jfr_%s_requested_per_thread_hz_%s", short, tag), Value: rate.RequestedPerThreadHz, Unit: "Hz"},
				Metric{Name: fmt.Sprintf("jfr_%s_per_thread_hz_%s", short, tag), Value: rate.AchievedPerThreadHz, Unit: "Hz",
					Note: fmt.Sprintf("%d busy threads, %s", r.Threads, per)},
				Metric{Name: fmt.Sprintf("jfr_%s_samples_per_s_%s", short, tag), Value: rate.PerS, Unit: "samples/s"})
		}
		if r.Plan.ThrottleUs > 0 {
			out = append(out, Metric{Name: "jfr_cputime_lost_" + tag, Value: float64(r.Summary.Lost), Unit: "samples",
				Note: fmt.Sprintf("jdk.CPUTimeSamplesLost over %s", d)})
		}
	}
	return out
}
