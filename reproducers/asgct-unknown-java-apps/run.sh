#!/bin/sh
# Builds and runs the AsgctUnknownJava reproducer without jtreg or walkfuzz.
#   run.sh JAVA_HOME [SECONDS=8] APP_JAR...
# APP_JARs: the Scala 3 compiler's jars (scala3-compiler_3, scala3-library_3, scala-library,
# scala3-interfaces, tasty-core, scala-asm, compiler-interface, util-interface).
# BUILD_JDK (environment): a JDK with javac and include/ to build with, for a runtime without
# them (built with --release 11).
# Exit 1: the finding shows (unknown_Java above 5% of the compiler's walks in Java and at least
# 2x the plain-Java control's); 0: it does not; 2: cannot build or run, or too few walks to
# judge; 3: the JVM failed otherwise.
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
    echo "run.sh: give the Scala 3 compiler's jars after the JDK: run.sh /path/to/jdk [seconds] scala3-compiler_3.jar scala-library.jar ..." >&2
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
    -o "$work/libAsgctUnknownJava.so" "$here/libAsgctUnknownJava.c" -ldl -lpthread || exit 2
"$build/bin/javac" --release 11 -nowarn -d "$work" "$here/AsgctUnknownJava.java" || exit 2
"$jdk/bin/java" -agentpath:"$work/libAsgctUnknownJava.so" -Djava.library.path="$work" \
    -cp "$work$cp" AsgctUnknownJava "$secs"
rc=$?
case $rc in 0|1|2) exit $rc ;; *) echo "java exited $rc" >&2; exit 3 ;; esac
