package crash

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hsErr builds a minimal log in HotSpot's layout around a header tail and native frames,
// for cases no release JDK on this machine can produce (fastdebug asserts, native OOM,
// crashes inside the vmstructs walker). The golden files hold the real logs.
func hsErr(header string, frames ...string) []byte {
	var b strings.Builder
	b.WriteString("#\n# A fatal error has been detected by the Java Runtime Environment:\n#\n")
	b.WriteString(header)
	b.WriteString("#\n# JRE version: OpenJDK Runtime Environment (25.0.3+9) (build 25.0.3+9-fastdebug)\n")
	b.WriteString("# Java VM: OpenJDK 64-Bit Server VM (25.0.3+9-fastdebug, mixed mode, linux-amd64)\n#\n\n")
	b.WriteString("---------------  T H R E A D  ---------------\n\n")
	b.WriteString(`Current thread (0x00007f0001):  JavaThread "worker-1" [_thread_in_Java, id=4242, stack(0x1,0x2) (1024K)]` + "\n\n")
	b.WriteString("Native frames: (J=compiled Java code, j=interpreted, Vv=VM code, C=native code)\n")
	for _, f := range frames {
		b.WriteString(f + "\n")
	}
	b.WriteString("\n")
	return []byte(b.String())
}

func TestTitles(t *testing.T) {
	tests := []struct {
		name  string
		log   []byte
		title string
		alts  []string
		entry string
	}{{
		name: "fastdebug assert under ASGCT",
		log: hsErr("#  Internal Error (/jdk/src/hotspot/share/runtime/frame.cpp:1342), pid=7, tid=8\n"+
			"#  assert(is_interpreted_frame()) failed: interpreted frame expected at 0x00007f12345678\n",
			"V  [libjvm.so+0x1d2e3f]  VMError::report_and_die(int, char const*, char const*, __va_list_tag*, Thread*, unsigned char*, void const*, void const*, char const*, int, unsigned long)+0x1ab  (vmError.cpp:1897)",
			"V  [libjvm.so+0x1c1e2f]  report_vm_error(char const*, int, char const*, char const*, ...)+0x10f  (debug.cpp:195)",
			"V  [libjvm.so+0x12ab3c]  frame::interpreter_frame_method() const+0x4c  (frame.cpp:1342)",
			"V  [libjvm.so+0x12ab3c]  frame::sender_for_interpreter_frame(RegisterMap*) const+0x4c  (frame_x86.cpp:412)",
			"V  [libjvm.so+0x99aa11]  AsyncGetCallTrace+0x1f1  (forte.cpp:640)",
			"C  [libwalkfuzz.so+0x72f0]  asgct_walk+0x20",
			"C  [libwalkfuzz.so+0x57a0]  wf_handler+0x1e0",
			"C  [libc.so.6+0x3c050]"),
		title: "assert(is_interpreted_frame()) failed: interpreted frame expected at ADDR in frame.cpp via AsyncGetCallTrace",
		alts: []string{
			"assert(is_interpreted_frame()) failed: interpreted frame expected at ADDR in frame.cpp",
			"assert in frame::interpreter_frame_method via AsyncGetCallTrace",
			"assert in frame::interpreter_frame_method",
			"assert in frame::sender_for_interpreter_frame via AsyncGetCallTrace",
			"assert in frame::sender_for_interpreter_frame",
		},
		entry: "AsyncGetCallTrace",
	}, {
		name: "guarantee in an old 'Error:' header",
		log: hsErr("#  Internal Error (safepoint.cpp:325), pid=7, tid=8\n#  Error: guarantee(PageArmed == 0) failed: invariant\n",
			"V  [libjvm.so+0x8a1f00]  SafepointSynchronize::begin()+0x3c0",
			"V  [libjvm.so+0x9b0000]  VMThread::loop()+0x200"),
		title: "guarantee(PageArmed == 0) failed: invariant in safepoint.cpp",
		alts:  []string{"guarantee in SafepointSynchronize::begin", "guarantee in VMThread::loop"},
	}, {
		name: "native out of memory",
		log: hsErr("# There is insufficient memory for the Java Runtime Environment to continue.\n"+
			"# Native memory allocation (mmap) failed to map 65536 bytes for committing reserved memory.\n"+
			"# Possible reasons:\n#   The system is out of physical RAM or swap space\n#\n"+
			"#  Out of Memory Error (os_linux.cpp:2749), pid=7, tid=8\n",
			"V  [libjvm.so+0xc31445]  os::pd_commit_memory_or_exit(char*, unsigned long, bool, char const*)+0xf5"),
		title: "Native memory allocation (mmap) failed to map NUM bytes for committing reserved memory. in os_linux.cpp",
		alts:  []string{"out of memory in os::pd_commit_memory_or_exit"},
	}, {
		name: "vmstructs walker, templates and clones",
		log: hsErr("#  SIGSEGV (0xb) at pc=0x00007f0000001000, pid=7, tid=8\n",
			"C  [libc.so.6+0x1a2b3c]  __memmove_avx_unaligned_erms+0x3c",
			"C  [libwalkfuzz.so+0xa290]  walk_from.constprop.0+0x1a2",
			"C  [libwalkfuzz.so+0xb470]  vs_walk+0x30",
			"C  [libwalkfuzz.so+0x57a0]  wf_handler+0x1e0"),
		title: "SIGSEGV in walk_from via vmstructs walker",
		alts:  []string{"SIGSEGV in walk_from", "SIGSEGV in vs_walk"},
		entry: "vmstructs walker",
	}, {
		name: "C++ templates and unsymbolised libjvm frames",
		log: hsErr("#  SIGSEGV (0xb) at pc=0x00007f0000001000, pid=7, tid=8\n",
			"V  [libjvm.so+0x10]",
			"V  [libjvm.so+0x5a1b2c]  void OopOopIterateDispatch<G1CMOopClosure>::Table::oop_oop_iterate<InstanceKlass, narrowOop>(G1CMOopClosure*, oopDesc*, Klass*) [clone .isra.0]+0x8c",
			"V  [libjvm.so+0x20]"),
		title: "SIGSEGV in OopOopIterateDispatch::Table::oop_oop_iterate",
		alts:  []string{},
	}, {
		name: "compiled lambda with a hidden class name",
		log: hsErr("#  SIGSEGV (0xb) at pc=0x00007f0000001000, pid=7, tid=8\n",
			"J 1234 c2 app.Main$$Lambda$123/0x0000000800c03000.run()V app@1.0 (10 bytes) @ 0x00007f1 [0x00007f0+0x0000000000000010]",
			"J 77% c1 java.lang.invoke.LambdaForm$MH/0x0000000800c04400.invokeExact_MT(Ljava/lang/Object;)V java.base@25 (20 bytes) @ 0x1 [0x0+0x1]"),
		title: "SIGSEGV in app.Main$$Lambda.run",
		alts:  []string{"SIGSEGV in java.lang.invoke.LambdaForm$MH.invokeExact_MT"},
	}, {
		name: "agent fault wrapper and HotSpot's handler are skipped",
		log: hsErr("#  SIGSEGV (0xb) at pc=0x00007f0000001000, pid=7, tid=8\n",
			"V  [libjvm.so+0x1]  JVM_handle_linux_signal+0x1b0",
			"C  [libwalkfuzz.so+0x5520]  chain+0x40",
			"C  [libwalkfuzz.so+0x5560]  on_fault+0x30",
			"C  [libc.so.6+0x3c050]",
			"C  [libjvmtiplugin.so+0x1100]  my_walk+0x10",
			"C  [libwalkfuzz.so+0x57a0]  wf_handler+0x1e0"),
		title: "SIGSEGV in my_walk via plugin libjvmtiplugin.so",
		alts:  []string{"SIGSEGV in my_walk", "SIGSEGV in wf_handler"},
		entry: "plugin libjvmtiplugin.so",
	}, {
		name: "stripped JNI library named by its file",
		log: hsErr("#  SIGSEGV (0xb) at pc=0x00007f0000001000, pid=7, tid=8\n",
			"C  [libnative.so.1+0x1100]",
			"j  app.Native.call()V+0"),
		title: "SIGSEGV in libnative.so.1",
		alts:  []string{"SIGSEGV in app.Native.call"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Parse(tt.log)
			checkInvariants(t, r)
			assert.Equal(t, tt.title, r.Title)
			assert.Equal(t, tt.alts, r.AltTitles)
			assert.Equal(t, tt.entry, r.WalkerEntry)
		})
	}
}

func TestFields(t *testing.T) {
	data, err := os.ReadFile("testdata/hserr/007")
	require.NoError(t, err)
	_, _, log := splitGolden(data)
	r := Parse(log)
	assert.Equal(t, "SIGSEGV", r.Signal)
	assert.Equal(t, "SEGV_MAPERR", r.SiCode)
	assert.Equal(t, "0x00000000dead00a8", r.Address)
	assert.Equal(t, "V  [libjvm.so+0xc31445]  os::fetch_frame_from_context(void const*, long**, long**)+0x5", r.ProblematicFrame)
	assert.Equal(t, `JavaThread "main"`, r.Thread)
	assert.Equal(t, "main", r.ThreadName)
	assert.Equal(t, "_thread_in_Java", r.ThreadState)
	assert.NotZero(t, r.ThreadID)
	assert.Equal(t, "17.0.15+6", r.JDKVersion)
	assert.Equal(t, "17.0.15+6-Debian-1deb12u1", r.JDKBuild)
	require.NotEmpty(t, r.VMArgs)
	assert.Contains(t, r.VMArgs, "-Xmx64m")
	require.Len(t, r.AgentPaths, 1)
	assert.True(t, strings.HasSuffix(r.AgentPaths[0], "/libwfcrash.so"), r.AgentPaths[0])
	require.GreaterOrEqual(t, len(r.NativeFrames), 3)
	f := r.NativeFrames[1]
	assert.Equal(t, Frame{Kind: "V", Lib: "libjvm.so", Offset: 0x6c2125, Symbol: "AsyncGetCallTrace", Func: "AsyncGetCallTrace",
		Raw: "V  [libjvm.so+0x6c2125]  AsyncGetCallTrace+0x185"}, f)
	assert.Nil(t, r.InternalError)
	assert.Equal(t, "AsyncGetCallTrace", r.WalkerEntry)
}

func TestNormaliseFunc(t *testing.T) {
	native := map[string]string{
		"void OopOopIterateDispatch<G1CMOopClosure>::Table::oop_oop_iterate<InstanceKlass, narrowOop>(G1CMOopClosure*, oopDesc*, Klass*)": "OopOopIterateDispatch::Table::oop_oop_iterate",
		"JavaCalls::call_helper(JavaValue*, methodHandle const&, JavaCallArguments*, JavaThread*)":                                        "JavaCalls::call_helper",
		"MemAllocator::allocate() const":                                                "MemAllocator::allocate",
		"jni_invoke_static(JNIEnv_*, JavaValue*, _jobject*) [clone .constprop.1]":       "jni_invoke_static",
		"Exceptions::debug_check_abort(char const*, char const*)  (exceptions.cpp:574)": "Exceptions::debug_check_abort",
		"need.isra.0":                        "need",
		"walk_from.constprop.0":              "walk_from",
		"(anonymous namespace)::helper(int)": "anonymous::helper",
		"operator<<(outputStream&, int)":     "operator<<",
	}
	for sym, want := range native {
		assert.Equal(t, want, normaliseFunc("V", sym), sym)
	}
	java := map[string]string{
		"Crash.main([Ljava/lang/String;)V":          "Crash.main",
		"Crash$$Lambda$1+0x00007f77c4000a08.run()V": "Crash$$Lambda.run",
		"Crash$$Lambda+0x0000000019040210.run()V":   "Crash$$Lambda.run",
		"jdk.proxy2.$Proxy12.invoke()V":             "jdk.proxy.$Proxy.invoke",
		"jdk.internal.reflect.GeneratedMethodAccessor42.invoke(Ljava/lang/Object;)Ljava/lang/Object;": "jdk.internal.reflect.GeneratedMethodAccessor.invoke",
	}
	for sym, want := range java {
		assert.Equal(t, want, normaliseFunc("j", sym), sym)
	}
}

func TestFindLogs(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	for i, name := range []string{"hs_err_pid9.log", "hs_err_pid10.log", "stdout.txt", "replay_pid9.log"} {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte("x"), 0o644))
		require.NoError(t, os.Chtimes(p, now, now.Add(time.Duration(i)*time.Second)))
	}
	assert.Equal(t, []string{filepath.Join(dir, "hs_err_pid9.log"), filepath.Join(dir, "hs_err_pid10.log")}, FindLogs(dir))
	assert.Empty(t, FindLogs(filepath.Join(dir, "missing")))
}

func TestBucketIsStable(t *testing.T) {
	assert.Equal(t, BucketOf("SIGSEGV in x"), BucketOf("SIGSEGV in x"))
	assert.NotEqual(t, BucketOf("SIGSEGV in x"), BucketOf("SIGSEGV in y"))
	assert.Len(t, BucketOf("corrupted"), 16)
}
