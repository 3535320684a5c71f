//go:build 386 || amd64

package ebpf

import "fmt"

// maxFrames is MAX_FRAMES in sampler.c.
const maxFrames = len(samplerSample{}.Frames)

// load fills in the program's constants and loads it. The BPF-side pid is in the initial
// PID namespace; when we run in a child namespace the program translates instead.
func load(p loadParams) (*samplerObjects, error) {
	spec, err := loadSampler()
	if err != nil {
		return nil, err
	}
	consts := map[string]any{
		"target_tgid":  p.tgid,
		"max_frames":   uint32(p.depth),
		"wakeup_bytes": uint64(p.ringBytes / 4),
	}
	if dev, ino, child, err := pidNamespace(); err != nil {
		return nil, err
	} else if child {
		consts["pidns_dev"], consts["pidns_ino"] = dev, ino
	}
	for name, v := range consts {
		if err := spec.Variables[name].Set(v); err != nil {
			return nil, fmt.Errorf("sampler constant %s: %w", name, err)
		}
	}
	spec.Maps["samples"].MaxEntries = uint32(p.ringBytes)
	var objs samplerObjects
	if err := spec.LoadAndAssign(&objs, nil); err != nil {
		return nil, err
	}
	return &objs, nil
}

// archErr is nil where the sampler program is built (load_other.go says why elsewhere).
var archErr error
