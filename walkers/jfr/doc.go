// Package jfr is the jfr walker: the JVM's own Flight Recorder samples the workload
// (jdk.ExecutionSample on every JDK, jdk.CPUTimeSample on JDK 25+), and the recording is
// read back through the JDK's `jfr print --json` and classified like every other walk.
//
// The runner's sequence: Options adds the recording flags to the JVM's command line,
// the JVM runs and exits (the recording is dumped at exit), then Parse reads it with the
// run's Roots: which bottom frames complete a stack depends on the program (its Thread
// subclasses, its declared roots), so the runner passes that rule in.
//
// It also reads jdk.StackTraceRequest events (ReadRequests, RequestSettings): the way the
// JFR variant of OpenJDK's proposed JVMTI stack-trace API delivers the traces the jvmti
// walker requested (harness/runner/jfrrequests.go turns them into walks).
package jfr
