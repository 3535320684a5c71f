package hang

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
)

// Snapshot is the state of every thread of a stuck process, as the harness saw it in /proc
// while the JVM was being asked for a thread dump. Its text form (tasks.txt in a run
// directory) is one line per thread:
//
//	# walkfuzz tasks v1 pid=4242 samples=5
//	# tid "comm" state wchan [key=value ...]
//	4250 "VM Thread" S futex_wait_queue syscall=futex sigblk=0000000000000004 stack=libc.so.6:__futex_abstimed_wait_common,...
//
// tid is the thread id; comm the thread name, Go-quoted (it may hold spaces); state the
// letter from /proc/.../stat (R running, S sleeping, D disk, T stopped, Z zombie); wchan the
// kernel function it sleeps in, "-" when none or hidden. Optional fields, in any order:
//
//	syscall  the system call it is blocked in ("futex"), "running", or "-" (blocked outside one)
//	sigblk   hex mask of signals blocked in every sample (bit n-1 for signal n): a thread
//	         inside a signal handler blocks that signal for as long as it stays there
//	stack    comma-separated code addresses found on the top of its user stack, innermost
//	         first: "lib:symbol" or "lib+0xoffset" (a conservative scan: it may include stale
//	         return addresses, and misses frames whose return address is not on the stack)
//
// Readers ignore comment lines and fields they do not know.
type Snapshot struct {
	PID     int
	Samples int // how many times blocked signals were sampled
	Tasks   []Task
}

// Task is one thread of the process.
type Task struct {
	TID     int
	Name    string
	State   string
	Wchan   string
	Syscall string
	SigBlk  uint64
	Stack   []string
}

const snapshotVersion = "walkfuzz tasks v1"

// Blocks reports whether the task blocks signal sig (1-based), as it does while it runs
// that signal's handler.
func (t Task) Blocks(sig int) bool {
	return sig > 0 && sig <= 64 && t.SigBlk&(1<<(sig-1)) != 0
}

// String renders the snapshot in its text form.
func (s *Snapshot) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s pid=%d samples=%d\n", snapshotVersion, s.PID, s.Samples)
	b.WriteString("# tid \"comm\" state wchan [syscall=NAME] [sigblk=HEX] [stack=SYM,...]\n")
	for _, t := range s.Tasks {
		fmt.Fprintf(&b, "%d %s %s %s", t.TID, strconv.Quote(t.Name), field(t.State), field(t.Wchan))
		if t.Syscall != "" {
			fmt.Fprintf(&b, " syscall=%s", field(t.Syscall))
		}
		fmt.Fprintf(&b, " sigblk=%016x", t.SigBlk)
		if len(t.Stack) > 0 {
			syms := make([]string, len(t.Stack))
			for i, s := range t.Stack {
				syms[i] = strings.ReplaceAll(field(s), ",", "_")
			}
			fmt.Fprintf(&b, " stack=%s", strings.Join(syms, ","))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// field makes a value one token.
func field(s string) string {
	if s == "" {
		return "-"
	}
	return strings.Join(strings.Fields(s), "_")
}

// ParseSnapshot reads the text form. Malformed task lines are skipped; an input with no
// task lines gives an empty snapshot.
func ParseSnapshot(data []byte) *Snapshot {
	s := &Snapshot{}
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if rest, ok := strings.CutPrefix(line, "# "+snapshotVersion); ok {
			for _, kv := range strings.Fields(rest) {
				k, v, _ := strings.Cut(kv, "=")
				switch k {
				case "pid":
					s.PID, _ = strconv.Atoi(v)
				case "samples":
					s.Samples, _ = strconv.Atoi(v)
				}
			}
			continue
		}
		if line == "" || line[0] == '#' {
			continue
		}
		if t, ok := parseTask(line); ok {
			s.Tasks = append(s.Tasks, t)
		}
	}
	return s
}

func parseTask(line string) (Task, bool) {
	tid, rest, _ := strings.Cut(line, " ")
	var t Task
	var err error
	if t.TID, err = strconv.Atoi(tid); err != nil {
		return Task{}, false
	}
	quoted, err := strconv.QuotedPrefix(rest)
	if err != nil {
		return Task{}, false
	}
	t.Name, _ = strconv.Unquote(quoted)
	fields := strings.Fields(rest[len(quoted):])
	if len(fields) < 2 {
		return Task{}, false
	}
	t.State, t.Wchan = dash(fields[0]), dash(fields[1])
	for _, kv := range fields[2:] {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "syscall":
			t.Syscall = v
		case "sigblk":
			t.SigBlk, _ = strconv.ParseUint(v, 16, 64)
		case "stack":
			if v != "" {
				t.Stack = strings.Split(v, ",")
			}
		}
	}
	return t, true
}

func dash(s string) string {
	if s == "-" {
		return ""
	}
	return s
}
