package signalmode

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

var modes = []string{"cpu", "wall", "cpu-timer", "tgkill"}

// On this project's machines every mode works; the probe leaves no descriptor behind.
func TestProbeEveryModeHere(t *testing.T) {
	before := openFDs(t)
	for _, m := range modes {
		assert.NoError(t, Probe(m), m)
	}
	assert.Equal(t, before, openFDs(t), "the probe closes what it opens")
	assert.ErrorContains(t, Probe("itimer"), `unknown signal mode "itimer"`)
}

// A seccomp filter that refuses a system call, as Docker's default profile refuses
// perf_event_open: the probe reports that mode, with the fix, and only that mode.
func TestProbeSeesSeccompRefusal(t *testing.T) {
	if deny := os.Getenv("WALKFUZZ_TEST_DENY"); deny != "" {
		nr, err := strconv.Atoi(deny)
		require.NoError(t, err)
		require.NoError(t, denySyscall(uintptr(nr)))
		for _, m := range modes {
			if err := Probe(m); err != nil {
				os.Stdout.WriteString("refused " + m + ": " + err.Error() + "\n")
			}
		}
		return
	}
	for nr, want := range map[int]string{
		unix.SYS_PERF_EVENT_OPEN: "refused cpu: perf_event_open(task clock): operation not permitted (",
		unix.SYS_TIMER_CREATE:    "refused wall: timer_create(CLOCK_MONOTONIC): operation not permitted (a seccomp profile",
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestProbeSeesSeccompRefusal$")
		cmd.Env = append(os.Environ(), "WALKFUZZ_TEST_DENY="+strconv.Itoa(nr))
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
		assert.Contains(t, string(out), want)
		refusedModes := strings.Count(string(out), "refused ")
		if nr == unix.SYS_PERF_EVENT_OPEN {
			assert.Equal(t, 1, refusedModes, string(out))
			assert.Contains(t, string(out), "CAP_PERFMON")
		} else {
			assert.Equal(t, 2, refusedModes, "wall and cpu-timer both create timers:\n%s", out)
		}
	}
}

// denySyscall installs, on every thread of this process, a seccomp filter that fails system
// call nr with EPERM.
func denySyscall(nr uintptr) error {
	filter := []unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 0}, // seccomp_data.nr
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: 0, Jf: 1, K: uint32(nr)},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW},
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return err
	}
	_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&prog)))
	if errno != 0 {
		return errno
	}
	return nil
}

func openFDs(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	return len(ents)
}

// With CAP_PERFMON (root here) the cpu mode's events count kernel time; without it, at
// perf_event_paranoid 2, the kernel refuses that and only the user-time fallback opens.
func TestCPUCountsKernelTimeFollowsPrivilege(t *testing.T) {
	if os.Getenv("WALKFUZZ_TEST_DROPPED") != "" {
		os.Stdout.WriteString("kernel time: " + strconv.FormatBool(CPUCountsKernelTime()) + "\n")
		os.Stdout.WriteString("cpu probe: " + strconv.FormatBool(Probe("cpu") == nil) + "\n")
		return
	}
	paranoid, ok := PerfParanoid()
	require.True(t, ok, "kernel.perf_event_paranoid is unreadable")
	if os.Geteuid() != 0 {
		t.Skip("needs root: the test drops CAP_PERFMON and CAP_SYS_ADMIN from a copy of itself")
	}
	assert.True(t, CPUCountsKernelTime(), "root may count kernel time")
	if paranoid < 2 {
		t.Skipf("kernel.perf_event_paranoid is %d: anyone may count kernel time, nothing to drop", paranoid)
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv (util-linux) is missing: cannot drop CAP_PERFMON")
	}
	cmd := exec.Command(setpriv, "--bounding-set=-perfmon,-sys_admin", "--inh-caps=-perfmon,-sys_admin",
		os.Args[0], "-test.run=^TestCPUCountsKernelTimeFollowsPrivilege$")
	cmd.Env = append(os.Environ(), "WALKFUZZ_TEST_DROPPED=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	assert.Contains(t, string(out), "kernel time: false")
	assert.Contains(t, string(out), "cpu probe: true", "the user-time event still opens")
}
