// Package ebpf is the ebpf walker: it samples a JVM from the kernel with cpu-clock perf
// events and a BPF program that unwinds user frame pointers, then names and classifies the
// frames from the JVM's perf map and the ELF symbols of its libraries.
//
// The runner's sequence: Probe (or ProbeFor) before launching, Start once the JVM runs
// with -XX:+PreserveFramePointer, Stop, then DumpPerfMap and NewSymbolizer while the JVM
// is still alive (its /proc maps vanish with it), and Classify.
package ebpf
