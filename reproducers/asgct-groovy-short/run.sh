#!/bin/sh
# Builds and runs the AsgctGroovyShort reproducer without jtreg or walkfuzz.
#   run.sh JAVA_HOME [SECONDS=8] APP_JAR...
# APP_JARs: Groovy's jar (org.apache.groovy:groovy; 5.0.8 measured).
# BUILD_JDK (environment): a JDK with javac and include/ to build with, for a runtime without
# them (built with --release 11).
# Exit 1: the finding shows (more than 1% of Groovy's traces end short of main() with at most
# two frames, and at least 5x the plain-Java control's share); 0: it does not; 2: cannot build
# or run, or too few traces to judge; 3: the JVM failed otherwise.
jdk=${1:-${JAVA_HOME:-}}
[ $# -gt 0 ] && shift
secs=8
case ${1:-} in '' | *[!0-9.]*) ;; *) secs=$1; shift ;; esac
build=${BUILD_JDK:-$jdk}
here=$(cd "$(dirname "$0")" && pwd)
if [ -z "$jdk" ] || [ ! -x "$jdk/bin/java" ] || [ ! -x "$build/bin/javac" ] || [ ! -f "$build/include/jvmti.h" ]; then
    echo "run.sh: give a JDK home with bin/javac and include/jvmti.h (or BUILD_JDK=such a JDK): run.sh /path/to/jdk [seconds] APP_JAR..." >&2
    exit 2
fi
if [ $# -eq 0 ]; then
    echo "run.sh: give Groovy's jar after the JDK: run.sh /path/to/jdk [seconds] groovy.jar" >&2
    exit 2
fi
cp=
for j in "$@"; do
    [ -f "$j" ] || { echo "run.sh: no such jar: $j" >&2; exit 2; }
    cp=$cp:$j
done
work=$(mktemp -d) || exit 2
trap 'rm -rf "$work"' EXIT
gcc -O2 -g -fPIC -shared -Wall -I"$build/include" -I"$build/include/linux" \
    -o "$work/libAsgctGroovyShort.so" "$here/libAsgctGroovyShort.c" -ldl -lpthread || exit 2
"$build/bin/javac" --release 11 -nowarn -d "$work" "$here/AsgctGroovyShort.java" || exit 2
"$jdk/bin/java" -agentpath:"$work/libAsgctGroovyShort.so" -Djava.library.path="$work" \
    -cp "$work$cp" AsgctGroovyShort "$secs"
rc=$?
case $rc in 0|1|2) exit $rc ;; *) echo "java exited $rc" >&2; exit 3 ;; esac
