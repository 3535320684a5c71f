#!/bin/sh
# Builds and runs the AsgctZombieMethod reproducer (JDK-8352649) without jtreg.
#   run.sh JAVA_HOME [RUNS] [SECONDS]
# A runtime image without javac or headers (a jlink'd JDK 11, say) runs what BUILD_JDK builds:
#   BUILD_JDK=/path/to/jdk-17 run.sh /path/to/runtime-11
# Exit 1: the JVM died with the finding's guarantee (its hs_err log is copied here);
# 0: RUNS runs of SECONDS each without it; 2: cannot build or run; 3: the JVM failed otherwise.
# Measured here: on 17.0.15 each of 5 runs of 20 s crashed (after 8-14 s); 17.0.21.1 passed 5 of 5.
jdk=${1:-${JAVA_HOME:-}}
runs=${2:-5}
secs=${3:-20}
here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD_JDK:-$jdk}
if [ -z "$jdk" ] || [ ! -x "$jdk/bin/java" ] || [ ! -x "$build/bin/javac" ] || [ ! -f "$build/include/jvmti.h" ]; then
    echo "run.sh: give a JDK home with bin/javac and include/jvmti.h (or a runtime and BUILD_JDK=a JDK that has them): run.sh /path/to/jdk [runs] [seconds]" >&2
    exit 2
fi
work=$(mktemp -d) || exit 2
trap 'rm -rf "$work"' EXIT
gcc -O2 -g -fPIC -shared -Wall -I"$build/include" -I"$build/include/linux" \
    -o "$work/libAsgctZombie.so" "$here/libAsgctZombie.c" -ldl -lpthread || exit 2
"$build/bin/javac" --release 11 -d "$work" "$here/AsgctZombieMethod.java" || exit 2
i=1
while [ "$i" -le "$runs" ]; do
    "$jdk/bin/java" -agentpath:"$work/libAsgctZombie.so" -Djava.library.path="$work" \
        -XX:ErrorFile="$work/hs_err_%p.log" -XX:-CreateCoredumpOnCrash \
        -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints -Xmx512m \
        -cp "$work" AsgctZombieMethod "$secs" >"$work/out.txt" 2>&1
    rc=$?
    for f in "$work"/hs_err_*.log; do
        [ -f "$f" ] || continue
        cp "$f" "./hs_err_run$i.log"
        if grep -q "unsafe access to zombie method" "$f"; then
            echo "FAIL run $i of $runs: $(grep -m1 'guarantee' "$f" | sed 's/^# *//') (hs_err_run$i.log)"
            exit 1
        fi
        echo "run $i: the JVM crashed, but not with the finding (hs_err_run$i.log)"
        exit 3
    done
    if [ "$rc" -ne 0 ]; then
        echo "run $i: java exited $rc without the finding:"; tail -5 "$work/out.txt"
        exit 3
    fi
    echo "run $i of $runs: $(tail -1 "$work/out.txt")"
    i=$((i + 1))
done
echo "PASS: no guarantee failure in $runs runs of $secs s"
exit 0
