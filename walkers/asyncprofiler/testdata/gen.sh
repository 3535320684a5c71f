#!/bin/bash
# Regenerates ap46-recursion.jfr: a real async-profiler 4.6 recording (cstack=vm, cpu at 1 ms,
# jstackdepth=512 so the deep recursions are truncated samples, 1 s of the recursion workload
# with 2 threads on JDK 17), and its sample stream ap46-recursion.samples as ReadJfr.java prints it. Then
# `go test -run TestGolden -update` rewrites the expectations (.expect).
# Needs: make (bin/workloads.jar) and scripts/fetch-profilers.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$here/../../..
JAVA_HOME=${JAVA_HOME:-$("$repo/scripts/java-home.sh")}
lib=${WALKFUZZ_CACHE:-$HOME/.cache/walkfuzz}/profilers/async-profiler/4.6/libasyncProfiler.so
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$JAVA_HOME/bin/java" "-agentpath:$lib=start,event=cpu,interval=1000000,cstack=vm,jstackdepth=512,file=$tmp/r.jfr" \
    -Dwalkfuzz.roots="$tmp/roots.txt" -cp "$repo/bin/workloads.jar" walkfuzz.workloads.Main recursion \
    seed=0x5eed duration_ms=1000 threads=2 >/dev/null
cp "$tmp/r.jfr" "$here/ap46-recursion.jfr"
"$JAVA_HOME/bin/java" "$here/../ReadJfr.java" "$here/ap46-recursion.jfr" jdk.ExecutionSample >"$here/ap46-recursion.samples"
