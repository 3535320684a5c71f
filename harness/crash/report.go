// Package crash turns a HotSpot hs_err log into a titled report whose title stays the same
// for the same bug across runs and JDK builds, and whose bucket is a hash of that title.
package crash

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"sort"
)

// Report is what an hs_err log says about one crash.
type Report struct {
	// Title names the bug: "SIGSEGV in frame::sender via AsyncGetCallTrace", or "corrupted".
	Title string
	// AltTitles are other names the same bug may get in another run (without the walker
	// suffix, from the next frame down), for matching reports across JDK builds.
	AltTitles []string
	// Bucket is a short hash of Title.
	Bucket          string
	Corrupted       bool
	CorruptedReason string

	Signal  string // "SIGSEGV"; empty for an internal error
	SiCode  string // "SEGV_MAPERR"
	Address string // si_addr as printed
	PC      string // the faulting pc from the header

	ProblematicFrame string // the frame line under "# Problematic frame:", as printed

	Thread      string // the crashing thread's kind and name: `JavaThread "main"`, or "native thread"
	ThreadName  string // "main"
	ThreadState string // "_thread_in_native" (Java threads only)
	ThreadID    int    // the OS thread id

	NativeFrames []Frame // "Native frames:", innermost first (includes Java and stub frames)
	JavaFrames   []Frame // "Java frames:"

	JDKVersion string // "17.0.15+6"
	JDKBuild   string // "17.0.15+6-Debian-1deb12u1"
	VM         string // the "# Java VM:" line
	VMArgs     []string
	AgentPaths []string // the libraries of -agentpath: options, without their options

	InternalError *InternalError // set for "# Internal Error" and "# Out of Memory Error" logs

	// WalkerEntry names the stack walker the crash happened under, when one is on the stack:
	// "AsyncGetCallTrace", "vmstructs walker", "jvmti walker", "walkfuzz agent",
	// "plugin libx.so"; empty otherwise.
	WalkerEntry string

	stackLibs []string          // libraries of code addresses in the top of the crashing thread's stack
	libPaths  map[string]string // library file name -> its path, from the memory map
}

// Frame is one line of a native or Java stack section.
type Frame struct {
	// Kind is the line's prefix: C native, V VM, v VM stub, J compiled Java, j interpreted
	// Java, A AOT-compiled Java.
	Kind   string
	Lib    string // library of a C or V frame: "libjvm.so"
	Offset uint64 // offset into Lib
	Symbol string // as printed, without offset or source position
	Func   string // Symbol normalised for titles: "JavaCalls::call_helper", "Crash.main"
	Raw    string
}

// InternalError is the VM's own report of a failed check, a fatal error or exhausted memory.
type InternalError struct {
	File    string // "frame.cpp", without its directory
	Line    int
	Kind    string // "assert", "guarantee", "fatal error", "ShouldNotReachHere", "out of memory", "error"
	Message string // as printed: "guarantee(x) failed: msg"
}

// Parse reads an hs_err log (or output that contains one). It never fails: a log it cannot
// make sense of is Corrupted, titled "corrupted".
func Parse(data []byte) *Report { return ParseNamed(data, "") }

// ParseNamed is Parse with the faulting pc named by the harness from the live process's
// mappings ("C  [lib+0x..]  sym", see ParseScreen). A report whose own symbol lookup timed
// out (a fault in a handler that interrupted malloc: HotSpot's decoder needs malloc, and its
// step "printing problematic frame" gives up after 30 s) prints the frame as "lib+0x.." alone;
// the harness's name fills it, so the crash is titled by its function in every run.
func ParseNamed(data []byte, pcFrame string) *Report {
	r := &Report{}
	shape := parseLog(r, data)
	r.namePC(pcFrame)
	return r.titled(shape)
}

// ParseScreen reads the short report HotSpot prints on stdout before it writes its hs_err
// log: the '#' header alone. A crash whose reporting stalled leaves only this (a fault in a
// signal handler that interrupted malloc deadlocks the reporter's own first malloc, before the
// log is opened). pcFrame, when not empty, is the faulting pc named by the harness from the
// live process's mappings ("C  [lib+0x..]  sym"), for a header cut before its problematic frame.
func ParseScreen(data []byte, pcFrame string) *Report {
	r := &Report{}
	shape := parseLog(r, data)
	shape.headerComplete = shape.banner // the header is all there is
	if r.ProblematicFrame == "" {
		if _, ok := parseFrame(pcFrame); ok {
			r.ProblematicFrame = pcFrame
		}
	}
	r.namePC(pcFrame)
	return r.titled(shape)
}

// namePC gives the problematic frame, and the same frame at the top of the native stack, the
// symbol of pcFrame when the log printed them without one at the same library and offset.
func (r *Report) namePC(pcFrame string) {
	named, ok := parseFrame(pcFrame)
	if !ok || named.Symbol == "" || named.Lib == "" {
		return
	}
	unnamedAt := func(f Frame) bool {
		return f.Symbol == "" && f.Lib == named.Lib && f.Offset == named.Offset
	}
	if f, ok := parseFrame(r.ProblematicFrame); ok && unnamedAt(f) {
		r.ProblematicFrame = pcFrame
	}
	if len(r.NativeFrames) > 0 && unnamedAt(r.NativeFrames[0]) {
		r.NativeFrames[0] = named
	}
}

// titled names r from what the parser learned.
func (r *Report) titled(shape logShape) *Report {
	r.Title, r.AltTitles, r.CorruptedReason = title(r, shape)
	r.Corrupted = r.CorruptedReason != ""
	if r.Corrupted {
		r.Title, r.AltTitles = corruptedTitle, nil
	}
	r.Bucket = BucketOf(r.Title)
	return r
}

const corruptedTitle = "corrupted"

// BucketOf is the bucket of a title: the first 8 bytes of its SHA-256, in hex.
func BucketOf(title string) string {
	sum := sha256.Sum256([]byte(title))
	return hex.EncodeToString(sum[:8])
}

// FindLogs lists the hs_err logs in a run directory, oldest first (the first crash first).
func FindLogs(runDir string) []string {
	paths, _ := filepath.Glob(filepath.Join(runDir, "hs_err*.log"))
	mtime := func(p string) int64 {
		fi, err := os.Stat(p)
		if err != nil {
			return 0
		}
		return fi.ModTime().UnixNano()
	}
	sort.SliceStable(paths, func(i, j int) bool {
		ti, tj := mtime(paths[i]), mtime(paths[j])
		if ti != tj {
			return ti < tj
		}
		return paths[i] < paths[j]
	})
	return paths
}
