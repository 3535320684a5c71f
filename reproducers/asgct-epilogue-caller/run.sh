#!/bin/sh
# Builds and runs the AsgctEpilogueCaller reproducer without jtreg.
#   run.sh JAVA_HOME [SECONDS=10]
# Exit 1: the finding shows (at least 10 walks at a compiled epilogue's pop rbp named a wrong
# caller as a success); 0: it does not (100 walks there or more); 2: cannot build or run, or
# too few walks there to judge; 3: the JVM failed otherwise.
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
    -o "$work/libAsgctEpilogue.so" "$here/libAsgctEpilogue.c" -ldl -lpthread || exit 2
"$build/bin/javac" --release 11 -d "$work" "$here/AsgctEpilogueCaller.java" || exit 2
# No method inlined into another, so each topK's only caller is a frame of midK; C2 only
# (no tiered C1 versions with other frame shapes).
"$jdk/bin/java" -agentpath:"$work/libAsgctEpilogue.so" -Djava.library.path="$work" \
    -XX:-TieredCompilation -XX:CompileCommand=quiet '-XX:CompileCommand=dontinline,AsgctEpilogueCaller::*' \
    -cp "$work" AsgctEpilogueCaller "$secs" >"$work/out.txt" 2>&1
rc=$?
grep -v '^WARNING: ' "$work/out.txt" # JDK 24+ warns about System.loadLibrary
case $rc in 0|1|2) exit $rc ;; *) echo "java exited $rc" >&2; exit 3 ;; esac
