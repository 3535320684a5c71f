#!/usr/bin/env bash
# Regenerates the golden hs_err logs in hserr/ by crashing real JVMs on purpose, then asks the
# golden test to write their TITLE/ALT/CORRUPTED headers:
#
#   harness/crash/testdata/gen.sh            # all cases
#   harness/crash/testdata/gen.sh 007 021    # only these numbers
#
# Needs gcc, JDK 17 and JDK 25 (override with J17=/path J25=/path) and, for the agent and
# plugin cases, the agent built by `make` (bin/libwalkfuzz.so; cases are skipped without it).
# Sources beside this script: Crash.java (one mode per way to die), crashlib.c (its JNI half:
# NULL writes, traps, a SIGPROF handler named like the agent's that faults or hands
# AsyncGetCallTrace a wild ucontext) and rawfp.c (a walker plugin that reads frame pointers
# without safe_read). Crashes that depend on timing (SIGPROF, plugin) retry a few times.
#
# Observed and not kept as a case: abort() from a JNI method kills the JVM with SIGABRT and
# no hs_err log (HotSpot installs no SIGABRT handler), on both JDKs; gen.sh checks that this
# still holds, since the runner titles it "killed by SIGABRT without an hs_err log".
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
J17=${J17:-/usr/lib/jvm/java-17-openjdk-amd64}
J25=${J25:-/usr/lib/jvm/temurin-25-jdk-amd64}
AGENT=${AGENT:-$root/bin/libwalkfuzz.so}
out=$here/hserr
work=$(mktemp -d /tmp/wf-hserr.XXXXXX)
trap 'rm -rf "$work"' EXIT

cflags=(-O2 -g -fPIC -shared -fno-omit-frame-pointer -fno-optimize-sibling-calls -I"$J17/include" -I"$J17/include/linux")
gcc "${cflags[@]}" -o "$work/libwfcrash.so" "$here/crashlib.c" -ldl -lrt
gcc "${cflags[@]}" -I"$root/walkers/include" -o "$work/libwfrawfp.so" "$here/rawfp.c"
"$J17/bin/javac" --release 17 -nowarn -d "$work" "$here/Crash.java" 2>/dev/null

want=("$@")
wanted() { [[ ${#want[@]} -eq 0 ]] || [[ " ${want[*]} " == *" $1 "* ]]; }
jdk() { case $1 in 17) echo "$J17" ;; 25) echo "$J25" ;; esac; }

# run NUM JDK MODE [JVM FLAGS...]: run Crash MODE until it leaves an hs_err log, keep it as NUM.
run() {
	local num=$1 v=$2 mode=$3; shift 3
	wanted "$num" || return 0
	local java dir log try
	java=$(jdk "$v")/bin/java
	for try in 1 2 3; do
		dir=$work/$num.$try; mkdir -p "$dir"
		timeout 120 "$java" -Xmx64m -XX:-CreateCoredumpOnCrash "-XX:ErrorFile=$dir/hs_err_pid%p.log" \
			"-Djava.library.path=$work" "$@" -cp "$work" Crash "$mode" "$dir/mapped.bin" >"$dir/out.txt" 2>&1 || true
		log=$(ls "$dir"/hs_err_pid*.log 2>/dev/null | head -1) || true
		if [[ -n $log ]]; then
			keep "$num" "$log" "gen.sh: Crash $mode on JDK $v${note:+ under the agent with $note}"
			return 0
		fi
	done
	echo "gen.sh: $num (Crash $mode on JDK $v) left no hs_err log; output:" >&2
	cat "$dir/out.txt" >&2
	return 1
}

# agent NUM JDK KEY=VALUE...: run Crash spin under the real agent with these config lines.
agent() {
	local num=$1 v=$2; shift 2
	wanted "$num" || return 0
	if [[ ! -f $AGENT ]]; then
		echo "gen.sh: skipping $num: no agent at $AGENT (run make)" >&2
		return 0
	fi
	local dir=$work/$num
	mkdir -p "$dir"
	{ echo "log=$dir/samples.bin"; echo "methods=$dir/methods.tsv"; echo "codes=$dir/codes.tsv"
	  echo "mode=cpu"; echo "interval_ns=100000"; printf '%s\n' "$@"; } >"$dir/agent.conf"
	local note="$*" # run() names the config in the log's SOURCE line
	note=${note//$work\//}
	run "$num" "$v" spin "-agentpath:$AGENT=config=$dir/agent.conf"
}

# keep NUM FILE SOURCE: store a log with a SOURCE header; the golden test fills in the rest.
keep() {
	mkdir -p "$out"
	{ echo "SOURCE: $3"; echo; cat "$2"; } >"$out/$1"
	echo "gen.sh: $1 <- $3 ($(wc -c <"$2") bytes)"
}

# derive NUM FROM SOURCE COMMAND...: a damaged copy of golden log FROM (its log part piped
# through COMMAND), for the corrupted and partial classes.
derive() {
	local num=$1 from=$2 src=$3; shift 3
	wanted "$num" || return 0
	sed '1,/^$/d' "$out/$from" | "$@" >"$work/derived" || true
	keep "$num" "$work/derived" "$src"
}

crashlib="-agentpath:$work/libwfcrash.so" # its Agent_OnLoad enables ClassLoad events, without which ASGCT returns -1 at once

run 001 17 unsafe-put
run 002 25 unsafe-put
run 003 17 unsafe-get
run 004 25 unsafe-get
run 005 17 jni-null
run 006 25 jni-null
run 007 17 asgct-uc "$crashlib"
run 008 25 asgct-uc "$crashlib"
run 009 17 prof-fault
run 010 25 prof-fault
run 011 17 sigfpe
run 012 25 sigill
run 013 17 sigbus
run 014 25 call-null
run 015 17 throw -XX:+UnlockDiagnosticVMOptions -XX:AbortVMOnException=java.lang.IllegalStateException
run 016 25 throw -XX:+UnlockDiagnosticVMOptions -XX:AbortVMOnException=java.lang.IllegalStateException
run 017 17 oom -XX:+CrashOnOutOfMemoryError
run 018 25 oom -XX:+CrashOnOutOfMemoryError
run 019 17 heap -XX:+UnlockDiagnosticVMOptions -XX:+VerifyBeforeGC
run 020 25 heap -XX:+UnlockDiagnosticVMOptions -XX:+VerifyBeforeGC
agent 021 17 walkers=asgct inject=segv@2000
agent 022 25 walkers=asgct inject=segv@2000
agent 023 17 "walkers=plugin:$work/libwfrawfp.so"
agent 024 25 "walkers=plugin:$work/libwfrawfp.so"

derive 025 001 "gen.sh: 001 cut in the middle of its header" head -c 333
derive 026 008 "gen.sh: 008 cut before its native frames" sed '/^Native frames/,$d'
derive 027 007 "gen.sh: 007 cut after two native frames" sed '/^Native frames/{n;n;q}'
derive 028 005 "gen.sh: 005 without its frames (problematic frame line and stack sections removed)" \
	sed '/^# Problematic frame/,/^# [CVJjv] /d;/^Native frames/,/^$/d;/^Java frames/,/^$/d'
if wanted 029; then
	head -c 3000 /dev/urandom >"$work/random"
	keep 029 "$work/random" "gen.sh: 3000 random bytes"
fi
if wanted 030; then
	"$J17/bin/java" -cp "$work" Crash no-such-mode >"$work/exception.txt" 2>&1 || true
	keep 030 "$work/exception.txt" "gen.sh: a Java exception on stderr, not an hs_err log"
fi
derive 031 007 "gen.sh: 007 without its top native frame (as if os::fetch_frame_from_context were inlined into AsyncGetCallTrace)" \
	sed '/^Native frames/{n;d}'

for v in 17 25; do
	mkdir -p "$work/abort-$v"
	("$(jdk $v)/bin/java" -XX:-CreateCoredumpOnCrash "-XX:ErrorFile=$work/abort-$v/hs_err_pid%p.log" \
		"-Djava.library.path=$work" -cp "$work" Crash abort >/dev/null 2>&1 || true) 2>/dev/null
	if ls "$work/abort-$v"/hs_err* >/dev/null 2>&1; then
		echo "gen.sh: note: abort() on JDK $v now leaves an hs_err log: consider a golden case" >&2
	fi
done

cd "$root" && go test ./harness/crash -run TestGolden -update >/dev/null
echo "gen.sh: headers updated; review with git diff harness/crash/testdata/hserr"
