#!/bin/sh
# Runs the DdprofVmxUpcall reproducer under a profiler's library, without jtreg.
#   run.sh JAVA_HOME LIB [SECONDS=5] [JMC_DIR]
# LIB: Datadog's java-profiler (libjavaProfiler.so; its recordings are read with JDK Mission
# Control's parser, whose jars JMC_DIR holds: flightrecorder, common, encoder, lz4-java), or
# async-profiler (libasyncProfiler.so, the comparison; read with the JDK's own parser). The
# program runs for SECONDS under the profiler (cstack=vmx, or CSTACK=mode to compare; cpu
# samples every 100 us). Exit 1: more than 10% of the samples of the thread the VM called
# into Java (Class.forName calling a loader's loadClass) hold no upcallLoop() frame below,
# while at most 1% of the thread calling loadClass directly lack directLoop(); 0: not; 2:
# cannot build or run, no recording, too few samples, or the control disagrees; 3: the JVM or
# the reader failed otherwise.
# A runtime image without javac (a jlink'd JDK, say) runs what BUILD_JDK builds
# (17 or newer for Datadog's recordings: JDK Mission Control's parser runs on it):
#   BUILD_JDK=/path/to/jdk-17 run.sh /path/to/runtime-11 LIB
jdk=${1:-${JAVA_HOME:-}}
lib=${2:-}
secs=${3:-5}
jmc=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD_JDK:-$jdk}
if [ -z "$jdk" ] || [ ! -x "$jdk/bin/java" ] || [ ! -x "$build/bin/javac" ]; then
    echo "run.sh: give a JDK home with bin/javac (or a runtime and BUILD_JDK=a JDK that has it): run.sh /path/to/jdk LIB [seconds] [jmc-dir]" >&2
    exit 2
fi
case $lib in
*libjavaProfiler.so) opts=start,cpu=100000,cstack=${CSTACK:-vmx} ;;
*libasyncProfiler.so) opts=start,event=cpu,interval=100000,cstack=${CSTACK:-vmx},jfr ;;
*) echo "run.sh: give the profiler's library (libjavaProfiler.so or libasyncProfiler.so) as the second argument" >&2; exit 2 ;;
esac
[ -f "$lib" ] || { echo "run.sh: no file $lib" >&2; exit 2; }
if [ "${lib##*/}" = libjavaProfiler.so ]; then
    cp=""
    for j in flightrecorder common encoder lz4-java; do
        f=$(ls "$jmc"/$j-[0-9]*.jar 2>/dev/null | head -1)
        [ -n "$f" ] || { echo "run.sh: Datadog's recordings need JDK Mission Control's parser: give the folder with its $j jar as the fourth argument" >&2; exit 2; }
        cp="$cp:$f"
    done
fi
work=$(mktemp -d) || exit 2
trap 'rm -rf "$work"' EXIT
if [ -n "${cp:-}" ]; then
    "$build/bin/javac" --release 11 -cp "${cp#:}" -d "$work" "$here/DdprofVmxUpcall.java" "$here/CountJmc.java" || exit 2
else
    "$build/bin/javac" --release 11 -d "$work" "$here/DdprofVmxUpcall.java" || exit 2
fi
"$jdk/bin/java" -agentpath:"$lib=$opts,file=$work/rec.jfr" \
    -cp "$work" DdprofVmxUpcall "$secs" >"$work/out.txt" 2>&1
rc=$?
if [ "$rc" -ne 0 ]; then
    echo "java exited $rc under the profiler:"; tail -5 "$work/out.txt"
    exit 3
fi
if [ ! -s "$work/rec.jfr" ]; then
    echo "the profiler wrote no recording:"; tail -5 "$work/out.txt"
    exit 2
fi
if [ -n "${cp:-}" ]; then
    # JDK Mission Control's parser is built for Java 17: read with the building JDK's java.
    "$build/bin/java" -cp "$work$cp" CountJmc "$work/rec.jfr"
else
    "$jdk/bin/java" -cp "$work" DdprofVmxUpcall count "$work/rec.jfr"
fi
rc=$?
case $rc in 0|1|2) exit $rc ;; *) echo "the JFR reader exited $rc" >&2; exit 3 ;; esac
