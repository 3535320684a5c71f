package ebpf

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

type loadParams struct {
	tgid      uint32
	depth     int
	ringBytes int
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
