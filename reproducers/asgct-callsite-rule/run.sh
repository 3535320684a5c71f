#!/bin/sh
# Builds and runs the AsgctCallSiteRule reproducer without jtreg.
#   run.sh JAVA_HOME [SECONDS=5]
# Exit 1: the finding shows (more than 10% of judged walks name another line); 0: it does not;
# 2: cannot build or run, or too few walks to judge; 3: the JVM failed otherwise.
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
    -o "$work/libAsgctCallSite.so" "$here/libAsgctCallSite.c" -ldl -lpthread || exit 2
"$jdk/bin/javac" -d "$work" "$here/AsgctCallSiteRule.java" || exit 2
"$jdk/bin/java" -agentpath:"$work/libAsgctCallSite.so" -Djava.library.path="$work" \
    -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints \
    -cp "$work" AsgctCallSiteRule "$secs"
rc=$?
case $rc in 0|1|2) exit $rc ;; *) echo "java exited $rc" >&2; exit 3 ;; esac
