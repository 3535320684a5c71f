package jfr

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/walkfuzz/walkfuzz/harness/episode"
)

// Rate compares what one event type delivered with what was asked.
type Rate struct {
	Samples uint64  `json:"samples"`
	PerS    float64 `json:"per_s"`
	// Per sampled thread: per wall second for jdk.ExecutionSample, per CPU second (from
	// the mean samplingPeriod) for jdk.CPUTimeSample.
	RequestedPerThreadHz float64 `json:"requested_per_thread_hz"`
	AchievedPerThreadHz  float64 `json:"achieved_per_thread_hz"`
}

// Rates is one measured recording.
type Rates struct {
	JDKMajor int             `json:"jdk_major"`
	Threads  int             `json:"threads"`
	Plan     Plan            `json:"plan"`
	Summary  *Summary        `json:"summary"`
	Events   map[string]Rate `json:"events"`
}

// MeasureRates records Depths (one busy thread per CPU, 32 frames deep) under javaHome for
// d at intervalUs, and compares the achieved sampling rates with the requested ones.
func MeasureRates(ctx context.Context, javaHome string, major, intervalUs int, d time.Duration) (Rates, error) {
	r := Rates{JDKMajor: major, Threads: runtime.NumCPU(), Events: map[string]Rate{}}
	dir, err := os.MkdirTemp("", "walkfuzz-jfr")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(dir)
	depths := make([]int, r.Threads)
	for i := range depths {
		depths[i] = 32
	}
	e := &episode.Episode{Signals: episode.Signals{IntervalUs: intervalUs}, Depth: DefaultDepth}
	if r.Plan, err = RunDepths(ctx, javaHome, major, e, dir, d, depths...); err != nil {
		return r, err
	}
	if r.Summary, err = Parse(filepath.Join(javaHome, "bin", "jfr"), r.Plan.Recording, RootKeys(DepthsRoot)); err != nil {
		return r, err
	}
	for _, ev := range r.Plan.Events {
		rate := Rate{RequestedPerThreadHz: r.Plan.RequestedPerThreadHz(ev)}
		if es := r.Summary.Events[ev]; es != nil {
			rate.Samples, rate.PerS, rate.AchievedPerThreadHz = es.Samples, es.PerS, es.PerThreadPerS
			if ev == CPUTimeSample && es.MeanPeriodMs > 0 {
				rate.AchievedPerThreadHz = 1000 / es.MeanPeriodMs
			}
		}
		r.Events[ev] = rate
	}
	return r, nil
}

// Metric is a row of results/bench.json (the same fields as harness/bench.Metric).
type Metric struct {
	Name   string  `json:"name"`
	Value  float64 `json:"value"`
	Unit   string  `json:"unit"`
	Target string  `json:"target,omitempty"`
	Note   string  `json:"note,omitempty"`
}

// JDK is one JDK to measure.
type JDK struct {
	Home  string
	Major int
}

// MeasureBench measures each JDK at the 100 µs interval for d: per event type the
// requested and achieved per-thread rates, samples per second, and lost samples. A JDK
// that cannot be measured is one row with value -1, unit "error" and the reason.
func MeasureBench(ctx context.Context, jdks []JDK, d time.Duration) []Metric {
	var out []Metric
	for _, j := range jdks {
		tag := fmt.Sprintf("jdk%d", j.Major)
		r, err := MeasureRates(ctx, j.Home, j.Major, 100, d)
		if err != nil {
			out = append(out, Metric{Name: "jfr_" + tag, Value: -1, Unit: "error", Note: err.Error()})
			continue
		}
		for _, ev := range r.Plan.Events {
			short := map[string]string{ExecutionSample: "execution", CPUTimeSample: "cputime"}[ev]
			rate := r.Events[ev]
			per := "per wall s"
			if ev == CPUTimeSample {
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
