#!/bin/sh
# Runs the ApBreakStackRange reproducer under a given async-profiler library, without jtreg.
#   run.sh JAVA_HOME LIB [SECONDS=5]      (LIB: libasyncProfiler.so of the release to judge)
# The program runs for SECONDS under the profiler (cstack=vm, cpu samples every 100 us, JFR
# output); then the JDK's own JFR parser reads the recording. Exit 1: more than 1% of the
# samples with Java content end at a failure marker of the profiler's (break_stack_range in
# 4.6, unknown in 4.2 for the same walks); 0: not; 2: cannot build or run, the
# profiler wrote no recording, or too few samples to judge; 3: the JVM failed otherwise.
jdk=${1:-${JAVA_HOME:-}}
lib=${2:-}
secs=${3:-5}
here=$(cd "$(dirname "$0")" && pwd)
if [ -z "$jdk" ] || [ ! -x "$jdk/bin/javac" ]; then
    echo "run.sh: give a JDK home with bin/javac: run.sh /path/to/jdk /path/to/libasyncProfiler.so [seconds]" >&2
    exit 2
fi
if [ ! -f "$lib" ]; then
    echo "run.sh: give async-profiler's library (libasyncProfiler.so) as the second argument" >&2
    exit 2
fi
work=$(mktemp -d) || exit 2
trap 'rm -rf "$work"' EXIT
"$jdk/bin/javac" -d "$work" "$here/ApBreakStackRange.java" || exit 2
"$jdk/bin/java" -agentpath:"$lib=start,event=cpu,interval=100000,cstack=vm,jfr,file=$work/rec.jfr" \
    -cp "$work" ApBreakStackRange "$secs" >"$work/out.txt" 2>&1
rc=$?
if [ "$rc" -ne 0 ]; then
    echo "java exited $rc under the profiler:"; tail -5 "$work/out.txt"
    exit 3
fi
if [ ! -s "$work/rec.jfr" ]; then
    echo "the profiler wrote no recording (it may refuse cstack=vm on this JDK):"; tail -5 "$work/out.txt"
    exit 2
fi
"$jdk/bin/java" -cp "$work" ApBreakStackRange count "$work/rec.jfr"
rc=$?
case $rc in 0|1|2) exit $rc ;; *) echo "the JFR reader exited $rc" >&2; exit 3 ;; esac
