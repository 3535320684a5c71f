package hang

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

const (
	snapshotSamples = 5                     // blocked-signal samples per thread
	sampleGap       = 20 * time.Millisecond // between samples
	stackScanBytes  = 16 << 10              // how much of each blocked thread's stack is scanned
	maxStackSyms    = 24
)

// TakeSnapshot reads /proc/<pid>/task/*/{comm,stat,wchan,status,syscall} and the top of each
// blocked thread's stack (through /proc/<pid>/mem: the caller must be allowed to ptrace the
// process, as the JVM's parent or root is) and returns the snapshot's text form.
func TakeSnapshot(pid int) (string, error) {
	s, err := takeSnapshot(pid)
	if err != nil {
		return "", err
	}
	return s.String(), nil
}

func takeSnapshot(pid int) (*Snapshot, error) {
	base := fmt.Sprintf("/proc/%d", pid)
	blocked := map[int]uint64{}
	for n := 0; n < snapshotSamples; n++ {
		if n > 0 {
			time.Sleep(sampleGap)
		}
		tids, err := taskIDs(base)
		if err != nil {
			return nil, err
		}
		seen := map[int]bool{}
		for _, tid := range tids {
			m, ok := sigBlk(base, tid)
			if !ok {
				continue
			}
			seen[tid] = true
			if prev, found := blocked[tid]; found || n == 0 {
				if found {
					m &= prev
				}
				blocked[tid] = m
			}
		}
		for tid := range blocked { // a thread that came and went is not stuck in anything
			if !seen[tid] {
				delete(blocked, tid)
			}
		}
	}
	if len(blocked) == 0 {
		return nil, fmt.Errorf("no threads of process %d readable in /proc", pid)
	}
	sym := newSymbolizer(pid)
	mem, _ := os.Open(base + "/mem")
	if mem != nil {
		defer mem.Close()
	}
	s := &Snapshot{PID: pid, Samples: snapshotSamples}
	for tid, mask := range blocked {
		dir := fmt.Sprintf("%s/task/%d", base, tid)
		t := Task{TID: tid, SigBlk: mask}
		t.Name = strings.TrimSuffix(readString(dir+"/comm"), "\n")
		t.State = statState(readString(dir + "/stat"))
		if w := strings.TrimSpace(readString(dir + "/wchan")); w != "0" {
			t.Wchan = w
		}
		var sp, pc uint64
		t.Syscall, sp, pc = syscallOf(readString(dir + "/syscall"))
		if pc != 0 {
			t.Stack = append(t.Stack, sym.name(pc))
		}
		if sp != 0 && mem != nil {
			t.Stack = appendStack(t.Stack, scanStack(mem, sp, sym))
		}
		s.Tasks = append(s.Tasks, t)
	}
	sort.Slice(s.Tasks, func(i, j int) bool { return s.Tasks[i].TID < s.Tasks[j].TID })
	return s, nil
}

func taskIDs(base string) ([]int, error) {
	entries, err := os.ReadDir(base + "/task")
	if err != nil {
		return nil, err
	}
	var tids []int
	for _, e := range entries {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids, nil
}

func sigBlk(base string, tid int) (uint64, bool) {
	status := readString(filepath.Join(base, "task", strconv.Itoa(tid), "status"))
	for _, l := range strings.Split(status, "\n") {
		if v, ok := strings.CutPrefix(l, "SigBlk:"); ok {
			m, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return m, err == nil
		}
	}
	return 0, false
}

// statState is the state letter of /proc/.../stat, after the parenthesised comm (which may
// itself hold parentheses and spaces).
func statState(stat string) string {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(stat[i+1:])
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// syscallOf reads /proc/.../syscall: "running", "-1 sp pc" (blocked outside a system call)
// or "nr arg1..arg6 sp pc".
func syscallOf(s string) (name string, sp, pc uint64) {
	f := strings.Fields(s)
	switch {
	case len(f) == 0:
		return "", 0, 0
	case f[0] == "running":
		return "running", 0, 0
	case len(f) >= 3:
		sp, _ = strconv.ParseUint(strings.TrimPrefix(f[len(f)-2], "0x"), 16, 64)
		pc, _ = strconv.ParseUint(strings.TrimPrefix(f[len(f)-1], "0x"), 16, 64)
	}
	if f[0] == "-1" {
		return "-", sp, pc
	}
	nr, err := strconv.Atoi(f[0])
	if err != nil {
		return "", sp, pc
	}
	if n, ok := syscallNames[nr]; ok {
		return n, sp, pc
	}
	return strconv.Itoa(nr), sp, pc
}

// syscallNames: the x86_64 system calls a stuck JVM thread is usually found in.
var syscallNames = map[int]string{
	0: "read", 1: "write", 7: "poll", 23: "select", 24: "sched_yield", 34: "pause", 35: "nanosleep",
	43: "accept", 45: "recvfrom", 47: "recvmsg", 61: "wait4", 128: "rt_sigtimedwait", 130: "rt_sigsuspend",
	202: "futex", 230: "clock_nanosleep", 232: "epoll_wait", 270: "pselect6", 271: "ppoll", 281: "epoll_pwait",
	288: "accept4", 441: "epoll_pwait2",
}

// scanStack reads the top of a stack and names every word that points into code.
func scanStack(mem *os.File, sp uint64, sym *symbolizer) []string {
	buf := make([]byte, stackScanBytes)
	n, _ := mem.ReadAt(buf, int64(sp))
	for n == 0 && len(buf) > 4096 { // the stack may end sooner than the scan
		buf = buf[:len(buf)/2]
		n, _ = mem.ReadAt(buf, int64(sp))
	}
	var names []string
	for off := 0; off+8 <= n; off += 8 {
		if name := sym.code(binary.LittleEndian.Uint64(buf[off:])); name != "" {
			names = append(names, name)
		}
	}
	return names
}

// appendStack adds names, dropping immediate repeats, up to maxStackSyms.
func appendStack(stack, names []string) []string {
	for _, n := range names {
		if len(stack) >= maxStackSyms {
			break
		}
		if len(stack) > 0 && stack[len(stack)-1] == n {
			continue
		}
		stack = append(stack, n)
	}
	return stack
}

func readString(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}
