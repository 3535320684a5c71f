package hang

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSnapshotRoundTrip(t *testing.T) {
	s := &Snapshot{PID: 42, Samples: 5, Tasks: []Task{
		{TID: 42, Name: "java", State: "S", Wchan: "futex_do_wait", Syscall: "futex", Stack: []string{"libc.so.6:malloc", "libx.so+0x10"}},
		{TID: 43, Name: `VM "Thread" 1`, State: "R", Syscall: "running", SigBlk: 1 << 26},
	}}
	text := s.String()
	assert.Contains(t, text, `43 "VM \"Thread\" 1" R - syscall=running sigblk=0000000004000000`)
	assert.Equal(t, s, ParseSnapshot([]byte(text)))
	assert.True(t, s.Tasks[1].Blocks(int(syscall.SIGPROF)))
	assert.False(t, s.Tasks[0].Blocks(int(syscall.SIGPROF)))
}

func TestParseSnapshotSkipsJunk(t *testing.T) {
	s := ParseSnapshot([]byte("# comment\nnot a task\n12 unquoted S x\n13 \"ok\" S - future=1 sigblk=zz\n14 \"short\"\n"))
	require.Len(t, s.Tasks, 1)
	assert.Equal(t, Task{TID: 13, Name: "ok", State: "S"}, s.Tasks[0])
	assert.Empty(t, ParseSnapshot(nil).Tasks)
}

// TakeSnapshot on this test process: a thread parked in a futex is found with its stack.
func TestTakeSnapshotOfSelf(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	release := make(chan struct{})
	go func() { <-release }()
	defer close(release)
	time.Sleep(10 * time.Millisecond)
	text, err := TakeSnapshot(os.Getpid())
	require.NoError(t, err)
	s := ParseSnapshot([]byte(text))
	assert.Equal(t, os.Getpid(), s.PID)
	require.NotEmpty(t, s.Tasks)
	var futexes, withStack int
	for _, task := range s.Tasks {
		assert.NotEmpty(t, task.Name)
		assert.NotEmpty(t, task.State)
		if task.Syscall == "futex" {
			futexes++
		}
		if len(task.Stack) > 0 {
			withStack++
		}
	}
	assert.Positive(t, futexes, "idle Go threads sleep in futex:\n%s", text)
	assert.Positive(t, withStack, "blocked threads have a scanned stack:\n%s", text)
	_, err = TakeSnapshot(1 << 30)
	assert.Error(t, err)
}

func TestDemangle(t *testing.T) {
	for in, want := range map[string]string{
		"_ZN20SafepointSynchronize5beginEv":                          "SafepointSynchronize::begin",
		"_ZNK5frame6senderEP11RegisterMap":                           "frame::sender",
		"_ZL19thread_native_entryP6Thread":                           "_ZL19thread_native_entryP6Thread",
		"_Z13jio_vsnprintfPcmPKcP13__va_list_tag":                    "jio_vsnprintf",
		"_ZN14AccessInternal19PostRuntimeDispatchIN20G1BarrierSetEE": "_ZN14AccessInternal19PostRuntimeDispatchIN20G1BarrierSetEE",
		"malloc": "malloc",
		"_Z9":    "_Z9",
	} {
		assert.Equal(t, want, demangle(in), in)
	}
}

func TestStatState(t *testing.T) {
	assert.Equal(t, "S", statState("12 (a (b) c) S 1 2 3"))
	assert.Equal(t, "", statState("garbage"))
	name, sp, pc := syscallOf("202 0x1 0x2 0x3 0x4 0x5 0x6 0x7ffc 0x7f01\n")
	assert.Equal(t, "futex", name)
	assert.Equal(t, uint64(0x7ffc), sp)
	assert.Equal(t, uint64(0x7f01), pc)
	name, _, _ = syscallOf("running\n")
	assert.Equal(t, "running", name)
	name, sp, _ = syscallOf("-1 0x10 0x20")
	assert.Equal(t, "-", name)
	assert.Equal(t, uint64(0x10), sp)
}

// CodeFrame names a pc of a live process as an hs_err log would, so a crash title can be
// taken from it: here where a sleeping process sits in libc (its syscall pc), and an address
// mapped to no file.
func TestCodeFrameOfASleeper(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	require.NoError(t, cmd.Start())
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	var pc uint64
	for range 100 {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/syscall", cmd.Process.Pid))
		if f := strings.Fields(string(b)); len(f) == 9 {
			pc, _ = strconv.ParseUint(strings.TrimPrefix(f[8], "0x"), 16, 64)
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	require.NotZero(t, pc, "sleep never blocked in a system call")
	assert.Regexp(t, `^C  \[libc\.so\.6\+0x[0-9a-f]+\]  \S*nanosleep\S*$`, CodeFrame(cmd.Process.Pid, pc))
	assert.Equal(t, "", CodeFrame(cmd.Process.Pid, 8))
}
