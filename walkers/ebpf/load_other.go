//go:build !(386 || amd64)

package ebpf

import (
	"fmt"
	"runtime"

	"github.com/cilium/ebpf"
)

// The sampler program and its bindings are generated for x86-64 only (generate.go): its
// frame-pointer unwinding reads x86 registers. Elsewhere the package builds, so the harness
// does, and every session is refused with an "unsupported: " reason.

// maxFrames is MAX_FRAMES in sampler.c.
const maxFrames = 2048

type samplerObjects struct {
	Samples     *ebpf.Map
	Counters    *ebpf.Map
	SampleStack *ebpf.Program
}

func (o *samplerObjects) Close() error { return nil }

// archErr refuses every session on this architecture.
var archErr = fmt.Errorf("unsupported: the ebpf walker's BPF program is built for x86-64 only, not %s", runtime.GOARCH)

func load(loadParams) (*samplerObjects, error) { return nil, archErr }
