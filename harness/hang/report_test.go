package hang

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// tasks builds a snapshot: ordinary JVM threads (SIGQUIT blocked, as HotSpot does) plus the
// given lines, for rules the golden dumps do not reach.
func tasks(lines ...string) []byte {
	var b strings.Builder
	b.WriteString("# walkfuzz tasks v1 pid=100 samples=5\n")
	for i := 0; i < 10; i++ {
		fmt.Fprintf(&b, "%d \"worker-%d\" S futex_do_wait syscall=futex sigblk=0000000000000004\n", 200+i, i)
	}
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	return []byte(b.String())
}

func TestRules(t *testing.T) {
	tests := []struct {
		name           string
		dump, snap     []byte
		title, culprit string
	}{{
		name:    "printf from a handler on an unusual signal",
		snap:    tasks(`300 "app" S futex_do_wait syscall=futex sigblk=0000000000000204 stack=libc.so.6:__lll_lock_wait_private,libc.so.6:__vfprintf_internal,libagent.so:handler`),
		title:   "hang: deadlock in stdio from signal handler",
		culprit: "app",
	}, {
		name:    "pthread mutex from a handler",
		snap:    tasks(`300 "app" S futex_do_wait syscall=futex sigblk=0000000004000004 stack=libc.so.6:__lll_lock_wait,libc.so.6:pthread_mutex_lock`),
		title:   "hang: lock wait in signal handler",
		culprit: "app",
	}, {
		name:    "handler blocked in read",
		snap:    tasks(`300 "app" S pipe_read syscall=read sigblk=0000000004000004`),
		title:   "hang: thread blocked in signal handler",
		culprit: "app",
	}, {
		name:    "SIGQUIT blocked everywhere is no handler",
		snap:    tasks(`300 "VM Thread" S futex_do_wait syscall=futex sigblk=0000000000000000 stack=libjvm.so:SafepointSynchronize::begin`, `301 "spinner" R - syscall=running sigblk=0000000000000004`),
		title:   "hang: VM thread waiting for safepoint",
		culprit: "spinner",
	}, {
		name:    "a Java thread named in the dump",
		dump:    []byte("Full thread dump OpenJDK 64-Bit Server VM (25.0.3+9-LTS mixed mode):\n\n\"the-real-name\" #20 [300] prio=5 os_prio=0 cpu=1.00ms elapsed=1.00s tid=0x00007f nid=300 runnable  [0x00007f]\n   java.lang.Thread.State: RUNNABLE\n\tat A.b(Native Method)\n\nJNI global refs: 3, weak refs: 0\n"),
		snap:    tasks(`300 "the-real-name-i" S futex_do_wait syscall=futex sigblk=0000000004000004 stack=libc.so.6:malloc`),
		title:   "hang: deadlock in malloc from signal handler",
		culprit: "the-real-name",
	}, {
		name:  "a complete dump and nothing stuck",
		dump:  []byte("Full thread dump X:\n\n\"main\" #1 prio=5 os_prio=0 tid=0x1 nid=0x10 runnable [0x2]\n   java.lang.Thread.State: RUNNABLE\n\nJNI global refs: 3, weak refs: 0\n"),
		title: "hang: unclassified",
	}, {
		name:  "nothing at all",
		title: "hang: no thread dump",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Parse(tt.dump, tt.snap)
			checkInvariants(t, r)
			assert.Equal(t, tt.title, r.Title)
			assert.Equal(t, tt.culprit, r.Culprit)
		})
	}
}

func TestDumpFields(t *testing.T) {
	dump, err := os.ReadFile(filepath.Join("testdata/dumps/001", dumpFile))
	if err != nil {
		t.Fatal(err)
	}
	r := Parse(dump, nil)
	assert.True(t, r.DumpComplete)
	assert.Positive(t, r.JNIGlobalRefs)
	var locker *Thread
	for i := range r.Threads {
		if r.Threads[i].Name == "locker-a" {
			locker = &r.Threads[i]
		}
	}
	if assert.NotNil(t, locker) {
		assert.Equal(t, "BLOCKED (on object monitor)", locker.JavaState)
		assert.Positive(t, locker.Number)
		assert.Positive(t, locker.NID)
		assert.NotEmpty(t, locker.Frames)
		assert.Contains(t, strings.Join(locker.Locks, "\n"), "waiting to lock <ADDR>")
	}
	assert.Equal(t, []Deadlock{{Threads: []string{"locker-a", "locker-b"}, Kind: "monitor"}}, r.Deadlocks)
}
