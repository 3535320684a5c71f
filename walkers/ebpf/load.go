package ebpf

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// maxFrames is MAX_FRAMES in sampler.c.
const maxFrames = len(samplerSample{}.Frames)

type loadParams struct {
	tgid      uint32
	depth     int
	ringBytes int
}

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

// initPidNSIno is the inode number the kernel gives the initial PID namespace
// (PROC_PID_INIT_INO).
const initPidNSIno = 0xEFFFFFFC

func pidNamespace() (dev, ino uint64, child bool, err error) {
	fi, err := os.Stat("/proc/self/ns/pid")
	if err != nil {
		return 0, 0, false, fmt.Errorf("pid namespace: %w", err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	// The helper compares with the kernel's dev_t (major<<20 | minor), not stat's encoding.
	dev = uint64(unix.Major(st.Dev))<<20 | uint64(unix.Minor(st.Dev))
	return dev, st.Ino, st.Ino != initPidNSIno, nil
}
