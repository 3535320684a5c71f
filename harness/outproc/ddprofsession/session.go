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

// window: ddprof's JFR times are its own TSC, and its gaps spread to 0.3-0.6 ms (p99;
// docs/profilers.md); its signals are 10-20 ms apart per thread, so 1 ms cannot reach the
// next one.
var window = join.Window{Max: 1_000_000, Slack: 100_000}

func plan(lib *asyncprofiler.Library, p walker.ProfilerName, env *outproc.Env) (asyncprofiler.Plan, error) {
	return ddprof.Options(ddprof.Target{Lib: lib, Mode: p.Mode, Signals: env.Episode.Signals.Mode,
		IntervalUs: env.Episode.Signals.IntervalUs, Dir: env.Dir})
}

func read(env *outproc.Env, p asyncprofiler.Plan, fn func(*asyncprofiler.Sample)) error {
	return ddprof.ReadRecording(apsession.ReaderJava(env), p, fn)
}
