#!/bin/sh
# Runs the ApSegvMask reproducer under async-profiler's library, without jtreg.
#   run.sh JAVA_HOME LIB [SECONDS=5] [cstack=fp|vm|vmx|dwarf]
# LIB: libasyncProfiler.so (cpu samples every 100 us, cstack=CSTACK, a JFR recording read with
# the JDK's own parser). Exit 1: more than 1% of the samples of the thread whose implicit null
# checks fail lost the interrupted method (their Java frames begin at its caller) while at most
# 0.1% of the control thread's did, or that thread has no Java frame in more than 5% more of its
# samples than the control; 0: not;
# 2: cannot build or run, no recording, too few samples, or the control disagrees; 3: the JVM
# or the reader failed otherwise.
# A runtime image without javac (a jlink'd JDK, say) runs what BUILD_JDK builds:
#   BUILD_JDK=/path/to/jdk-17 run.sh /path/to/runtime-11 LIB
jdk=${1:-${JAVA_HOME:-}}
lib=${2:-}
secs=${3:-5}
cstack=${4:-fp}
cstack=${cstack#cstack=}
here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD_JDK:-$jdk}
if [ -z "$jdk" ] || [ ! -x "$jdk/bin/java" ] || [ ! -x "$build/bin/javac" ]; then
    echo "run.sh: give a JDK home with bin/javac (or a runtime and BUILD_JDK=a JDK that has it): run.sh /path/to/jdk LIB [seconds] [cstack]" >&2
    exit 2
fi
case $lib in
*libasyncProfiler.so) opts=start,event=cpu,interval=100000,cstack=$cstack,jfr ;;
*) echo "run.sh: give async-profiler's library (libasyncProfiler.so) as the second argument" >&2; exit 2 ;;
esac
[ -f "$lib" ] || { echo "run.sh: no file $lib" >&2; exit 2; }
work=$(mktemp -d) || exit 2
trap 'rm -rf "$work"' EXIT
"$build/bin/javac" --release 11 -d "$work" "$here/ApSegvMask.java" || exit 2
"$jdk/bin/java" -XX:CompileCommand=quiet -XX:CompileCommand=exclude,ApSegvMask::sum \
    -XX:CompileCommand=exclude,ApSegvMask::call '-XX:CompileCommand=exclude,ApSegvMask$*::area' \
    -agentpath:"$lib=$opts,file=$work/rec.jfr" -cp "$work" ApSegvMask "$secs" >"$work/out.txt" 2>&1
rc=$?
if [ "$rc" -ne 0 ]; then
    echo "java exited $rc under the profiler:"; tail -5 "$work/out.txt"
    exit 3
fi
if [ ! -s "$work/rec.jfr" ]; then
    echo "the profiler wrote no recording:"; tail -5 "$work/out.txt"
    exit 2
fi
"$jdk/bin/java" -cp "$work" ApSegvMask count "$work/rec.jfr"
rc=$?
case $rc in 0|1|2) exit $rc ;; *) echo "the JFR reader exited $rc" >&2; exit 3 ;; esac
