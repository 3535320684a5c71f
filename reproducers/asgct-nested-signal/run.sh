#!/bin/sh
# Builds and runs the AsgctNestedSignal reproducer without jtreg.
#   run.sh JAVA_HOME [SECONDS=5]
# Exit 1: the finding shows (more than 10% of nested walks wrong); 0: it does not;
# 2: cannot build or run, or too few nested walks to judge; 3: the JVM failed otherwise.
jdk=${1:-${JAVA_HOME:-}}
secs=${2:-5}
here=$(cd "$(dirname "$0")" && pwd)
if [ -z "$jdk" ] || [ ! -x "$jdk/bin/javac" ] || [ ! -f "$jdk/include/jvmti.h" ]; then
    echo "run.sh: give a JDK home with bin/javac and include/jvmti.h: run.sh /path/to/jdk [seconds]" >&2
    exit 2
fi
work=$(mktemp -d) || exit 2
trap 'rm -rf "$work"' EXIT
gcc -O2 -g -fPIC -shared -Wall -I"$jdk/include" -I"$jdk/include/linux" \
    -o "$work/libAsgctNested.so" "$here/libAsgctNested.c" -ldl -lpthread || exit 2
"$jdk/bin/javac" -d "$work" "$here/AsgctNestedSignal.java" || exit 2
"$jdk/bin/java" -agentpath:"$work/libAsgctNested.so" -Djava.library.path="$work" \
    -XX:CompileCommand=quiet '-XX:CompileCommand=dontinline,AsgctNestedSignal*::*' \
    -cp "$work" AsgctNestedSignal "$secs"
rc=$?
case $rc in 0|1|2) exit $rc ;; *) echo "java exited $rc" >&2; exit 3 ;; esac
