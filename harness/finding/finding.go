// Package finding titles a run's crash or hang from the files the JVM left in the run
// directory, and keeps the walks read last before it (the tail file).
package finding

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/walkfuzz/walkfuzz/harness/crash"
	"github.com/walkfuzz/walkfuzz/harness/hang"
	"github.com/walkfuzz/walkfuzz/harness/results"
)

// Files of a hang in the run directory: the JVM's own thread dump (SIGQUIT) and a /proc
// snapshot of its tasks, taken before the process is killed.
const (
	ThreadDump = "threaddump.txt"
	TaskSnap   = "tasks.txt"
	// The JVM's own output: HotSpot prints a crash's short report there before its hs_err log.
	Stdout = "stdout.txt"
	Stderr = "stderr.txt"
	// PCFrame is the faulting pc of a crash, named by the harness from the live process's
	// mappings while HotSpot reports it, in the hs_err frame format: the name for a report
	// that stalls or times out before it names its problematic frame.
	PCFrame = "crash_pc_frame.txt"
)

// screenBanner opens the short report HotSpot prints before its hs_err log.
var screenBanner = []byte("# A fatal error has been detected by the Java Runtime Environment")

// CrashWatch follows a running JVM's output for the start of a crash report, reading only
// what was appended since the last look.
type CrashWatch struct {
	dir   string
	off   map[string]int64
	begun bool
}

func NewCrashWatch(dir string) *CrashWatch {
	return &CrashWatch{dir: dir, off: map[string]int64{}}
}

// Begun reports whether the JVM has begun reporting a crash: an hs_err log exists, or its
// stdout or stderr has the report's banner.
func (w *CrashWatch) Begun() bool {
	if w.begun {
		return true
	}
	if len(crash.FindLogs(w.dir)) > 0 {
		w.begun = true
		return true
	}
	for _, name := range []string{Stdout, Stderr} {
		f, err := os.Open(filepath.Join(w.dir, name))
		if err != nil {
			continue
		}
		// Step back by the banner's length so a banner split across two looks is found.
		from := max(0, w.off[name]-int64(len(screenBanner)))
		f.Seek(from, io.SeekStart)
		b, _ := io.ReadAll(f)
		f.Close()
		w.off[name] = from + int64(len(b))
		if bytes.Contains(b, screenBanner) {
			w.begun = true
			return true
		}
	}
	return false
}

// Written is the size of everything a crash report writes to: stdout, stderr and the hs_err
// logs. A report that stops growing has stalled.
func (w *CrashWatch) Written() int64 {
	var n int64
	for _, p := range append(crash.FindLogs(w.dir), filepath.Join(w.dir, Stdout), filepath.Join(w.dir, Stderr)) {
		if fi, err := os.Stat(p); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// Crash titles the first hs_err log in dir, else the short report HotSpot printed on stdout
// or stderr when its reporting stalled before the log; nil when there is neither.
func Crash(dir string) *results.Finding {
	logs := crash.FindLogs(dir)
	if len(logs) == 0 {
		return screenCrash(dir)
	}
	data, _ := os.ReadFile(logs[0])
	pcFrame, _ := os.ReadFile(filepath.Join(dir, PCFrame))
	r := crash.ParseNamed(data, string(bytes.TrimSpace(pcFrame)))
	rel, _ := filepath.Rel(dir, logs[0])
	return &results.Finding{Title: r.Title, Bucket: r.Bucket, AltTitles: r.AltTitles, Log: rel, Corrupted: r.Corrupted}
}

func screenCrash(dir string) *results.Finding {
	pcFrame, _ := os.ReadFile(filepath.Join(dir, PCFrame))
	name, r := screenReport(dir, string(bytes.TrimSpace(pcFrame)))
	if r == nil {
		return nil
	}
	return &results.Finding{Title: r.Title, Bucket: r.Bucket, AltTitles: r.AltTitles, Log: name, Corrupted: r.Corrupted}
}

// screenReport parses the short crash report on the JVM's stdout, else its stderr, and names
// the file it was in; nil when neither has one.
func screenReport(dir, pcFrame string) (string, *crash.Report) {
	for _, name := range []string{Stdout, Stderr} {
		data, _ := os.ReadFile(filepath.Join(dir, name))
		if i := bytes.Index(data, screenBanner); i >= 0 {
			return name, crash.ParseScreen(data[i:], pcFrame)
		}
	}
	return "", nil
}

// Killed titles a JVM that died by a signal without writing an hs_err log.
func Killed(signal string) *results.Finding {
	title := "killed by " + signal + " without an hs_err log"
	return &results.Finding{Title: title, Bucket: crash.BucketOf(title)}
}

// Hang titles a hang from the thread dump and task snapshot in dir.
func Hang(dir string) *results.Finding {
	dump, _ := os.ReadFile(filepath.Join(dir, ThreadDump))
	snap, _ := os.ReadFile(filepath.Join(dir, TaskSnap))
	r := hang.Parse(dump, snap)
	return &results.Finding{Title: r.Title, Bucket: r.Bucket, AltTitles: r.AltTitles, Log: ThreadDump}
}

// ScreenPC is the faulting pc the short crash report on the JVM's stdout or stderr names
// ("#  SIGSEGV (0xb) at pc=0x..."), 0 when there is none.
func ScreenPC(dir string) uint64 {
	if _, r := screenReport(dir, ""); r != nil {
		if pc, err := strconv.ParseUint(strings.TrimPrefix(r.PC, "0x"), 16, 64); err == nil {
			return pc
		}
	}
	return 0
}

// CodeFrame names pc of live process pid as an hs_err log prints a native frame.
func CodeFrame(pid int, pc uint64) string { return hang.CodeFrame(pid, pc) }

// TakeSnapshot renders the /proc state of every task of pid, for Hang.
func TakeSnapshot(pid int) (string, error) { return hang.TakeSnapshot(pid) }
