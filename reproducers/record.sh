#!/bin/sh
# Runs a committed reproducer RUNS times and appends one row to its results.tsv, which the
# findings ledger (harness/ledger) renders under the finding.
#   reproducers/record.sh NAME RUNS JAVA_HOME [ARG...]
# ARGs go to run.sh after JAVA_HOME (a library, seconds, ...). A row counts every run: "fails"
# are the runs that exited 1 (the finding showed); "measured" gives each run's exit code, the
# first share its program printed and its wall time. An async-profiler library among the ARGs
# names the profiler column (its release from the VERSION file beside it, else the library).
set -u
if [ $# -lt 3 ] || [ ! -x "$(dirname "$0")/$1/run.sh" ]; then
    echo "record.sh: give a reproducer, a run count and a JDK: record.sh NAME RUNS JAVA_HOME [ARG...]" >&2
    exit 2
fi
name=$1 runs=$2 jdk=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
build=$(sed -n 's/^JAVA_VERSION="\(.*\)"/\1/p' "$jdk/release" 2>/dev/null)
[ -n "$build" ] || { echo "record.sh: $jdk/release names no JAVA_VERSION: give a JDK home" >&2; exit 2; }
profiler=-
for a in "$@"; do
    case $a in
    *.so)
        if [ -f "$(dirname "$a")/VERSION" ]; then
            profiler=$(awk '{print $1 " " $2}' "$(dirname "$a")/VERSION")
        else
            profiler=$a
        fi ;;
    esac
done
# A profiler option among the ARGs (cstack=vm) names the mode the row was run in.
for a in "$@"; do case $a in cstack=*) profiler="$profiler $a" ;; esac; done
secs=-
for a in "$@"; do case $a in *[!0-9]*) ;; *) secs=$a ;; esac; done
work=$(mktemp -d) || exit 2
trap 'rm -rf "$work"' EXIT
log=$work/out.txt
cd "$work" || exit 2 # run.sh may leave files (an hs_err log) in its working folder
fails=0 measured="" i=1
while [ "$i" -le "$runs" ]; do
    start=$(date +%s)
    "$here/$name/run.sh" "$jdk" "$@" >"$log" 2>&1
    rc=$?
    took=$(( $(date +%s) - start ))
    [ "$rc" -eq 1 ] && fails=$((fails + 1))
    share=$(grep -E '^(FAIL|PASS|INCONCLUSIVE)' "$log" | tail -1 | grep -oE '[0-9]+(\.[0-9]+)?%' | head -1)
    [ -n "$share" ] && share=" $share"
    measured="${measured:+$measured; }exit $rc$share (${took} s)"
    sed 's/^/    /' "$log" | tail -3
    i=$((i + 1))
done
out=$here/$name/results.tsv
[ -f "$out" ] || printf '# build\tprofiler\truns\tfails\tseconds\tmeasured\tdate\n' >"$out"
printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$build" "$profiler" "$runs" "$fails" "$secs" "$measured" "$(date -u +%F)" \
    >>"$out"
echo "$name on $build ($profiler): $fails of $runs runs failed: $measured"
