package join

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/walkfuzz/walkfuzz/harness/artifacts"
	"github.com/walkfuzz/walkfuzz/harness/classify"
	"github.com/walkfuzz/walkfuzz/harness/differential"
	"github.com/walkfuzz/walkfuzz/harness/jdk"
	"github.com/walkfuzz/walkfuzz/harness/methods"
	"github.com/walkfuzz/walkfuzz/harness/samplelog"
	"github.com/walkfuzz/walkfuzz/walkers/asyncprofiler"
	"github.com/walkfuzz/walkfuzz/walkers/ddprof"
)

// wrapRun is one JVM run of a built-in workload under async-profiler, with walkfuzz's agent
// after it on the command line wrapping the profiler's signal (wrap) or absent.
type wrapRun struct {
	dir       string
	plan      asyncprofiler.Plan
	out       string
	opsPerSec float64
}

var throughputRE = regexp.MustCompile(`walkfuzz-throughput: (\d+) ops in (\d+) ms`)

func runProfiled(t *testing.T, j jdk.JDK, art artifacts.Paths, lib *asyncprofiler.Library, mode, workload string, d time.Duration, wrap bool) wrapRun {
	t.Helper()
	dir := t.TempDir()
	plan, err := asyncprofiler.Options(asyncprofiler.Target{Lib: lib, Mode: mode, Signals: "cpu", IntervalUs: 100, Dir: dir})
	if err != nil {
		t.Skip(err)
	}
	args := []string{plan.Flag}
	if wrap {
		conf := fmt.Sprintf("log=%s\nmethods=%s\ncodes=%s\nwalkers=asgct,vmstructs\nwrap=%d\ninterval_ns=100000\n%s",
			filepath.Join(dir, "samples.bin"), filepath.Join(dir, "methods.tsv"), filepath.Join(dir, "codes.tsv"), plan.Signal,
			os.Getenv("WALKFUZZ_WRAP_CONF"))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "agent.conf"), []byte(conf), 0o644))
		// Read after the exit, not live as the runner reads it: a ring that holds the whole
		// run (recursion's deep walks filled the agent's own 16 MB one and dropped records).
		require.NoError(t, samplelog.Create(filepath.Join(dir, "samples.bin"), 512<<20, 4096))
		args = append(args, "-agentpath:"+art.Agent+"=config="+filepath.Join(dir, "agent.conf"))
	}
	args = append(args, "-XX:ErrorFile="+filepath.Join(dir, "hs_err_pid%p.log"), "-XX:-CreateCoredumpOnCrash",
		"-Dwalkfuzz.roots="+filepath.Join(dir, "roots.txt"), "-Dwalkfuzz.knownstacks="+filepath.Join(dir, "known_stacks.tsv"),
		"-Dwalkfuzz.jni.lib="+art.JNILib, "-XX:CompileCommand=quiet", "-XX:CompileCommand=dontinline,walkfuzz.KnownStack::*",
		"-cp", art.Workloads, "walkfuzz.workloads.Main", workload, "seed=0x5eed",
		fmt.Sprintf("duration_ms=%d", d.Milliseconds()), "threads=2")
	cmd := exec.Command(filepath.Join(j.Path, "bin", "java"), args...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s\n%s", strings.Join(cmd.Args, " "), out)
	if _, err := os.Stat(plan.Recording); err != nil {
		t.Skipf("unsupported: %s", strings.Join(plan.Check(string(out)), "; "))
	}
	r := wrapRun{dir: dir, plan: plan, out: string(out)}
	if m := throughputRE.FindStringSubmatch(r.out); m != nil {
		ops, _ := strconv.Atoi(m[1])
		ms, _ := strconv.Atoi(m[2])
		r.opsPerSec = float64(ops) / (float64(ms) / 1000)
	}
	return r
}

// judge reads a wrapped run's log, method table and recording into a Judge.
func judge(t *testing.T, j jdk.JDK, r wrapRun, profiler string) (jg *Judge, rep Report, h samplelog.Header, shed uint64) {
	t.Helper()
	lj := loadJudge(t, filepath.Join(r.dir, "samples.bin"), r.dir, profiler, r.plan.Depth)
	jg, h, shed = lj.jg, lj.h, lj.shed
	require.NoError(t, asyncprofiler.ReadRecording(filepath.Join(j.Path, "bin", "java"), r.plan.Recording, r.plan.Events,
		func(s *asyncprofiler.Sample) { jg.AddSample(s) }))
	return jg, jg.Finish(DefaultWindow), h, shed
}

// loadedJudge is a wrapped run's log read into a Judge, and the log's thread ids by name.
type loadedJudge struct {
	jg     *Judge
	h      samplelog.Header
	byName map[string]int64
	shed   uint64
}

// loadJudge reads the sample log at logPath (every record from its read cursor) with the
// method table and code names of dir into a Judge of profiler.
func loadJudge(t *testing.T, logPath, dir, profiler string, depth int) loadedJudge {
	t.Helper()
	l, err := samplelog.Open(logPath)
	require.NoError(t, err)
	defer l.Close()
	lj := loadedJudge{h: l.Header(), byName: map[string]int64{}}
	for _, th := range l.Threads() {
		lj.shed += th.Shed
		lj.byName[th.Name] = int64(th.Tid)
	}
	tab, err := methods.Load(filepath.Join(dir, "methods.tsv"))
	require.NoError(t, err)
	codes, err := classify.LoadCodeNames(filepath.Join(dir, "codes.tsv"))
	require.NoError(t, err)
	lj.jg = NewJudge(profiler, lj.h, tab, codes, depth)
	if strings.HasPrefix(profiler, "ddprof") {
		lj.jg.DropHiddenAddresses() // as harness/outproc/apsession: ddprof names hidden classes without their address
	}
	_, err = l.ReadFinal(func(rec *samplelog.Record) error { lj.jg.AddRecord(rec); return nil })
	require.NoError(t, err)
	return lj
}

func wrapSetup(t *testing.T) (artifacts.Paths, *asyncprofiler.Library) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts JVMs")
	}
	art, err := artifacts.Locate()
	if err != nil {
		t.Skip(err)
	}
	lib, err := asyncprofiler.Find(asyncprofiler.CacheDir(), asyncprofiler.Profiler, asyncprofiler.LibraryName, "4.6", "")
	if err != nil {
		t.Skip(err)
	}
	return art, lib
}

func agreement(m map[string]int) (agree, bothOK int) {
	return m[differential.Agree] + m[AgreeCut], m[differential.BothOK]
}

// TestWrapSameSignal runs async-profiler 4.6 (event=cpu, 100 µs) first and walkfuzz's agent
// second with wrap=SIGPROF, walkers asgct and vmstructs, 4 s of recursion and lambdas, on
// JDK 17 and 25, and joins the profiler's samples with our records of the same signals.
// ap:agct is AsyncGetCallTrace called by the profiler on the very ucontext our asgct walked:
// where both complete, they must agree.
// wrapMatrixEnv runs every cell of TestWrapSameSignal; make test runs two: ap:agct beside
// asgct (the join's own check: the same function on the same signal must agree) on JDK 17, and
// ap:vm beside vmstructs on JDK 25.
const wrapMatrixEnv = "WALKFUZZ_WRAP_MATRIX"

var (
	wrapMatrix       = os.Getenv(wrapMatrixEnv) != ""
	wrapDefaultCells = map[string]bool{"jdk17/agct/lambdas": true, "jdk25/vm/lambdas": true}
)

func TestWrapSameSignal(t *testing.T) {
	art, lib := wrapSetup(t)
	for _, major := range []int{17, 25} {
		j, err := jdk.Find(major)
		if err != nil {
			t.Logf("JDK %d: %v", major, err)
			continue
		}
		for _, mode := range []string{"agct", "vm"} {
			for _, workload := range []string{"recursion", "lambdas"} {
				t.Run(fmt.Sprintf("jdk%d/%s/%s", major, mode, workload), func(t *testing.T) {
					if !wrapMatrix && !wrapDefaultCells[fmt.Sprintf("jdk%d/%s/%s", major, mode, workload)] {
						t.Skipf("one of the matrix's 8 cells (~1 min each): run them all with %s=1", wrapMatrixEnv)
					}
					r := runProfiled(t, j, art, lib, mode, workload, 4*time.Second, true)
					jg, rep, h, shed := judge(t, j, r, "ap:"+mode)
					c := rep.Join
					t.Logf("wrap %+v; join: profiler %d (on our threads %d, before ours %d), joined %d (%.1f%%, %.1f%% once wrapped), ours %d (%.1f%% joined), clock offset %d ns, gap p50 %d ns p99 %d max %d; our signals shed %d, records dropped %d",
						h.Wrap, c.ProfilerSamples, c.OnOurThreads, c.BeforeOurs, c.Joined, 100*rep.Result.ProfilerRate(), 100*rep.Result.WrappedRate(), c.OurRecords,
						100*rep.Result.OursRate(), c.ClockOffsetNs, c.GapP50Ns, c.GapP99Ns, c.GapMaxNs, shed, h.DroppedRecords)
					for pair, m := range rep.Differential {
						a, ok := agreement(m)
						t.Logf("%s: agree %d of %d both ok (%.2f%%): %v", pair, a, ok, 100*float64(a)/float64(max(ok, 1)), m)
					}
					inRegion := 0
					for i := range rep.Result.Pairs {
						if jg.Signal(rep.Result, i).Region != 0 {
							inRegion++
						}
					}
					t.Logf("joined pairs inside a known-stack region: %d", inRegion)
					require.Equal(t, "active", h.Wrap.State, "the wrapper took the profiler's signal over")
					require.Zero(t, h.Wrap.Lost, "the profiler did not install its handler again")
					require.Zero(t, h.DroppedRecords, "the ring held every walk")
					require.Greater(t, c.OnOurThreads, 1000, "the profiler sampled our threads")
					require.Greater(t, rep.Result.WrappedRate(), 0.9, "profiler samples joined")
					require.Greater(t, rep.Result.OursRate(), 0.9, "our signals joined")
					if mode == "agct" {
						m := rep.Differential["ap:agct~asgct"]
						a, ok := agreement(m)
						require.Greater(t, ok, 500)
						if a < ok {
							showDisagreements(t, jg, rep, 0)
						}
						require.GreaterOrEqual(t, float64(a), 0.99*float64(ok), "ap:agct and asgct on the same context")
					} else if testing.Verbose() {
						showDisagreements(t, jg, rep, 1) // ap:vm against vmstructs
					}
				})
			}
		}
	}
}

// showDisagreements logs a few joined pairs where the profiler and our walker (index in
// the log's walkers) both returned frames and disagree.
func showDisagreements(t *testing.T, jg *Judge, rep Report, walker int) {
	n := 0
	for i := range rep.Result.Pairs {
		a, ours := jg.Pair(rep.Result, i)
		b := ours[walker]
		class, at := Compare(a, b)
		if class == differential.Agree || class == AgreeCut || a.Failed != "" || b.Failed != "" {
			continue
		}
		render := func(w Walk) string {
			var s []string
			for k := max(0, at-1); k < min(len(w.Frames), at+3); k++ {
				s = append(s, fmt.Sprintf("%s@%d", jg.Names().Key(w.Frames[k].Method), w.Frames[k].Bci))
			}
			return fmt.Sprintf("%d frames: %s", len(w.Frames), strings.Join(s, " | "))
		}
		t.Logf("%s at %d gap %d\n  ap:   %s\n  ours: %s", class, at, rep.Result.Pairs[i].Gap, render(a), render(b))
		if n++; n == 8 {
			return
		}
	}
}

// TestWrapCost measures what the wrapper costs the profiler: its samples/s (over the run's
// 4 s) and the workload's throughput alone and wrapped, interleaved (WALKFUZZ_WRAP_COST=1; rounds from
// WALKFUZZ_WRAP_ROUNDS, default 3).
func TestWrapCost(t *testing.T) {
	if os.Getenv("WALKFUZZ_WRAP_COST") == "" {
		t.Skip("set WALKFUZZ_WRAP_COST=1 (JVM runs in interleaved rounds)")
	}
	art, lib := wrapSetup(t)
	j, err := jdk.Find(17)
	if err != nil {
		t.Skip(err)
	}
	rounds, _ := strconv.Atoi(os.Getenv("WALKFUZZ_WRAP_ROUNDS"))
	if rounds <= 0 {
		rounds = 3
	}
	for _, workload := range []string{"lambdas", "recursion"} {
		var rate, ops [2][]float64
		for round := 0; round < rounds; round++ {
			for _, wrap := range []bool{round%2 == 1, round%2 == 0} { // alternate which goes first
				r := runProfiled(t, j, art, lib, "vm", workload, 4*time.Second, wrap)
				// jfr summary counts events from the chunk's sizes: seconds, where reading
				// recursion's stacks takes a minute.
				counts, err := ddprof.SampleCounts(filepath.Join(j.Path, "bin", "jfr"), r.plan.Recording)
				require.NoError(t, err)
				n := counts[r.plan.Events[0]]
				i := 0
				if wrap {
					i = 1
				}
				rate[i] = append(rate[i], float64(n)/4)
				ops[i] = append(ops[i], r.opsPerSec)
			}
		}
		t.Logf("%s: profiler samples/s alone %v wrapped %v (ratio of means %.3f); workload ops/s alone %v wrapped %v (ratio %.3f)",
			workload, rate[0], rate[1], mean(rate[1])/mean(rate[0]), ops[0], ops[1], mean(ops[1])/mean(ops[0]))
	}
}

func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(max(len(v), 1))
}

// TestWrapDdprof wraps ddprof 1.22.0 (cpu=100 µs, cstack=vm; JDK 17: it does not start on 25)
// the same way. JMC's parser names no OS thread id, so samples are given our thread's id by
// thread name (the workload's names are unique).
func TestWrapDdprof(t *testing.T) {
	// vm is Datadog's VMStructs walker; fp takes its Java frames from AsyncGetCallTrace on the
	// very ucontext our asgct walked, so where both complete they must agree (as ap:agct).
	for _, mode := range []string{"vm", "fp"} {
		t.Run(mode, func(t *testing.T) { wrapDdprof(t, mode) })
	}
}

func wrapDdprof(t *testing.T, mode string) {
	art, _ := wrapSetup(t)
	lib, err := ddprof.Find("", "")
	if err != nil {
		t.Skip(err)
	}
	j, err := jdk.Find(17)
	if err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	plan, err := ddprof.Options(ddprof.Target{Lib: lib, Mode: mode, Signals: "cpu", IntervalUs: 100, Dir: dir})
	require.NoError(t, err)
	conf := fmt.Sprintf("log=%s\nmethods=%s\ncodes=%s\nwalkers=asgct,vmstructs\nwrap=%d\n",
		filepath.Join(dir, "samples.bin"), filepath.Join(dir, "methods.tsv"), filepath.Join(dir, "codes.tsv"), plan.Signal)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "agent.conf"), []byte(conf), 0o644))
	require.NoError(t, samplelog.Create(filepath.Join(dir, "samples.bin"), 256<<20, 4096))
	cmd := exec.Command(filepath.Join(j.Path, "bin", "java"), plan.Flag, "-agentpath:"+art.Agent+"=config="+filepath.Join(dir, "agent.conf"),
		"-Dwalkfuzz.roots="+filepath.Join(dir, "roots.txt"), "-Dwalkfuzz.jni.lib="+art.JNILib,
		"-XX:CompileCommand=quiet", "-XX:CompileCommand=dontinline,walkfuzz.KnownStack::*",
		"-cp", art.Workloads, "walkfuzz.workloads.Main", "lambdas", "seed=0x5eed", "duration_ms=4000", "threads=2")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	lj := loadJudge(t, filepath.Join(dir, "samples.bin"), dir, "ddprof:"+mode, plan.Depth)
	jg, h, byName := lj.jg, lj.h, lj.byName
	err = ddprof.ReadRecording(filepath.Join(j.Path, "bin", "java"), plan, func(s *asyncprofiler.Sample) {
		if tid, ok := byName[s.Thread]; ok {
			s.TID = tid
		}
		jg.AddSample(s)
	})
	if err != nil {
		t.Skip(err)
	}
	// harness/outproc/ddprofsession's window: ddprof reads its clock after its walk.
	rep := jg.Finish(Window{Max: 1_000_000, Slack: DefaultWindow.Slack, OffsetQuantile: 0.1})
	c := rep.Join
	t.Logf("wrap %+v; join: profiler %d (on our threads %d, before ours %d), joined %d (%.1f%% once wrapped), ours %d (%.1f%%), clock offset %d ns, gap p50 %d p99 %d max %d",
		h.Wrap, c.ProfilerSamples, c.OnOurThreads, c.BeforeOurs, c.Joined, 100*rep.Result.WrappedRate(), c.OurRecords,
		100*rep.Result.OursRate(), c.ClockOffsetNs, c.GapP50Ns, c.GapP99Ns, c.GapMaxNs)
	for pair, m := range rep.Differential {
		a, ok := agreement(m)
		t.Logf("%s: agree %d of %d both ok: %v", pair, a, ok, m)
	}
	require.Equal(t, "active", h.Wrap.State)
	require.Greater(t, c.Joined, 0)
	// 99.0% here; a cpu-mode recursion run joined 82% with the median calibration, whose
	// offset was ddprof's walk time.
	assert.Greater(t, rep.Result.WrappedRate(), 0.9, "ddprof's samples joined once wrapped")
	if mode == "fp" {
		a, ok := agreement(rep.Differential["ddprof:fp~asgct"])
		require.Positive(t, ok, "no ddprof:fp sample both walked")
		assert.GreaterOrEqual(t, float64(a), 0.99*float64(ok), "ddprof:fp and asgct on the same context")
	}
}
