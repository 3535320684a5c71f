#!/bin/sh
# Builds and runs the AsgctStaleRbp reproducer without jtreg.
#   run.sh JAVA_HOME [SECONDS=10]
# Exit 1: the finding shows (at least 10 walks, 1% or more, in an interpreted method's entry
# reached from compiled code returned a trace without the compiled caller as a success, none
# of the control's without its interpreted caller); 0: it does not (100 walks there or more);
# 2: cannot build or run, too few walks there to judge, or the control lost its caller too;
# 3: the JVM failed otherwise.
# A runtime image without javac or include/ (a jlink'd JDK, say) runs what BUILD_JDK builds:
#   BUILD_JDK=/path/to/jdk-17 run.sh /path/to/runtime-11
jdk=${1:-${JAVA_HOME:-}}
secs=${2:-10}
here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD_JDK:-$jdk}
if [ -z "$jdk" ] || [ ! -x "$jdk/bin/java" ] || [ ! -x "$build/bin/javac" ] || [ ! -f "$build/include/jvmti.h" ]; then
    echo "run.sh: give a JDK home with bin/javac and include/jvmti.h (or a runtime and BUILD_JDK=a JDK that has them): run.sh /path/to/jdk [seconds]" >&2
    exit 2
fi
work=$(mktemp -d) || exit 2
trap 'rm -rf "$work"' EXIT
gcc -O2 -g -fPIC -shared -Wall -I"$build/include" -I"$build/include/linux" \
    -o "$work/libAsgctStaleRbp.so" "$here/libAsgctStaleRbp.c" -ldl -lpthread || exit 2
"$build/bin/javac" --release 11 -d "$work" "$here/AsgctStaleRbp.java" || exit 2
# C1 only (its code leaves rbp alone), compiled before the signals start (-Xbatch); outer, outer2, leaf, leaf2 and mid2
# stay interpreted, mid is compiled, nothing is inlined: mid reaches leaf through the c2i
# adapter. No -XX:+PreserveFramePointer (the default): compiled code keeps no frame pointer.
"$jdk/bin/java" -agentpath:"$work/libAsgctStaleRbp.so" -Djava.library.path="$work" \
    -XX:TieredStopAtLevel=1 -Xbatch -XX:CompileCommand=quiet \
    '-XX:CompileCommand=exclude,AsgctStaleRbp::leaf*' '-XX:CompileCommand=exclude,AsgctStaleRbp::outer*' \
    '-XX:CompileCommand=exclude,AsgctStaleRbp::mid2' '-XX:CompileCommand=dontinline,AsgctStaleRbp::*' \
    -cp "$work" AsgctStaleRbp "$secs" >"$work/out.txt" 2>&1
rc=$?
grep -v '^WARNING: ' "$work/out.txt" # JDK 24+ warns about System.loadLibrary
case $rc in 0|1|2) exit $rc ;; *) echo "java exited $rc" >&2; exit 3 ;; esac
