package crash

import "regexp"

// Triage policy as data: adding a case is adding a row.

// frameRule matches a frame by library and normalised function name; a nil regexp matches
// anything. `^$` matches a frame without one (an unsymbolised frame, a bare pc).
type frameRule struct {
	lib, fn *regexp.Regexp
}

func (r frameRule) match(f Frame) bool {
	return (r.lib == nil || r.lib.MatchString(f.Lib)) && (r.fn == nil || r.fn.MatchString(f.Func))
}

func rule(lib, fn string) frameRule {
	var r frameRule
	if lib != "" {
		r.lib = regexp.MustCompile(lib)
	}
	if fn != "" {
		r.fn = regexp.MustCompile(fn)
	}
	return r
}

const (
	agentLib = `^libwalkfuzz\.so$`
	// Libraries of the JDK and the C runtime: never a walker plugin.
	systemLibs = `^(libjvm|libjava|libjli|libverify|libzip|libnio|libnet|libjimage|libmanagement\w*|libinstrument|` +
		`libattach|libawt\w*|libfontmanager|libjsound|libsunec|libextnet|libprefs|libsctp|libj2\w+|libdt_socket|` +
		`libjdwp|libsyslookup|libjsvml|libc|libm|libdl|libpthread|librt|libgcc_s|libstdc\+\+|libz|ld-linux[\w-]*)\.so`
)

// skipFrames are never the culprit: HotSpot's error reporting and signal dispatch, libc's
// abort path and signal trampoline, memory copies (the caller passed the bad pointer),
// Unsafe accessors (the caller passed the bad address), the agent's fault wrapper.
// os:: frames are skipped only on the error path and for allocation: an os:: helper that
// faults on its argument (os::fetch_frame_from_context given a wild ucontext) says what went
// wrong and stays in the title.
var skipFrames = []frameRule{
	rule("", `^VMError::`),
	rule("", `^report_(vm_error|fatal|vm_out_of_memory|java_out_of_memory|vm_status_error|should_not_reach_here|should_not_call|unimplemented|untested)$`),
	rule("", `^os::(abort|die|shutdown|exit|_exit|breakpoint|message_box|fork_and_exec|print\w*|platform_print_native_stack|signal\w*|malloc|realloc|free|Posix::\w+|Linux::chained_handler)$`),
	rule("", `^(JVM_handle_linux_signal|JVM_HANDLE_XXX_SIGNAL|signalHandler|javaSignalHandler|crash_handler|SR_handler|PosixSignals::\w+|NativeStackPrinter::\w+|print_native_stack)$`),
	rule("", `^(__restore_rt|raise|__GI_raise|abort|__GI_abort|__pthread_kill\w*|pthread_kill|__kernel_rt_sigreturn)$`),
	rule("", `^_?_?(memcpy|memmove|mempcpy|memset|memcmp|bcmp|strlen|strnlen|strcmp|strncmp|strchr|strrchr|strcpy|wmemset)(_\w+)?$`),
	rule("", `^(jdk\.internal\.misc|sun\.misc)\.Unsafe\.`),
	rule(agentLib, `^(on_fault|chain)$`),
	rule("", `^blob$`), // JDK 25 names some stripped-inlined report_* frames "blob"
	rule(`^libjvm\.so$`, `^$`),
	rule(`^(libc\.so|libpthread\.so)`, `^$`), // the signal trampoline is unsymbolised in libc
	rule(`^$`, `^$`),                         // a bare pc outside any library
}

// entryRule recognises a walker's entry on the stack. The first row that matches a frame,
// from the culprit down, names the walker in the title ("... via AsyncGetCallTrace").
type entryRule struct {
	name string // "%s" stands for the frame's library
	frameRule
	notLib *regexp.Regexp
	// fromAgent: the frame must have been called by the agent: the next frame down is in the
	// agent, or (for the innermost frame, which may have no frame of its own) agent code is
	// among the words at the top of the stack.
	fromAgent bool
}

var walkerEntries = []entryRule{
	{name: "AsyncGetCallTrace", frameRule: rule("", `^AsyncGetCallTrace$`)},
	// The shipping profilers, with the release the cache's folder names (%v: " 4.6").
	{name: "async-profiler%v", frameRule: rule(`^libasyncProfiler\.so$`, "")},
	{name: "ddprof%v", frameRule: rule(`^libjavaProfiler\.so$`, "")},
	{name: "vmstructs walker", frameRule: rule(agentLib, `^(vs_walk|walk_from|do_walk|emit_scopes|find_blob|find_pcdesc|plausible_caller|unwind_guess|interp_bci|method_id|valid_method|read_int)$`)},
	{name: "jvmti walker", frameRule: rule(agentLib, `^(jvmti_walk|emulated_walk|on_begin|on_frame|on_end|safepoint_main|serve)$`)},
	{name: "walkfuzz agent", frameRule: rule(agentLib, "")},
	{name: "walkfuzz agent", frameRule: rule("", `^wf_(handler|walk_\w+|inject_\w+)$`)},
	{name: "plugin %s", frameRule: rule(`.`, ""), notLib: regexp.MustCompile(systemLibs + `|` + agentLib), fromAgent: true},
}

// releaseDir is a release folder of scripts/fetch-profilers.sh's cache
// (.../profilers/async-profiler/4.6/libasyncProfiler.so): the %v of an entry's name.
var releaseDir = regexp.MustCompile(`/(\d+(?:\.\d+)+)/[^/]+$`)

var agentLibRe = regexp.MustCompile(agentLib)

// internalErrorKinds classify the line under "# Internal Error (file:line)".
var internalErrorKinds = []struct {
	re   *regexp.Regexp
	kind string
}{
	{regexp.MustCompile(`^(Error: )?assert\(`), "assert"},
	{regexp.MustCompile(`^(Error: )?guarantee\(`), "guarantee"},
	{regexp.MustCompile(`^fatal error`), "fatal error"},
	{regexp.MustCompile(`^(Error: )?ShouldNotReachHere`), "ShouldNotReachHere"},
	{regexp.MustCompile(`^(Error: )?ShouldNotCall`), "ShouldNotCall"},
	{regexp.MustCompile(`^(Error: )?Unimplemented`), "Unimplemented"},
	{regexp.MustCompile(`^Error: `), "error"},
}

type rewrite struct {
	re   *regexp.Regexp
	repl string
}

func rw(re, repl string) rewrite { return rewrite{regexp.MustCompile(re), repl} }

// nativeNames rewrite a C/C++ symbol into a name that is the same in every build; argument
// lists and template arguments are removed separately (they nest).
var nativeNames = []rewrite{
	rw(`\s+\([^()]*:\d+\)$`, ""), // source position, JDK 21+
	rw(` \[clone [^\]]*\]`, ""),
	rw(`\(anonymous namespace\)`, "anonymous"),
	rw(`\.(isra|part|constprop|cold|lto_priv|localalias)(\.\d+)*`, ""),
	rw(`\s+const$`, ""),
}

// javaNames rewrite a Java frame into Class.method, with generated class names made stable:
// lambdas and hidden classes carry a counter and an address that change from run to run.
var javaNames = []rewrite{
	rw(`\(.*$`, ""),
	rw(`\$\$Lambda(\$\d+)?`, "$$$$Lambda"),
	rw(`[+/]0x[0-9a-fA-F]+`, ""),
	rw(`\$Proxy\d+`, "$$Proxy"),
	rw(`\bjdk\.proxy\d+`, "jdk.proxy"),
	rw(`\b(Generated(?:Serialization)?(?:Method|Constructor)Accessor)\d+`, "$1"),
	rw(`\$\$(EnhancerBy\w+|FastClassBy\w+)\$\$[0-9a-f]+`, "$$$$$1"),
}

// messageNames rewrite an internal error message: addresses, sizes and ids differ per run,
// line numbers per build.
var messageNames = []rewrite{
	rw(`^(fatal error: Saw [\w.$]+)(: .*)?, aborting$`, "$1, aborting"), // -XX:AbortVMOnException; JDK 21+ adds the exception's message
	rw(`(?i)0x[0-9a-f]+`, "ADDR"),
	rw(`(\w+\.(?:cpp|hpp|c|h)):\d+`, "$1"),
	rw(`\b\d{4,}\b`, "NUM"),
	rw(`\s+`, " "),
}

// titleAddress catches any address left in a title, whatever produced it.
var titleAddress = rw(`(?i)0x[0-9a-f]+`, "ADDR")

// corruptions say why a log cannot be titled, in order.
var corruptions = []struct {
	reason string
	bad    func(r *Report, s logShape) bool
}{
	{"no fatal error banner: not an hs_err log", func(r *Report, s logShape) bool { return !s.banner }},
	{"truncated in the header", func(r *Report, s logShape) bool { return !s.headerComplete }},
	{"no signal or internal error in the header", func(r *Report, s logShape) bool {
		return r.Signal == "" && r.InternalError == nil
	}},
}
