package classify

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/walkfuzz/walkfuzz/harness/methods"
)

// Roots decides which methods may sit at the bottom of a complete walk: every thread's
// first Java frame is one of these, so a walk ending anywhere else lost frames.
type Roots struct {
	keys  map[string]bool // pkg/Class.name(sig)
	names map[string]bool // pkg/Class.name, any signature
}

// vmEntries are methods the VM or the java launcher calls with no Java frame below them, so
// they end complete stacks although they are neither Thread.run nor main (seen as
// truncated:short on real runs before they were listed). Name keys: any signature.
var vmEntries = []string{
	"sun/launcher/LauncherHelper.checkAndLoadMain",   // launcher's JavaMain, through JNI
	"sun/launcher/LauncherHelper.makePlatformString", // likewise, before main() runs
	"sun/launcher/LauncherHelper.getApplicationClass",
	"sun/launcher/LauncherHelper.<clinit>",
	"jdk/jfr/internal/dcmd/AbstractDCmd.execute", // -XX:StartFlightRecording, run by the VM at start-up
	"java/lang/Thread.exit",                      // JavaThread::exit
	"java/lang/Thread.dispatchUncaughtException", // JavaThread::exit, uncaught exception
	"java/lang/Shutdown.shutdown",                // DestroyJavaVM after main returns
	"jdk/internal/misc/Signal.dispatch",          // the Signal Dispatcher thread
	"jdk/internal/vm/Continuation.enter",         // a virtual thread's stack starts here
	"jdk/internal/vm/Continuation.enterSpecial",
}

// VirtualThreadEntry reports whether m is where a virtual thread's stack starts
// (Continuation.enter, or enterSpecial below it): beneath it, on the same native stack, are
// the frames of the carrier the virtual thread is mounted on.
func VirtualThreadEntry(m *methods.Method) bool {
	return m != nil && m.Internal == "jdk/internal/vm/Continuation" && (m.Name == "enter" || m.Name == "enterSpecial")
}

// NewRoots returns the built-in roots plus extra ones, each an exact pkg/Class.name(sig)
// key or a pkg/Class.name prefix matching every signature. Dots in the class part are
// accepted too (pkg.Class.name).
func NewRoots(extra ...string) *Roots {
	r := &Roots{keys: map[string]bool{}, names: map[string]bool{}}
	for _, e := range append(vmEntries[:len(vmEntries):len(vmEntries)], extra...) {
		e = normalizeRoot(strings.TrimSpace(e))
		if e == "" {
			continue
		}
		if strings.Contains(e, "(") {
			r.keys[e] = true
		} else {
			r.names[e] = true
		}
	}
	return r
}

func normalizeRoot(e string) string {
	head, sig, hasSig := strings.Cut(e, "(")
	dot := strings.LastIndexByte(head, '.')
	if dot < 0 {
		return e
	}
	head = strings.ReplaceAll(head[:dot], ".", "/") + head[dot:]
	if hasSig {
		return head + "(" + sig
	}
	return head
}

// LoadRoots reads the extra roots a workload declared, one per line; blank lines and
// lines starting with # are ignored. A missing file means no extra roots.
func LoadRoots(path string) (*Roots, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return NewRoots(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("thread roots: %w", err)
	}
	defer f.Close()
	var extra []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" && !strings.HasPrefix(line, "#") {
			extra = append(extra, line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("thread roots %s: %w", path, err)
	}
	return NewRoots(extra...), nil
}

var builtin = NewRoots()

// IsRoot reports whether m can be a thread's bottom frame: Thread.run() or an override of
// it, a static main(String[]), a VM entry point, or a declared extra root. A nil *Roots has
// the built-in roots only.
func (r *Roots) IsRoot(m *methods.Method) bool {
	switch {
	case m.ThreadClass && !m.Static && m.Name == "run" && m.Sig == "()V":
		return true
	case m.IsMain():
		return true
	case r == nil:
		r = builtin
	}
	return r.keys[m.Key()] || r.names[m.NameKey()]
}

// IsRootIn is IsRoot with what only the run's method table knows: the static initializer of
// the main class is a root too. The java launcher asks JNI for main's method id before it
// calls main, which initializes the class, so the main thread runs Main.<clinit> with no
// Java frame below it (measured: 0.66-3.7% of the walks of short runs, all at start-up).
func (r *Roots) IsRootIn(m *methods.Method, t *methods.Table) bool {
	if m == nil {
		return false
	}
	return r.IsRoot(m) || (m.Static && m.Name == "<clinit>" && t.DeclaresMain(m.Internal))
}
