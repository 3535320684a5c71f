#!/bin/sh
# Runs the ApEntryCaller reproducer under async-profiler's library, without jtreg.
#   run.sh JAVA_HOME LIB [SECONDS=5]
# LIB: libasyncProfiler.so (cstack=vm, cpu samples every 100 us, a JFR recording read with the
# JDK's own parser), the JVM with -XX:+PreserveFramePointer. Exit 1: more than 0.2% of the
# samples of the thread calling an interpreted method from compiled code put that method
# directly on the caller's caller while at most 0.02% of the twin thread's (a compiled callee)
# do; 0: not; 2: cannot build or run, no recording, too few samples, or the control disagrees;
# 3: the JVM or the reader failed otherwise.
# A runtime image without javac (a jlink'd JDK, say) runs what BUILD_JDK builds:
#   BUILD_JDK=/path/to/jdk-17 run.sh /path/to/runtime-11 LIB
jdk=${1:-${JAVA_HOME:-}}
lib=${2:-}
secs=${3:-5}
here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD_JDK:-$jdk}
if [ -z "$jdk" ] || [ ! -x "$jdk/bin/java" ] || [ ! -x "$build/bin/javac" ]; then
    echo "run.sh: give a JDK home with bin/javac (or a runtime and BUILD_JDK=a JDK that has it): run.sh /path/to/jdk LIB [seconds]" >&2
    exit 2
fi
case $lib in
*libasyncProfiler.so) opts=start,event=cpu,interval=100000,cstack=vm,jfr ;;
*) echo "run.sh: give async-profiler's library (libasyncProfiler.so) as the second argument" >&2; exit 2 ;;
esac
[ -f "$lib" ] || { echo "run.sh: no file $lib" >&2; exit 2; }
work=$(mktemp -d) || exit 2
trap 'rm -rf "$work"' EXIT
"$build/bin/javac" --release 11 -d "$work" "$here/ApEntryCaller.java" || exit 2
"$jdk/bin/java" -XX:+PreserveFramePointer -XX:CompileCommand=quiet -XX:CompileCommand=exclude,ApEntryCaller::interpreted \
    -XX:CompileCommand=exclude,ApEntryCaller::loop* -XX:CompileCommand=dontinline,ApEntryCaller::compiled \
    -agentpath:"$lib=$opts,file=$work/rec.jfr" -cp "$work" ApEntryCaller "$secs" >"$work/out.txt" 2>&1
rc=$?
if [ "$rc" -ne 0 ]; then
    echo "java exited $rc under the profiler:"; tail -5 "$work/out.txt"
    exit 3
fi
if [ ! -s "$work/rec.jfr" ]; then
    echo "the profiler wrote no recording:"; tail -5 "$work/out.txt"
    exit 2
fi
"$jdk/bin/java" -cp "$work" ApEntryCaller count "$work/rec.jfr"
rc=$?
case $rc in 0|1|2) exit $rc ;; *) echo "the JFR reader exited $rc" >&2; exit 3 ;; esac
