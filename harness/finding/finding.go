// Package finding titles a run's crash or hang from the files the JVM left in the run
// directory, and keeps the walks read last before it (the tail file).
package finding

import (
	"os"
	"path/filepath"

	"github.com/walkfuzz/walkfuzz/harness/crash"
	"github.com/walkfuzz/walkfuzz/harness/hang"
	"github.com/walkfuzz/walkfuzz/harness/results"
)

// Files of a hang in the run directory: the JVM's own thread dump (SIGQUIT) and a /proc
// snapshot of its tasks, taken before the process is killed.
const (
	ThreadDump = "threaddump.txt"
	TaskSnap   = "tasks.txt"
)

// Crashing reports whether the JVM wrote (or is writing) an hs_err log in dir.
func Crashing(dir string) bool { return len(crash.FindLogs(dir)) > 0 }

// Crash titles the first hs_err log in dir; nil when there is none.
func Crash(dir string) *results.Finding {
	logs := crash.FindLogs(dir)
	if len(logs) == 0 {
		return nil
	}
	data, _ := os.ReadFile(logs[0])
	r := crash.Parse(data)
	rel, _ := filepath.Rel(dir, logs[0])
	return &results.Finding{Title: r.Title, Bucket: r.Bucket, AltTitles: r.AltTitles, Log: rel, Corrupted: r.Corrupted}
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

// TakeSnapshot renders the /proc state of every task of pid, for Hang.
func TakeSnapshot(pid int) (string, error) { return hang.TakeSnapshot(pid) }
