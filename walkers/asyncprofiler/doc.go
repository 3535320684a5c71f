// Package asyncprofiler is the mechanism of async-profiler's walkers under test (ap:vm,
// ap:vmx, ap:fp, ap:dwarf, ap:agct, and ap@RELEASE:MODE): it finds the profiler's library,
// plans the agent options for a mode and walkfuzz's signal mode, and reads the samples
// back from its JFR recording. Judging the samples is the harness's (docs/profilers.md).
//
// The calls, in the order a run makes them:
//
//	n, ok, err := ParseName("ap@4.0:vm")          // ok false: not async-profiler's name
//	lib, err := Find(CacheDir(), Profiler, LibraryName, n.Release, userLib)
//	plan, err := Options(Target{Lib: lib, Mode: n.Mode, Signals: "cpu", IntervalUs: 100, Dir: runDir})
//	// start the JVM with plan.Flag; the profiler samples in plan.Signal
//	notes := plan.Check(jvmOutput) // the profiler's [ERROR]/[WARN] lines, a start it never reported
//	err = ReadRecording(jdk+"/bin/java", plan.Recording, plan.Events, func(s *Sample) { ... })
//
// A Sample has its thread (OS and Java id, name), time, and frames innermost first (class,
// method, descriptor, bci, line, frame type); Frame.Marker names the profiler's own failure
// frames ([break_compiled], [unknown_Java], ...) so they become error classes by name, and
// Benign tells a thread that was not in Java from a failed walk. Which release has which
// walker is read from the library itself (Library.Supports): an "unsupported: why" error
// otherwise. Releases come from scripts/fetch-profilers.sh's cache ($WALKFUZZ_CACHE/profilers)
// or a user's own build (--profiler-lib PATH).
//
// Recordings are read with the JDK's own JFR parser (jdk.jfr.consumer) through ReadJfr.java,
// run in source-file mode, instead of `jfr print --json`: that spells out every frame's
// class, loader and module, 3.4 GB and 3 minutes for one 4 s recording of the recursion
// workload.
//
// This package imports nothing from the harness (walkers/imports_test.go).
package asyncprofiler
