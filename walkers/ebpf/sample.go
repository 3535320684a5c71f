package ebpf

import (
	"encoding/binary"
	"fmt"
)

// Sample is one user stack the kernel took from the target process.
type Sample struct {
	Pid, Tid uint32
	CPU      uint32
	TimeNs   uint64 // CLOCK_MONOTONIC
	Err      int32  // negative errno from bpf_get_stack; 0 when the stack was taken
	InKernel bool   // the tick interrupted a system call or fault; the stack is the user part
	// Frames are user addresses, innermost first: Frames[0] is the interrupted pc, the rest
	// are return addresses found through the frame-pointer chain.
	Frames []uint64
	// Count is how many ticks took exactly this stack: 1 for a sample handed to OnSample,
	// more in Session.Samples, which folds identical stacks.
	Count uint64
}

// sampleHeader is the size of struct sample before its frames.
const sampleHeader = 32

const sampleKernel = 1 // SAMPLE_KERNEL

// decodeSample reads a ring-buffer record. Frames alias raw.
func decodeSample(raw []byte, s *Sample) error {
	if len(raw) < sampleHeader {
		return fmt.Errorf("ebpf sample: %d bytes, want at least %d", len(raw), sampleHeader)
	}
	le := binary.LittleEndian
	n := int(le.Uint32(raw[24:]))
	if len(raw) < sampleHeader+8*n {
		return fmt.Errorf("ebpf sample: %d frames in %d bytes", n, len(raw))
	}
	*s = Sample{
		Pid:      le.Uint32(raw[0:]),
		Tid:      le.Uint32(raw[4:]),
		TimeNs:   le.Uint64(raw[8:]),
		CPU:      le.Uint32(raw[16:]),
		Err:      int32(le.Uint32(raw[20:])),
		InKernel: le.Uint32(raw[28:])&sampleKernel != 0,
		Frames:   s.Frames[:0],
		Count:    1,
	}
	for i := 0; i < n; i++ {
		s.Frames = append(s.Frames, le.Uint64(raw[sampleHeader+8*i:]))
	}
	return nil
}
