package bench

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/walkers/ebpf"
)

func share(m map[string]uint64, key string) float64 {
	var all uint64
	for _, n := range m {
		all += n
	}
	if all == 0 {
		return 0
	}
	return float64(m[key]) / float64(all)
}

// workloads: every built-in workload under asgct and vmstructs in one handler: the
// walker-versus-workload table (complete share per walker, agreement, latency side by side).
func (s *suite) workloads(ctx context.Context, j jdk.JDK) {
	for _, w := range episode.Builtin {
		name := fmt.Sprintf("%s_jdk%d", w, j.Major)
		e := benchEpisode(w, "cpu", 2, s.cfg.Duration)
		e.Walkers = []string{"asgct", "vmstructs"}
		if w == "deopt" || w == "mix" {
			e.Perturb.DeoptIntervalMs = 250
		}
		res, err := s.run(ctx, "wl_"+name, e, j)
		if err != nil {
			s.fail("complete_share_asgct_"+name, err)
			continue
		}
		a, v := res.Classes["asgct"], res.Classes["vmstructs"]
		s.add(Metric{Name: "complete_share_asgct_" + name, Value: share(a, "ok"), Unit: "share", Note: classNote(a)})
		s.add(Metric{Name: "complete_share_vmstructs_" + name, Value: share(v, "ok"), Unit: "share",
			Target: ">= asgct's", Note: classNote(v)})
		if d := res.Differential["asgct~vmstructs"]; d != nil && d["both_ok"] > 0 {
			s.add(Metric{Name: "same_methods_" + name, Value: float64(d["same_methods"]) / float64(d["both_ok"]),
				Unit: "share of samples both walked", Target: ">= 0.99", Note: diffNote(d)})
			// Where ASGCT's trace is a strict prefix of vmstructs' (ASGCT stopped early): the
			// methods ASGCT named, vmstructs named too.
			s.add(Metric{Name: "asgct_methods_named_" + name,
				Value: float64(d["same_methods"]+d["second_extends"]) / float64(d["both_ok"]),
				Unit:  "share of samples both walked",
				Note:  fmt.Sprintf("same methods, or ASGCT's trace a prefix of vmstructs' (%d samples)", d["second_extends"])})
			// And leaving out the samples where the walkers follow different rules on purpose
			// (differential.CallsiteRule: ASGCT's next-PcDesc rule at a return address).
			if rest := d["both_ok"] - d["callsite_rule_methods"]; rest > 0 {
				s.add(Metric{Name: "asgct_methods_named_same_rules_" + name,
					Value: float64(d["same_methods"]+d["second_extends"]) / float64(rest),
					Unit:  "share of samples both walked", Target: ">= 0.99",
					Note: fmt.Sprintf("%d samples differ by the call-site rule", d["callsite_rule_methods"])})
			}
		}
		la, lv := res.LatencyNs["asgct"], res.LatencyNs["vmstructs"]
		s.add(Metric{Name: "latency_p50_ns_asgct_" + name, Value: float64(la.P50), Unit: "ns",
			Note: fmt.Sprintf("p99 %d ns; vmstructs p50 %d ns, p99 %d ns", la.P99, lv.P50, lv.P99)})
		if ks := res.KnownStack["asgct"]; ks != nil && ks["tagged"] > 0 {
			mism := ks["mismatch:frame"] + ks["mismatch:missing"] + ks["mismatch:extra"] + ks["mismatch:bci"]
			s.add(Metric{Name: "known_stack_coverage_" + name, Value: float64(ks["coverage_ppm"]) / 1e6, Unit: "share of walks",
				Target: targetFor(w)})
			if v := res.KnownStack["vmstructs"]; v != nil && v["tagged"] > 0 {
				vm := v["mismatch:frame"] + v["mismatch:missing"] + v["mismatch:extra"] + v["mismatch:bci"]
				s.add(Metric{Name: "known_stack_mismatch_vmstructs_" + name, Value: float64(vm) / float64(v["tagged"]),
					Unit: "share of tagged walks", Note: fmt.Sprintf("frame %d missing %d extra %d bci %d of %d tagged",
						v["mismatch:frame"], v["mismatch:missing"], v["mismatch:extra"], v["mismatch:bci"], v["tagged"])})
			}
			s.add(Metric{Name: "known_stack_mismatch_asgct_" + name, Value: float64(mism) / float64(ks["tagged"]),
				Unit: "share of tagged walks", Note: fmt.Sprintf("frame %d missing %d extra %d bci %d of %d tagged",
					ks["mismatch:frame"], ks["mismatch:missing"], ks["mismatch:extra"], ks["mismatch:bci"], ks["tagged"])})
		}
	}
}

func targetFor(w string) string {
	if w == "recursion" || w == "loops" {
		return ">= 0.30"
	}
	return ""
}

func classNote(m map[string]uint64) string {
	var parts []string
	for k, n := range m {
		if k != "ok" && n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, n))
		}
	}
	return strings.Join(parts, ", ")
}

func diffNote(d map[string]uint64) string {
	var parts []string
	for _, k := range []string{"differ:frame", "differ:length", "differ:bci", "differ:top_bci"} {
		if d[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, d[k]))
		}
	}
	if len(parts) == 0 {
		return "no disagreement"
	}
	return strings.Join(parts, ", ")
}

// registerFuzzing: vmstructs on perturbed contexts for a long run; the JVM must survive.
func (s *suite) registerFuzzing(ctx context.Context, j jdk.JDK, d time.Duration) {
	e := benchEpisode("mix", "cpu", 2, d)
	e.Walkers = []string{"vmstructs"}
	e.Perturb.RegisterPct = 100
	res, err := s.run(ctx, "register_fuzzing", e, j)
	crashes := 0.0
	note := fmt.Sprintf("%s of register fuzzing at 100%% of walks, JDK %s", d, j.Version)
	if err != nil {
		if res == nil {
			s.fail("register_fuzzing_vmstructs_crashes", err)
			return
		}
		crashes = 1
		note += ": " + err.Error()
	}
	s.add(Metric{Name: "register_fuzzing_vmstructs_crashes", Value: crashes, Unit: "JVM crashes", Target: "0", Note: note})
}

// safepointWalkers: the emulated JVMTI walker's request-to-delivery delay, and how much of
// the signal stream the reference oracle covers before fidelity drops under 0.9.
func (s *suite) safepointWalkers(ctx context.Context, j jdk.JDK) {
	e := benchEpisode("recursion", "cpu", 2, s.cfg.Duration)
	e.Walkers = []string{"asgct", "jvmti-emulated"}
	if res, err := s.run(ctx, "jvmti_emulated", e, j); err != nil {
		s.fail("jvmti_emulated_delivery_p50_ns", err)
	} else {
		l := res.LatencyNs["jvmti-emulated"]
		s.add(Metric{Name: "jvmti_emulated_delivery_p50_ns", Value: float64(l.P50), Unit: "ns",
			Note: fmt.Sprintf("p99 %d ns, request to delivery at the next safepoint (emulation)", l.P99)})
		s.add(Metric{Name: "jvmti_emulated_delivery_p99_ns", Value: float64(l.P99), Unit: "ns"})
	}
	// Relative to the same run without the oracle: this machine's own fidelity moves with load.
	base := 0.0
	if res, err := s.run(ctx, "reference_0", benchEpisode("loops", "cpu", 2, s.cfg.Duration), j); err == nil {
		base = res.Signals.Fidelity
	}
	best := 0
	for _, pct := range []int{5, 10, 25, 50, 100} {
		e := benchEpisode("loops", "cpu", 2, s.cfg.Duration)
		e.Perturb.ReferencePct = pct
		res, err := s.run(ctx, fmt.Sprintf("reference_%d", pct), e, j)
		if err != nil || base == 0 || res.Signals.Fidelity < 0.9*base {
			break
		}
		best = pct
	}
	s.add(Metric{Name: "reference_oracle_max_share_at_0.9_fidelity", Value: float64(best) / 100, Unit: "share of signals",
		Note: fmt.Sprintf("largest reference_pct tried (5,10,25,50,100) keeping delivered/requested >= 0.9 x the %.3f of the same run without it", base)})
}

func (s *suite) outOfProcess(ctx context.Context, js []jdk.JDK) {
	if err := ebpf.Probe(); err != nil {
		s.add(Metric{Name: "ebpf", Value: -1, Unit: "unsupported", Note: err.Error()})
	} else {
		for _, m := range ebpfMetrics(ctx, js[0], s.cfg.Duration/2) {
			s.add(m)
		}
	}
	for _, m := range jfrMetrics(ctx, js, s.cfg.Duration/2) {
		s.add(m)
	}
}

func (s *suite) campaign() {
	dir, err := os.MkdirTemp(s.cfg.Dir, "store")
	if err != nil {
		s.fail("store_write_per_run_us", err)
		return
	}
	defer os.RemoveAll(dir)
	if v, err := measureStoreWrite(dir, 2000); err != nil {
		s.fail("store_write_per_run_us", err)
	} else {
		s.add(Metric{Name: "store_write_per_run_us", Value: v, Unit: "µs"})
	}
	if v, err := measureReport(dir, 10000); err != nil {
		s.fail("report_seconds_10000_runs", err)
	} else {
		s.add(Metric{Name: "report_seconds_10000_runs", Value: v, Unit: "s"})
	}
}
