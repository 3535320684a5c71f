// Package ebpf is the ebpf walker's mechanism: it samples a JVM from the kernel with
// cpu-clock perf events and a BPF program that unwinds user frame pointers, and names the
// frames from the JVM's perf map and the ELF symbols of its libraries. It imports nothing
// from the harness (walkers/imports_test.go); classifying the samples and measuring the
// walker are the harness's (harness/outproc, harness/bench).
//
// The session's sequence (harness/outproc/ebpfsession): Probe (or ProbeFor) before
// launching, Start once the JVM runs with -XX:+PreserveFramePointer (and
// OpenAttachListener), then Halt, SnapshotMaps and DumpPerfMap while the JVM is still alive
// (its /proc maps vanish with it), and Stop, which drains the ring buffer, whenever suits.
//
// The BPF program is built for x86-64 only (generate.go); on other architectures the
// package builds and every session is refused with an "unsupported: " reason.
//
// The harness judges a sample complete when its frame-pointer chain reaches a native thread entry
// (start_thread, HotSpot's thread_native_entry, the launcher's JavaMain), not when its
// bottom Java frame is a thread root as for the other walkers. The stricter rule needs no
// knowledge of the program, and the Java rule cannot be applied: the perf map names
// compiled methods only, and a thread's root frame (Thread.run, main) is nearly always
// interpreted, an anonymous "Interpreter" frame.
package ebpf
