// Package jfr is the jfr walker's mechanism: the JVM's own Flight Recorder samples the
// workload (jdk.ExecutionSample on every JDK, jdk.CPUTimeSample on JDK 25+), and the
// recording is read back through the JDK's `jfr print --json`.
//
// Options plans a recording (JVM flags, settings, where it is dumped), AgentSignal and
// Check state JFR's own constraints, and Parse hands each recorded sample (its thread,
// its stack as JFR named it, failed/biased) to the caller. Judging the samples (which
// bottom frame completes a stack depends on the program) and measuring rates are the
// harness's: harness/outproc and harness/bench. This package imports nothing from the
// harness (walkers/imports_test.go).
//
// It also reads jdk.StackTraceRequest events (ReadRequests, RequestSettings): the way the
// JFR variant of OpenJDK's proposed JVMTI stack-trace API delivers the traces the jvmti
// walker requested (harness/runner/jfrrequests.go turns them into walks).
package jfr
