#!/bin/sh
# Runs the ApRedefinedInterpreted reproducer under a given async-profiler library, without jtreg.
#   run.sh JAVA_HOME LIB [SECONDS=5]      (LIB: libasyncProfiler.so of the release to judge)
# The program runs interpreted (-Xint) for SECONDS under the profiler (cstack=vm, cpu samples
# every 100 us, JFR output) and redefines one of two twin classes once, 300 ms in; then the
# JDK's own JFR parser reads the recording. Exit 1: more than 10% of the samples in the
# redefined class's spin() do not show its outer() below (the frame running the replaced
# version), while at most 1% of the twin's do; 0: not; 2: cannot build or run, the profiler
# wrote no recording, too few samples, or the twin's samples disagree; 3: the JVM failed
# otherwise.
# A runtime image without javac and jar (a jlink'd JDK, say) runs what BUILD_JDK builds:
#   BUILD_JDK=/path/to/jdk-17 run.sh /path/to/runtime-11 LIB
jdk=${1:-${JAVA_HOME:-}}
lib=${2:-}
secs=${3:-5}
here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD_JDK:-$jdk}
if [ -z "$jdk" ] || [ ! -x "$jdk/bin/java" ] || [ ! -x "$build/bin/javac" ] || [ ! -x "$build/bin/jar" ]; then
    echo "run.sh: give a JDK home with bin/javac and bin/jar (or a runtime and BUILD_JDK=a JDK that has them): run.sh /path/to/jdk /path/to/libasyncProfiler.so [seconds]" >&2
    exit 2
fi
if [ ! -f "$lib" ]; then
    echo "run.sh: give async-profiler's library (libasyncProfiler.so) as the second argument" >&2
    exit 2
fi
work=$(mktemp -d) || exit 2
trap 'rm -rf "$work"' EXIT
mkdir "$work/classes" || exit 2
"$build/bin/javac" --release 11 -d "$work/classes" "$here/ApRedefinedInterpreted.java" || exit 2
printf 'Main-Class: ApRedefinedInterpreted\nLauncher-Agent-Class: ApRedefinedInterpreted\nCan-Redefine-Classes: true\n' >"$work/manifest.txt"
"$build/bin/jar" --create --file "$work/app.jar" --manifest "$work/manifest.txt" -C "$work/classes" . || exit 2
"$jdk/bin/java" -Xint -agentpath:"$lib=start,event=cpu,interval=100000,cstack=vm,jfr,file=$work/rec.jfr" \
    -jar "$work/app.jar" "$secs" >"$work/out.txt" 2>&1
rc=$?
if [ "$rc" -eq 2 ]; then
    tail -3 "$work/out.txt"
    exit 2
fi
if [ "$rc" -ne 0 ]; then
    echo "java exited $rc under the profiler:"; tail -5 "$work/out.txt"
    exit 3
fi
if [ ! -s "$work/rec.jfr" ]; then
    echo "the profiler wrote no recording (it may refuse cstack=vm on this JDK):"; tail -5 "$work/out.txt"
    exit 2
fi
"$jdk/bin/java" -cp "$work/app.jar" ApRedefinedInterpreted count "$work/rec.jfr"
rc=$?
case $rc in 0|1|2) exit $rc ;; *) echo "the JFR reader exited $rc" >&2; exit 3 ;; esac
