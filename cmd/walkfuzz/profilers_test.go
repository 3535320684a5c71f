package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/differential"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/join"
	"github.com/walkfuzz/walkfuzz/harness/results"
	"github.com/walkfuzz/walkfuzz/harness/walkclass"
	"github.com/walkfuzz/walkfuzz/walkers/asyncprofiler"
)

// needAsyncProfiler skips with the setup step when the cache has no async-profiler.
func needAsyncProfiler(t *testing.T) {
	if len(asyncprofiler.Cached(asyncprofiler.CacheDir(), asyncprofiler.Profiler, asyncprofiler.LibraryName)) == 0 {
		t.Skip("async-profiler not fetched: run scripts/fetch-profilers.sh")
	}
}

type profilerRun struct {
	Outcome      string                       `json:"outcome"`
	Classes      map[string]map[string]uint64 `json:"classes"`
	Notes        []string                     `json:"notes"`
	Join         map[string]results.Join      `json:"join"`
	Differential map[string]map[string]uint64 `json:"differential"`
	KnownStack   map[string]map[string]uint64 `json:"known_stack"`
}

func runProfiler(t *testing.T, args ...string) profilerRun {
	out := filepath.Join(t.TempDir(), "run")
	stdout, stderr, code := walkfuzz(t, append([]string{"run", "--duration", "4s", "--jdk", "17", "--mode", "cpu", "--interval", "100us", "--out", out}, args...)...)
	require.Equal(t, 0, code, "%s\n%s", stdout, stderr)
	b, err := os.ReadFile(filepath.Join(out, "results.json"))
	require.NoError(t, err)
	var r profilerRun
	require.NoError(t, json.Unmarshal(b, &r))
	require.Equal(t, "ok", r.Outcome, "%s", strings.Join(r.Notes, "\n"))
	return r
}

func total(c map[string]uint64) (n uint64) {
	for _, v := range c {
		n += v
	}
	return n
}

// ap:vm through `walkfuzz run`: the profiler's samples are judged into its own column, most
// complete, none with a method the run never loaded, markers as error classes.
func TestAsyncProfilerVMThroughRun(t *testing.T) {
	needAsyncProfiler(t)
	for _, w := range []string{"recursion", "lambdas"} {
		t.Run(w, func(t *testing.T) {
			r := runProfiler(t, "--walker", "ap:vm", "--workload", w)
			c := r.Classes["ap:vm"]
			n := total(c)
			require.Greater(t, n, uint64(1000), "samples judged: %v", c)
			complete := c[walkclass.OK] + c[walkclass.TruncatedDepth] // recursion goes deeper than 2048 frames
			assert.Greater(t, float64(complete)/float64(n), 0.8, "%v", c)
			assert.Zero(t, c[walkclass.Invalid], "frames of methods the method table lacks: %v", r.Notes)
			var misfit uint64
			for class, k := range c {
				if class != walkclass.Invalid && walkclass.IsInvalid(class) {
					misfit += k // invalid:<reason>: frames that do not fit the bytecode
					continue
				}
				assert.True(t, class == walkclass.OK || class == walkclass.TruncatedDepth || class == walkclass.TruncatedShort || walkclass.IsError(class), class)
			}
			// The frame-validity oracle on the profiler's samples: a few walks skip a frame
			// (lambdas/17: 2-5 of 18,000-21,000, 0.01-0.03%, at method-handle frames).
			assert.LessOrEqual(t, float64(misfit)/float64(n), 0.002, "frames that do not fit the bytecode: %v", r.Notes)
			assert.Contains(t, strings.Join(r.Notes, "\n"), "agent wraps ap:vm's handler of signal 27")
		})
	}
}

// ap:agct and our asgct in one JVM: the agent wraps the profiler's SIGPROF, so both walk
// each of the profiler's signals, thousands of times.
func TestAsyncProfilerAGCTBesideASGCT(t *testing.T) {
	needAsyncProfiler(t)
	r := runProfiler(t, "--walker", "asgct,ap:agct", "--workload", "lambdas")
	for _, w := range []string{"asgct", "ap:agct"} {
		c := r.Classes[w]
		require.Greater(t, total(c), uint64(1000), "%s: %v", w, c)
		assert.Greater(t, float64(c[walkclass.OK])/float64(total(c)), 0.5, "%s: %v", w, c)
	}
}

// The same-signal join through `walkfuzz run`: the agent wraps the profiler's signal, and
// nearly every sample the profiler took once wrapped joins a signal our walkers walked.
// ap:agct is AsyncGetCallTrace on the very ucontext our asgct walked just before: where both
// complete they agree, every time (a pair that differs is a join that paired the wrong signals).
func TestAsyncProfilerSameSignalJoin(t *testing.T) {
	needAsyncProfiler(t)
	for _, mode := range []string{"vm", "agct"} {
		t.Run(mode, func(t *testing.T) {
			w := "ap:" + mode
			r := runProfiler(t, "--walker", w, "--workload", "lambdas", "--seed", "0x5eed")
			j, ok := r.Join[w]
			require.True(t, ok, "no join for %s: %v", w, r.Notes)
			assert.Equal(t, "active", j.WrapState)
			require.Greater(t, j.Joined, 1000, "%+v", j)
			assert.Greater(t, j.JoinedRate, 0.9, "%+v", j)
			assert.Greater(t, j.OurRate, 0.9, "%+v", j)
			for _, ours := range []string{"asgct", "vmstructs"} {
				// Every joined pair compared but those the join leaves unjudged (two untaken
				// signals of the thread within its window: unjudged:ambiguous_time) and, at most
				// two, a record of the JVM's last moments not read back: a CI run once had
				// 31,608 joined and 31,607 compared.
				m := r.Differential[w+"~"+ours]
				left := int64(j.Joined) - int64(m["samples"]) - int64(m[join.Ambiguous])
				assert.True(t, left >= 0 && left <= 2, "%s~%s: every joined pair compared: joined %d, compared %d, ambiguous %d",
					w, ours, j.Joined, m["samples"], m[join.Ambiguous])
			}
			if mode == "vm" {
				// The known-stack oracle on the profiler's own frames: its walks of the signals
				// that fell in a region, against the region, mismatching no more than ours.
				ks, ours := r.KnownStack[w], r.KnownStack["vmstructs"]
				require.Greater(t, ks["tagged"], uint64(0), "known_stack: %v", r.KnownStack)
				require.Greater(t, ours["tagged"], uint64(0), "known_stack: %v", r.KnownStack)
				assert.LessOrEqual(t, mismatchShare(ks), mismatchShare(ours)+0.002, "%s %v, vmstructs %v", w, ks, ours)
			}
			if mode == "agct" {
				agree, both := join.Agreement(r.Differential["ap:agct~asgct"])
				require.Greater(t, both, uint64(500))
				assert.Equal(t, both, agree, "ap:agct~asgct: %v", r.Differential["ap:agct~asgct"])
			}
		})
	}
}

// mismatchShare is the share of a walker's tagged walks that mismatched the recorded stack.
func mismatchShare(ks map[string]uint64) float64 {
	var n uint64
	for class, v := range ks {
		if walkclass.IsMismatch(class) {
			n += v
		}
	}
	return float64(n) / float64(ks["tagged"])
}

// Bad profiler input: one line naming the fix, exit 2.
func TestProfilerBadInput(t *testing.T) {
	notLib := filepath.Join(t.TempDir(), "libasyncProfiler.so")
	require.NoError(t, os.WriteFile(notLib, []byte("not an ELF"), 0o644))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--walker", "ap:nosuch"}, `ap has no mode "nosuch"`},
		{[]string{"run", "--walker", "ddprof:lbr"}, `ddprof has no mode "lbr"`},
		{[]string{"run", "--walker", "ap:vm", "--profiler-lib", "/etc/hostname"}, "give the build's libasyncProfiler.so"},
		{[]string{"run", "--walker", "ap:vm", "--profiler-lib", notLib}, "is not a shared library"},
		{[]string{"fuzz", "--budget", "1s", "--walkers", "ap:vm", "--profiler-lib", notLib}, "is not a shared library"},
	} {
		_, stderr, code := walkfuzz(t, tc.args...)
		assert.Equal(t, 2, code, "%v: %s", tc.args, stderr)
		assert.Contains(t, stderr, tc.want, tc.args)
		assert.Equal(t, 1, strings.Count(strings.TrimSpace(stderr), "\n")+1, "one line: %s", stderr)
	}
}

// A public defect of async-profiler's, caught on the same signal: releases before 4.2 could
// not walk a sample in a compiled method's prologue or epilogue and ended it at `unknown`
// (its issue #1444, fixed by PR #1449 in 4.2). On the calls workload 4.1 gave up on 7.7-8.3%
// of joined signals whose stack our vmstructs walker completed from the very ucontext, 4.2
// on 0.03-0.04% (corpus/walk-anomalies.md).
func TestAsyncProfilerEpilogueDefectAcrossReleases(t *testing.T) {
	giveups := giveUpsAcrossReleases(t, "calls", "first_failed:unknown", 3000, "4.1", "4.2")
	assert.Greater(t, giveups["4.1"], 0.03, "4.1's unknown where vmstructs completed, of joined pairs")
	assert.Less(t, giveups["4.2"], 0.005, "4.2's")
}

// giveUpsAcrossReleases runs each async-profiler release's vm walker wrapped on workload (4 s,
// JDK 17, a fixed seed, no perturbations) and returns, per release, the share of its pairs with
// vmstructs counted under class (a give-up class of the join), after at least minPairs pairs.
func giveUpsAcrossReleases(t *testing.T, workload, class string, minPairs uint64, releases ...string) map[string]float64 {
	for _, r := range releases {
		if _, err := os.Stat(filepath.Join(asyncprofiler.CacheDir(), asyncprofiler.Profiler, r, asyncprofiler.LibraryName)); err != nil {
			t.Skipf("async-profiler %s not fetched: run scripts/fetch-profilers.sh", r)
		}
	}
	shares := map[string]float64{}
	for _, rel := range releases {
		w := "ap@" + rel + ":vm"
		r := runProfiler(t, "--walker", w, "--workload", workload, "--seed", "0x5eed", "--threads", "2", "--jitter", "0",
			"--perturb-registers", "0", "--read-fault-ppm", "0", "--remote-pct", "0", "--jvm-flags", "")
		m := r.Differential[w+"~vmstructs"]
		require.Greater(t, m["samples"], minPairs, "%s~vmstructs: %v", w, m)
		shares[rel] = float64(m[class]) / float64(m["samples"])
		t.Logf("%s: %s on %d of %d joined signals vmstructs walked", w, class, m[class], m["samples"])
	}
	return shares
}

// A regression in async-profiler, caught on the same signal: from 4.3 its vm walker ends a
// walk in native code that has neither frame pointers nor unwind tables with
// break_stack_range instead of reaching the Java frames through the last-Java-frame anchor,
// which 4.2 does (ledger ap-native-anchor). The jni workload's Jni.computeBare is such code: on
// jni/17 4.6 gave up on 2,961 of 23,495 joined signals vmstructs walked (520 of 534 give-ups
// of one run in a Java native method), 4.2 on none.
func TestAsyncProfilerNativeAnchorRegression(t *testing.T) {
	inNative := giveUpsAcrossReleases(t, "jni", "first_failed:native_top", 1000, "4.2", "4.6")
	assert.Greater(t, inNative["4.6"], 0.01, "4.6's give-ups in a Java native method, of joined pairs")
	assert.Less(t, inNative["4.2"], 0.002, "4.2's")
}

// c2iLoss runs ap:vm on the calls workload with one of its callees kept interpreted, so the
// compiled caller reaches it through the c2i adapter on a quarter of its calls, and returns
// the share of the signals our vmstructs walker took in the I2C/C2I adapters on which the
// profiler gave up or lost frames, and how many such signals there were.
func c2iLoss(t *testing.T, major string) (float64, uint64) {
	r := runProfiler(t, "--walker", "ap:vm", "--workload", "calls", "--jdk", major, "--duration", "6s", "--seed", "0x5eed", "--threads", "2",
		"--jitter", "0", "--perturb-registers", "0", "--read-fault-ppm", "0", "--remote-pct", "0",
		"--jvm-flags", "-XX:CompileCommand=quiet -XX:CompileCommand=exclude,walkfuzz.workloads.Calls$Add::apply")
	m := r.Differential["ap:vm~vmstructs"]
	in := m["samples"+join.AdapterSuffix]
	lost := m["first_failed"+join.AdapterSuffix] + m["differ:frame"+join.AdapterSuffix] + m["differ:first_missing_top"+join.AdapterSuffix]
	t.Logf("JDK %s: ap:vm gave up or lost frames on %d of the %d joined signals vmstructs took in the I2C/C2I adapters (of %d)", major, lost, in, m["samples"])
	if in == 0 {
		return 0, 0
	}
	return float64(lost) / float64(in), in
}

// An anomaly of async-profiler's vm walker (ledger ap-c2i-caller): in the c2i adapter, between
// a compiled caller and an interpreted callee, it returns no Java frame. How often a sampler
// lands there depends on the JDK: on calls/25 with Add.apply interpreted, 8,991 of 69,346
// joined signals were taken in the adapters and ap:vm gave up or lost frames on 8,980 of
// them; on 17, 923 of 69,919 and 915. The join counts these signals apart (samples:adapter,
// first_failed:adapter); each JDK's run must see the profiler lose most of them.
func TestAsyncProfilerC2iCaller(t *testing.T) {
	needAsyncProfiler(t)
	jdks := []string{"17"}
	for _, m := range []int{25, 21} {
		if _, err := jdk.Find(m); err == nil {
			jdks = append(jdks, strconv.Itoa(m))
			break
		}
	}
	for _, major := range jdks {
		share, in := c2iLoss(t, major)
		// About 1% of JDK 17's signals land in the adapters: 264 of 27,108 in a 4 s run under
		// make test's load. 100 is enough to tell a walker that loses most of them (share near
		// 1) from one that walks them (near 0).
		require.Greater(t, in, uint64(100), "JDK %s: signals in the adapters", major)
		assert.Greater(t, share, 0.5, "JDK %s", major)
	}
}

// What is left of ap:vm's differ:frame against vmstructs once the attributed parts are taken
// out (signals in the I2C/C2I adapters, method-handle linkers named invokeBasic, frames pending
// deoptimization) is where one of the two names a frame the other does not for no known
// reason: our reference once did at compiled prologues and epilogues (a stale return address)
// and at interpreted frames under construction (a stale bci). lambdas/25, 15 s: 1 of 50,381
// pairs both walked was left (403 differ:frame: 314 adapter, 88 linker).
func TestAsyncProfilerUnattributedFrameDiffs(t *testing.T) {
	needAsyncProfiler(t)
	major := "17"
	if _, err := jdk.Find(25); err == nil {
		major = "25"
	}
	r := runProfiler(t, "--walker", "ap:vm", "--workload", "lambdas", "--jdk", major, "--duration", "8s", "--seed", "0x72",
		"--jitter", "0", "--perturb-registers", "0", "--read-fault-ppm", "0", "--remote-pct", "0")
	m := r.Differential["ap:vm~vmstructs"]
	require.Greater(t, m["both_ok"], uint64(5000), "%v", m)
	// Counted per pair by the join (the parts overlap; subtracting them would overcount).
	frame := m[differential.FrameUnattributed]
	t.Logf("JDK %s: differ:frame %d of %d both walked, %d unattributed (%v)", major, m["differ:frame"], m["both_ok"], frame, m)
	assert.Less(t, float64(frame)/float64(m["both_ok"]), 0.001, "unattributed differ:frame of ap:vm~vmstructs")
}

// A regression in async-profiler, caught on the same signal: from 4.3 its SIGSEGV handler,
// chained in front of HotSpot's, blocks no signal (its PR #1596), so its profiling signal is
// delivered inside that handler at an implicit null check, and its vm walker finds no Java
// frame there (ledger ap-segv-mask); 4.2's handler has HotSpot's mask. The deopt workload takes
// millions of implicit null checks: on deopt/17 4.6 gave up on most of the joined signals our
// vmstructs walker took past such a signal frame, 4.2 met (almost) none.
func TestAsyncProfilerSegvMaskRegression(t *testing.T) {
	shares := giveUpsAcrossReleases(t, "deopt", "first_failed"+join.SigframeSuffix, 1000, "4.2", "4.6")
	assert.Greater(t, shares["4.6"], 0.005, "4.6's give-ups in its own signal handler, of joined pairs")
	assert.Less(t, shares["4.2"], 0.0005, "4.2's")
}

// The profiler's samples its own judge finds invalid by bytecode (a caller at no invoke, or at
// an invoke of another method) are read against our walks of the same signals. Under -Xcomp
// the deopt workload keeps compiled frames pending deoptimization on every stack, which
// async-profiler's walker reads at the patched pc (the ledger's ap-deopt-caller-bci: the caller
// at bci 0, its inlined scopes lost): deopt/17 -Xcomp, ap:vm, 5 s, 1,789 of 1,794 joined invalid
// samples past such a frame or while deoptimizing. Under -Xint with a redefinition every 20 ms
// (seed 0x1's episode) it refuses an interpreted frame of a redefined method and names the
// callee in rbx instead, skipping the frame (ap-redefined-interpreted): calls/17, 4 s, 9,795 of
// 9,795. The examples file shows the pairs.
func TestAsyncProfilerInvalidFramesAttributed(t *testing.T) {
	needAsyncProfiler(t)
	for _, tc := range []struct {
		workload, flags, seed string
		parts                 []string
	}{
		{"deopt", "-Xcomp", "0x72", []string{join.LazyDeoptSuffix, join.DeoptingSuffix, join.SharedSuffix, join.EntrySuffix}},
		{"calls", "-Xint", "0x1", []string{join.RedefinedSuffix, join.SharedSuffix, join.EntrySuffix}},
	} {
		t.Run(tc.workload, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			stdout, stderr, code := walkfuzz(t, "run", "--walker", "ap:vm", "--workload", tc.workload, "--jdk", "17", "--jvm-flags", tc.flags,
				"--duration", "4s", "--mode", "cpu", "--interval", "100us", "--seed", tc.seed, "--jitter", "0", "--perturb-registers", "0",
				"--read-fault-ppm", "0", "--remote-pct", "0", "--out", out)
			require.Equal(t, 0, code, "%s\n%s", stdout, stderr)
			b, err := os.ReadFile(filepath.Join(out, "results.json"))
			require.NoError(t, err)
			var r profilerRun
			require.NoError(t, json.Unmarshal(b, &r))
			m := r.Differential["ap:vm~vmstructs"]
			var invalid, attributed, unwalked uint64
			for class, n := range m {
				rest, ok := strings.CutPrefix(class, join.TheirInvalidPrefix+walkclass.InvalidPrefix)
				if !ok {
					continue
				}
				switch {
				case !strings.Contains(rest, ":"):
					invalid += n
				case slices.ContainsFunc(tc.parts, func(p string) bool { return strings.HasSuffix(rest, p) }):
					attributed += n
				case strings.HasSuffix(rest, join.OursFailedSuffix):
					unwalked += n
				}
			}
			t.Logf("ap:vm~vmstructs: %d joined samples invalid by bytecode, %d attributed, %d where no walk of ours got through, of %d", invalid, attributed, unwalked, m["samples"])
			require.Greater(t, invalid, uint64(100), "%v", m)
			assert.Greater(t, float64(attributed)/float64(invalid-unwalked), 0.97, "%v", m)

			var ex []struct {
				Pair, Class   string
				First, Second []string
			}
			b, err = os.ReadFile(filepath.Join(out, join.PairExamplesFile))
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(b, &ex))
			seen := 0
			for _, e := range ex {
				if e.Pair == "ap:vm~vmstructs" && strings.HasPrefix(e.Class, join.TheirInvalidPrefix) && strings.HasSuffix(e.Class, tc.parts[0]) {
					seen++
				}
			}
			assert.Greater(t, seen, 0, "examples of attributed invalid samples")
			// The session's judge pools the versions of every method sharing a name (the loaders'
			// copies of a redefined class): what our walkers read frame for frame it passes too.
			assert.LessOrEqual(t, m[join.TheirInvalidPrefix+walkclass.InvalidPrefix+"caller_not_invoke"+join.SharedSuffix], uint64(10), "%v", m)
		})
	}
}

// At an interpreted method's entry reached from compiled code through the c2i adapter, with
// frame pointers kept in compiled code, async-profiler's walker takes the callee from rbx and
// unwinds from rbp, the compiled caller's frame pointer: the callee lands on the caller's
// caller (deopt/21: Square.area @0 directly on Deopt.work @125, applyAsLong skipped, the
// session's judge says caller_target). Our vmstructs walker breaks there and notes the method
// entry; the join counts those samples as :method_entry (the ledger's ap-entry-caller), not as
// signals nothing of ours explains. The episode is the demo's that showed it.
func TestAsyncProfilerMethodEntryAttributed(t *testing.T) {
	needAsyncProfiler(t)
	if _, err := jdk.Pick(jdk.Discover(), "21"); err != nil {
		t.Skipf("needs JDK 21: %v (run scripts/setup.sh)", err)
	}
	dir := t.TempDir()
	ep := filepath.Join(dir, "ep.json")
	require.NoError(t, os.WriteFile(ep, []byte(`{"seed":"0x7ace4729ac3ec665","workload":"deopt","workload_params":{"phase_ms":"410"},`+
		`"walkers":["ap:vm","vmstructs"],"jdk":"21","jvm_flags":["-XX:+PreserveFramePointer","-Xmx1g"],`+
		`"signals":{"mode":"cpu","interval_us":200,"jitter_pct":10,"signal":27,"pattern":"burst","target":"all","wrap":27},`+
		`"perturbations":{"register_pct":0,"deopt_interval_ms":126},"threads":3,"duration_ms":6000,"depth":2048}`), 0o644))
	out := filepath.Join(dir, "run")
	stdout, stderr, code := walkfuzz(t, "run", "--episode", ep, "--out", out)
	require.Equal(t, 0, code, "%s\n%s", stdout, stderr)
	b, err := os.ReadFile(filepath.Join(out, "results.json"))
	require.NoError(t, err)
	var r profilerRun
	require.NoError(t, json.Unmarshal(b, &r))
	m := r.Differential["ap:vm~vmstructs"]
	target := join.TheirInvalidPrefix + walkclass.InvalidPrefix + "caller_target"
	entry, unwalked := m[target+join.EntrySuffix], m[target+join.OursFailedSuffix]
	t.Logf("ap:vm~vmstructs: caller_target %d, of them in a method entry %d, where no walk of ours got through otherwise %d", m[target], entry, unwalked)
	require.GreaterOrEqual(t, entry, uint64(5), "%v", m)
	assert.LessOrEqual(t, unwalked*4, entry, "%v", m)
}
