// Package bench measures walkfuzz's performance targets and writes results/bench.json.
package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/walkfuzz/walkfuzz/harness/artifacts"
	"github.com/walkfuzz/walkfuzz/harness/campaign"
	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/results"
	"github.com/walkfuzz/walkfuzz/harness/runner"
)

// Metric is one row of bench.json.
type Metric struct {
	Name   string  `json:"name"`
	Value  float64 `json:"value"`
	Unit   string  `json:"unit"`
	Target string  `json:"target,omitempty"`
	Note   string  `json:"note,omitempty"`
}

// Config chooses what to measure.
type Config struct {
	Dir          string        // scratch directory for runs
	Duration     time.Duration // per measured run
	FuzzDuration time.Duration // the register-fuzzing run
	JDKs         []jdk.JDK
	// Only runs one group ("selftest"); empty: every group.
	Only           string
	SelftestBudget time.Duration // the selftest group; 0: 8 minutes
	FeedbackBudget time.Duration // each arm of the feedback group; 0: 10 minutes
	// FeedbackSpace, when set, is the feedback group's campaign (walkers, workloads, JDKs,
	// what each JDK cannot run) instead of asgct, vmstructs and their pair on the built-in
	// workloads of JDKs; its seed base and duration cap are the group's own.
	FeedbackSpace *campaign.Spec
	CostDuration  time.Duration // each run of the cost group; 0: 6 s
	CostReps      int           // interleaved repetitions of the cost group; 0: 3
	CostPairReps  int           // more repetitions of (bare, 10ms) only; 0: 2, negative: none
	CostArms      []string      // the cost group's agent arms to run (bare always runs); none: all
	CostWorkloads []string      // the cost group's workloads; none: loops and recursion
}

type suite struct {
	cfg     Config
	metrics []Metric
	log     io.Writer
}

func (s *suite) add(m Metric) {
	s.metrics = append(s.metrics, m)
	fmt.Fprintf(s.log, "  %-40s %12.4g %s\n", m.Name, m.Value, m.Unit)
}

func (s *suite) fail(name string, err error) {
	s.metrics = append(s.metrics, Metric{Name: name, Value: -1, Unit: "error", Note: err.Error()})
	fmt.Fprintf(s.log, "  %-40s failed: %v\n", name, err)
}

// Run measures everything and returns the metrics.
func Run(ctx context.Context, cfg Config, progress io.Writer) ([]Metric, error) {
	s := &suite{cfg: cfg, log: progress}
	if len(cfg.JDKs) == 0 {
		return nil, fmt.Errorf("no JDK to benchmark: run scripts/setup.sh")
	}
	if s.cfg.SelftestBudget == 0 {
		s.cfg.SelftestBudget = 8 * time.Minute
	}
	if s.cfg.FeedbackBudget == 0 {
		s.cfg.FeedbackBudget = 10 * time.Minute
	}
	switch cfg.Only {
	case "":
	case "selftest":
		s.selftest(ctx, cfg.JDKs[0])
		return s.metrics, nil
	case "feedback":
		s.feedbackArms(ctx, cfg.JDKs)
		return s.metrics, nil
	case "cost":
		s.cost(ctx, cfg.JDKs)
		return s.metrics, nil
	default:
		return nil, fmt.Errorf("unknown bench group %q: use selftest, feedback or cost", cfg.Only)
	}
	s.reader()
	for _, mode := range []string{"cpu", "wall"} {
		s.fidelity(ctx, mode, cfg.JDKs[0])
	}
	for _, j := range cfg.JDKs {
		for _, w := range episode.Builtin {
			s.overheadRatio(ctx, w, j)
		}
		s.workloads(ctx, j)
	}
	s.cost(ctx, cfg.JDKs)
	s.safepointWalkers(ctx, cfg.JDKs[0])
	s.registerFuzzing(ctx, cfg.JDKs[0], cfg.FuzzDuration)
	s.outOfProcess(ctx, cfg.JDKs)
	s.campaign()
	s.selftest(ctx, cfg.JDKs[0])
	s.feedbackArms(ctx, cfg.JDKs)
	return s.metrics, nil
}

func (s *suite) reader() {
	dir, err := os.MkdirTemp(s.cfg.Dir, "reader")
	if err != nil {
		s.fail("reader_records_per_s", err)
		return
	}
	defer os.RemoveAll(dir)
	v, err := measureReader(dir, 2_000_000)
	if err != nil {
		s.fail("reader_records_per_s", err)
		return
	}
	s.add(Metric{Name: "reader_records_per_s", Value: v, Unit: "records/s", Target: ">= 1000000"})
}

func benchEpisode(workload, mode string, threads int, d time.Duration) episode.Episode {
	none := []string{}
	zero := 0
	e := episode.Derive(0xbe4c, episode.Pins{Workload: workload, Walkers: []string{"asgct"}, Mode: mode, IntervalUs: 100,
		DurationMs: int(d / time.Millisecond), Threads: threads, Depth: 2048, JVMFlags: &none, JitterPct: &zero, RegisterPct: &zero})
	e.Signals.Target = "workload"
	return e
}

func (s *suite) run(ctx context.Context, name string, e episode.Episode, j jdk.JDK) (*results.Results, error) {
	dir := filepath.Join(s.cfg.Dir, name)
	os.RemoveAll(dir)
	res, err := runner.Run(ctx, e, j, runner.Options{Dir: dir})
	if err != nil {
		return nil, err
	}
	if res.Outcome != results.OK {
		return res, fmt.Errorf("run %s ended %s: %s", dir, res.Outcome, res.Reason)
	}
	return res, nil
}

// fidelity: busy threads no more than cores, so every thread can actually run.
func (s *suite) fidelity(ctx context.Context, mode string, j jdk.JDK) {
	name := "signal_fidelity_" + mode + "_100us"
	// loops: shallow stacks, so walks are cheap and the number measures the signal source;
	// on 2048-deep stacks a 100 us wall timer outruns the walker and starves the thread.
	res, err := s.run(ctx, name, benchEpisode("loops", mode, runtime.NumCPU(), s.cfg.Duration), j)
	if err != nil {
		s.fail(name, err)
		return
	}
	var req, del uint64
	for _, t := range res.Threads {
		if len(t.Name) > 3 && t.Name[:3] == "wf-" {
			req += t.Requested
			del += t.Delivered
		}
	}
	v := 0.0
	if req > 0 {
		v = float64(del) / float64(req)
	}
	s.add(Metric{Name: name, Value: v, Unit: "delivered/requested", Target: ">= 0.95",
		Note: fmt.Sprintf("%d of %d on the workload's threads, JDK %s", del, req, j.Version)})
	if mode == "cpu" {
		if o, ok := res.OverheadNs["asgct"]; ok {
			s.add(Metric{Name: "handler_overhead_p50_ns", Value: float64(o.P50), Unit: "ns", Target: "<= 150",
				Note: "handler bookkeeping before the walk plus one log append; the walker excluded"})
		}
	}
}

var throughputRe = regexp.MustCompile(`walkfuzz-throughput: (\d+) ops in (\d+) ms`)

// overheadRatio compares the workload's own throughput with the agent at 100us and without.
func (s *suite) overheadRatio(ctx context.Context, workload string, j jdk.JDK) {
	name := fmt.Sprintf("overhead_ratio_%s_jdk%d", workload, j.Major)
	e := benchEpisode(workload, "cpu", 2, s.cfg.Duration)
	res, err := s.run(ctx, name, e, j)
	if err != nil {
		s.fail(name, err)
		return
	}
	if res.WorkloadOut == nil || res.WorkloadOut.OpsPerS == 0 {
		s.fail(name, fmt.Errorf("workload reported no throughput"))
		return
	}
	art, err := artifacts.Locate()
	if err != nil {
		s.fail(name, err)
		return
	}
	out, err := exec.CommandContext(ctx, j.Java(), "-cp", art.Workloads, "walkfuzz.workloads.Main", workload,
		"seed="+e.Seed.String(), "duration_ms="+strconv.Itoa(e.DurationMs), "threads=2").Output()
	if err != nil {
		s.fail(name, fmt.Errorf("baseline run: %v", err))
		return
	}
	m := throughputRe.FindSubmatch(out)
	if m == nil {
		s.fail(name, fmt.Errorf("baseline run printed no throughput"))
		return
	}
	ops, _ := strconv.ParseFloat(string(m[1]), 64)
	ms, _ := strconv.ParseFloat(string(m[2]), 64)
	base := ops * 1000 / ms
	s.add(Metric{Name: name, Value: res.WorkloadOut.OpsPerS / base, Unit: "ratio",
		Note: fmt.Sprintf("%.0f ops/s with asgct at 100us (cpu) vs %.0f without the agent", res.WorkloadOut.OpsPerS, base)})
}

// Write stores the metrics as JSON and prints them as a table.
func Write(path string, ms []Metric, out io.Writer) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, _ := json.MarshalIndent(ms, "", "  ")
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tVALUE\tUNIT\tTARGET\tNOTE")
	for _, m := range ms {
		fmt.Fprintf(tw, "%s\t%.4g\t%s\t%s\t%s\n", m.Name, m.Value, m.Unit, m.Target, m.Note)
	}
	return tw.Flush()
}
