package campaign

import (
	"fmt"
	"runtime"

	"github.com/shirou/gopsutil/v4/mem"
)

// PerJVM is the memory one episode is budgeted (heap up to 1g is derived, plus metaspace,
// code cache and the sample log).
const PerJVM = 1 << 30

// Jobs bounds parallelism by cores and by available memory; never below one.
func Jobs(cpus int, availBytes uint64) int {
	n := cpus
	if m := int(availBytes / PerJVM); m < n {
		n = m
	}
	return max(n, 1)
}

// DefaultJobs is Jobs for this machine, with a note saying what bounded it.
func DefaultJobs() (int, string) {
	cpus := runtime.NumCPU()
	vm, err := mem.VirtualMemory()
	if err != nil {
		return cpus, fmt.Sprintf("%d cores (memory unknown: %v)", cpus, err)
	}
	n := Jobs(cpus, vm.Available)
	return n, fmt.Sprintf("%d cores, %.1f GiB available at %d GiB per JVM", cpus, float64(vm.Available)/(1<<30), PerJVM>>30)
}
