package hang

import (
	"regexp"
	"strconv"
	"strings"
)

// Thread is one thread of a HotSpot thread dump (the SIGQUIT output, JDK 17 to 25).
type Thread struct {
	Name      string
	Number    int // "#12"; 0 for VM-internal threads
	NID       int // OS thread id ("nid=0x1a2b" on 17, decimal on 21+)
	Daemon    bool
	Status    string // the text after nid: "runnable", "waiting on condition", "in Object.wait()"
	JavaState string // "RUNNABLE", "BLOCKED (on object monitor)"; empty for VM-internal threads
	Frames    []string
	Locks     []string // "- locked <...>" and "- waiting to lock <...>" lines, addresses removed
}

// Deadlock is HotSpot's own "Found one Java-level deadlock" section.
type Deadlock struct {
	Threads []string // in the order printed
	Kind    string   // "monitor" or "ownable synchronizer" (java.util.concurrent locks)
}

type dump struct {
	present       bool
	complete      bool // it reached the JNI global refs line (the end of the thread list)
	threads       []Thread
	deadlocks     []Deadlock
	jniGlobalRefs int
}

var (
	dumpStartRe  = regexp.MustCompile(`^Full thread dump `)
	threadRe     = regexp.MustCompile(`^"(.*)" (.*?)\bnid=(0x[0-9a-fA-F]+|\d+)\s*(.*?)\s*(\[0x[0-9a-fA-F]+\])?\s*$`)
	numberRe     = regexp.MustCompile(`#(\d+)`)
	javaStateRe  = regexp.MustCompile(`^\s+java\.lang\.Thread\.State: (.*)$`)
	frameRe      = regexp.MustCompile(`^\s+at (.*)$`)
	lockRe       = regexp.MustCompile(`^\s+- (.*)$`)
	jniRefsRe    = regexp.MustCompile(`^JNI global refs: (\d+)`)
	deadlockRe   = regexp.MustCompile(`^Found one Java-level deadlock:`)
	deadThreadRe = regexp.MustCompile(`^"(.*)":$`)
	addressRe    = regexp.MustCompile(`0x[0-9a-fA-F]+`)
)

func parseDump(data []byte) dump {
	var d dump
	lines := strings.Split(strings.ReplaceAll(string(data), "\r", ""), "\n")
	var cur *Thread
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case dumpStartRe.MatchString(l):
			if d.present { // a second dump: the first one is the evidence
				return d
			}
			d.present = true
		case !d.present:
		case strings.HasPrefix(l, `"`):
			if m := threadRe.FindStringSubmatch(l); m != nil {
				d.threads = append(d.threads, newThread(m))
				cur = &d.threads[len(d.threads)-1]
			}
		case cur != nil && javaStateRe.MatchString(l):
			cur.JavaState = javaStateRe.FindStringSubmatch(l)[1]
		case cur != nil && frameRe.MatchString(l):
			cur.Frames = append(cur.Frames, frameRe.FindStringSubmatch(l)[1])
		case cur != nil && lockRe.MatchString(l):
			cur.Locks = append(cur.Locks, addressRe.ReplaceAllString(lockRe.FindStringSubmatch(l)[1], "ADDR"))
		case jniRefsRe.MatchString(l):
			d.jniGlobalRefs, _ = strconv.Atoi(jniRefsRe.FindStringSubmatch(l)[1])
			d.complete = true
			cur = nil
		case deadlockRe.MatchString(l):
			var dl Deadlock
			dl, i = parseDeadlock(lines, i+1)
			d.deadlocks = append(d.deadlocks, dl)
			cur = nil
		}
	}
	return d
}

func newThread(m []string) Thread {
	t := Thread{Name: m[1], Status: m[4]}
	if n := numberRe.FindStringSubmatch(m[2]); n != nil {
		t.Number, _ = strconv.Atoi(n[1])
	}
	t.Daemon = strings.Contains(" "+m[2], " daemon ")
	if nid, ok := strings.CutPrefix(m[3], "0x"); ok {
		v, _ := strconv.ParseInt(nid, 16, 64)
		t.NID = int(v)
	} else {
		t.NID, _ = strconv.Atoi(m[3])
	}
	return t
}

// parseDeadlock reads the thread cycle up to "Java stack information"; it returns the index
// of the last line read.
func parseDeadlock(lines []string, i int) (Deadlock, int) {
	var dl Deadlock
	for ; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, "Java stack information") || strings.HasPrefix(l, "Found ") {
			break
		}
		if m := deadThreadRe.FindStringSubmatch(l); m != nil {
			dl.Threads = append(dl.Threads, m[1])
		}
		switch {
		case dl.Kind == "" && strings.Contains(l, "waiting to lock monitor"):
			dl.Kind = "monitor"
		case dl.Kind == "" && strings.Contains(l, "waiting for ownable synchronizer"):
			dl.Kind = "ownable synchronizer"
		}
	}
	return dl, i - 1
}

// name is a task's Java name when the dump has the thread, else its /proc name (which the
// kernel cuts at 15 bytes).
func (d *dump) name(t *Task) string {
	for _, th := range d.threads {
		if th.NID == t.TID {
			return th.Name
		}
	}
	return t.Name
}
