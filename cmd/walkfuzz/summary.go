package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/walkfuzz/walkfuzz/harness/episode"
	"github.com/walkfuzz/walkfuzz/harness/join"
	"github.com/walkfuzz/walkfuzz/harness/knownstack"
	"github.com/walkfuzz/walkfuzz/harness/results"
	"github.com/walkfuzz/walkfuzz/harness/walkclass"
	"github.com/walkfuzz/walkfuzz/harness/walker"
)

// printSummary is what a person reads after `walkfuzz run`.
func printSummary(out io.Writer, r *results.Results) {
	fmt.Fprintf(out, "outcome: %s", r.Outcome)
	if r.Reason != "" && r.Outcome != results.OK {
		fmt.Fprintf(out, " (%s)", r.Reason)
	}
	fmt.Fprintln(out)
	if r.Crash != nil {
		fmt.Fprintf(out, "crash: %s  [bucket %s]\n", r.Crash.Title, r.Crash.Bucket)
	}
	if r.Hang != nil {
		fmt.Fprintf(out, "%s  [bucket %s]\n", r.Hang.Title, r.Hang.Bucket)
	}
	if slices.ContainsFunc(r.Walkers, func(w string) bool { return walker.PlacementOf(w) != walker.OutOfProcess }) {
		printSignals(out, r.Signals, r.Episode.Signals.Wrap)
	}
	names := make([]string, 0, len(r.Classes))
	for w := range r.Classes {
		names = append(names, w)
	}
	walker.SortAsListed(names, r.Walkers)
	for _, w := range names {
		cls := r.Classes[w]
		var total uint64
		for _, n := range cls {
			total += n
		}
		if total == 0 { // a share of nothing would print as 0.00%
			fmt.Fprintf(out, "walker %s: no walks (no data)\n", w)
			continue
		}
		fmt.Fprintf(out, "walker %s: %d walks", w, total)
		if l, ok := r.LatencyNs[w]; ok {
			fmt.Fprintf(out, ", latency p50 %s p99 %s max %s", ns(l.P50), ns(l.P99), ns(l.Max))
		}
		if walker.SafepointBiased(w) {
			fmt.Fprint(out, " (safepoint-biased: traces taken at the next safepoint)")
		}
		fmt.Fprintln(out)
		keys := make([]string, 0, len(cls))
		for k := range cls {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(a, b int) bool {
			if cls[keys[a]] != cls[keys[b]] {
				return cls[keys[a]] > cls[keys[b]]
			}
			return keys[a] < keys[b]
		})
		tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
		for _, k := range keys {
			fmt.Fprintf(tw, "  \t%s\t%d\t%.2f%%\t\n", k, cls[k], 100*float64(cls[k])/float64(total))
		}
		tw.Flush()
		if ej := r.ErrorsJudged[w]; ej["errors"] > 0 {
			fmt.Fprintf(out, "  errors judged by another walk of the same signal: %s\n", judgedLine(ej))
		}
	}
	if len(r.InjectedFaults) > 0 {
		var parts []string
		for _, w := range slices.Sorted(maps.Keys(r.InjectedFaults)) {
			parts = append(parts, fmt.Sprintf("%s %d", w, r.InjectedFaults[w]))
		}
		fmt.Fprintf(out, "read faults injected: %d; walks they ended, left out of the classes above: %s\n",
			r.Signals.ReadFaultsInjected, strings.Join(parts, ", "))
	}
	if len(r.Perturbed) > 0 {
		var parts []string
		for _, w := range slices.Sorted(maps.Keys(r.Perturbed)) {
			var n uint64
			for _, c := range r.Perturbed[w] {
				n += c
			}
			parts = append(parts, fmt.Sprintf("%s %d (ok %d)", w, n, r.Perturbed[w][walkclass.OK]))
		}
		fmt.Fprintf(out, "walks of a perturbed context (register fuzzing), left out of the classes above and of every oracle: %s\n",
			strings.Join(parts, ", "))
	}
	if s := r.Signals; s.RemoteWalks+s.RemoteBusy+s.RemoteTimeout > 0 {
		fmt.Fprintf(out, "remote walks: %d on the remote-walk thread, %d in the handler instead (%d busy, %d not picked up in time)\n",
			s.RemoteWalks, s.RemoteBusy+s.RemoteTimeout, s.RemoteBusy, s.RemoteTimeout)
		for _, w := range slices.Sorted(maps.Keys(r.Remote)) {
			rw := r.Remote[w]
			line := fmt.Sprintf("  %s: %d remote walks, ok %.2f%%, walk p50 %s (local %s), overhead with the handoff p50 %s p99 %s",
				w, rw.Walks, 100*float64(rw.Classes[walkclass.OK])/float64(max(rw.Walks, 1)), ns(rw.LatencyNs.P50), ns(rw.LocalLatencyNs.P50),
				ns(rw.OverheadNs.P50), ns(rw.OverheadNs.P99))
			if ks := r.KnownStack[w]; ks[knownstack.RemoteTagged] > 0 {
				line += fmt.Sprintf(", known stacks %d, mismatched %d", ks[knownstack.RemoteTagged], ks[knownstack.RemoteMismatch])
			}
			fmt.Fprintln(out, line)
		}
	}
	if r.Log.Dropped+r.Log.Torn+r.Log.CorruptBytes+r.Log.Unbased > 0 {
		fmt.Fprintf(out, "sample log: %d records, %d dropped (ring full), %d torn, %d corrupt bytes, %d unbased (their base record lost)\n",
			r.Log.Records, r.Log.Dropped, r.Log.Torn, r.Log.CorruptBytes, r.Log.Unbased)
		if lost := r.Log.Dropped + r.Log.Unbased; lost > 0 {
			fmt.Fprintf(out, "  coverage lost: %d walks (%.2f%%) reached no oracle (classification, known stacks, reference, differential)\n",
				lost, 100*float64(lost)/float64(lost+r.Log.Records))
		}
	}
	printJoin(out, r)
	if w := r.WorkloadOut; w != nil {
		var failed []string
		for _, c := range w.Checks {
			if !c.Pass {
				failed = append(failed, c.Name+" ("+c.Detail+")")
			}
		}
		fmt.Fprintf(out, "workload: %.0f ops/s, %d checks", w.OpsPerS, len(w.Checks))
		if len(failed) > 0 {
			fmt.Fprintf(out, ", failed: %s", strings.Join(failed, "; "))
		}
		fmt.Fprintln(out)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(out, "note: %s\n", n)
	}
	fmt.Fprintf(out, "run directory: %s\n", r.RunDir)
}

// judgedLine sums a walker's judged errors by verdict (harness/giveup): a give-up is an error
// on a stack another walker of the same signal walked to its root.
func judgedLine(ej map[string]uint64) string {
	verdicts := []string{"giveup", "excused", "justified", "unjudged"}
	sums := map[string]uint64{}
	var giveups []string
	for k, n := range ej {
		v, code, ok := strings.Cut(k, ":")
		if !ok || !slices.Contains(verdicts, v) {
			continue
		}
		sums[v] += n
		if v == "giveup" {
			giveups = append(giveups, fmt.Sprintf("%s %d", code, n))
		}
	}
	slices.Sort(giveups)
	line := fmt.Sprintf("%d errors: giveup %d (%.3f%% of walks)", ej["errors"], sums["giveup"], float64(ej["giveup_ppm"])/1e4)
	if len(giveups) > 0 {
		line += " [" + strings.Join(giveups, ", ") + "]"
	}
	return line + fmt.Sprintf(", excused %d, justified %d, unjudged %d", sums["excused"], sums["justified"], sums["unjudged"])
}

func ns(v uint64) string {
	switch {
	case v >= 1_000_000:
		return fmt.Sprintf("%.2fms", float64(v)/1e6)
	case v >= 1_000:
		return fmt.Sprintf("%.1fus", float64(v)/1e3)
	}
	return fmt.Sprintf("%dns", v)
}

// printSignals is the agent's signal line: a run without an agent walker (jfr, ebpf alone)
// has no agent driving signals, and its zeros would read as a broken driver.
func printSignals(out io.Writer, s results.Signals, wrap int) {
	if wrap > 0 { // no signal of ours: nothing requested, the profiler's signals delivered
		fmt.Fprintf(out, "signals (the profiler's signal %d, wrapped): delivered %d, walked %d", wrap, s.Delivered, s.Walked)
	} else {
		fmt.Fprintf(out, "signals (%s, %dus): requested %d, delivered %d (%.3f), walked %d", s.Mode, s.IntervalUs, s.Requested, s.Delivered, s.Fidelity, s.Walked)
	}
	if s.Overruns > 0 {
		fmt.Fprintf(out, ", overruns %d", s.Overruns)
	}
	if s.Shed > 0 {
		fmt.Fprintf(out, ", shed %d (handler-time budget spent)", s.Shed)
	}
	if s.CPURestarts > 0 {
		fmt.Fprintf(out, ", %d handlers ran out their period (restarted, their time left out of requested)", s.CPURestarts)
	}
	fmt.Fprintln(out)
	if s.Note != "" {
		fmt.Fprintf(out, "  note: %s\n", s.Note)
	}
}

// printJoin prints each profiler walker's same-signal join: how much joined, and how often
// it agreed with our walkers on the same signal where both completed.
func printJoin(out io.Writer, r *results.Results) {
	for _, w := range slices.Sorted(maps.Keys(r.Join)) {
		j := r.Join[w]
		line := fmt.Sprintf("join %s: %.1f%% of its samples joined once wrapped (%d of %d), %.1f%% of our signals (%d of %d), %d shed",
			w, 100*j.JoinedRate, j.Joined, j.OnOurThreads-j.BeforeOurs, 100*j.OurRate, j.OurJoined, j.OurSignals, j.Shed)
		for _, ours := range episode.WrapCompanions {
			if agree, both := join.Agreement(r.Differential[w+"~"+ours]); both > 0 {
				line += fmt.Sprintf("; agrees with %s on %.2f%% (%d of %d both complete)", ours, 100*float64(agree)/float64(both), agree, both)
			}
		}
		fmt.Fprintln(out, line)
	}
}
