// Package ddprofsession is the session of Datadog's java-profiler walker (ddprof:vm,
// ddprof@RELEASE:vm): apsession's, planned and read with walkers/ddprof.
package ddprofsession

import (
	"github.com/walkfuzz/walkfuzz/harness/join"
	"github.com/walkfuzz/walkfuzz/harness/outproc"
	"github.com/walkfuzz/walkfuzz/harness/outproc/apsession"
	"github.com/walkfuzz/walkfuzz/harness/walker"
	"github.com/walkfuzz/walkfuzz/walkers/asyncprofiler"
	"github.com/walkfuzz/walkfuzz/walkers/ddprof"
)

func init() {
	for _, m := range ddprof.Modes {
		outproc.RegisterNamed(walker.DDProfPrefix+":"+m, func(name string) outproc.Session {
			s := apsession.New(name, plan, read)
			s.Window = window
			return s
		})
	}
}

// window: ddprof stamps a sample (TSC) when its handler records it, after its walk and so
// after our handler's End: the gap is its walk's time, up to ~1 ms on 2,048-frame stacks
// (Max). Slack is only the clocks' residual after calibration, as DefaultWindow's: a larger
// one let a sample take the thread's next signal, which ddprof's wall engine sends as soon
// as the handler returns at short intervals. Measured on one recursion/17 run at 50 µs
// (tgkill): Slack 100 µs gave 153 known-stack mismatches of 4,974 tagged walks, 40 µs 25,
// 20 µs 4, 10 and 5 µs none; at 1 ms, 100 µs gave 64 of 3,625 and 5 µs none. The clocks'
// residual is the low tail of the gaps (OffsetQuantile), not their median, which is ddprof's
// median walk time: in cpu mode (30 µs) the median calibration joined 82% of the signals with
// this Slack, the 10th percentile 99.96%.
var window = join.Window{Max: 1_000_000, Slack: join.DefaultWindow.Slack, OffsetQuantile: 0.1}

func plan(lib *asyncprofiler.Library, p walker.ProfilerName, env *outproc.Env) (asyncprofiler.Plan, error) {
	return ddprof.Options(ddprof.Target{Lib: lib, Mode: p.Mode, Signals: env.Episode.Signals.Mode,
		IntervalUs: env.Episode.Signals.IntervalUs, Dir: env.Dir})
}

func read(env *outproc.Env, p asyncprofiler.Plan, fn func(*asyncprofiler.Sample)) error {
	return ddprof.ReadRecording(apsession.ReaderJava(env), p, fn)
}
