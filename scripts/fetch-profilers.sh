#!/usr/bin/env bash
# Fetches the shipping profilers walkfuzz tests as walkers (docs/profilers.md): pinned
# releases of async-profiler and Datadog's java-profiler (ddprof), through Maven, into a
# cache, each native library unpacked at a predictable path with its version beside it:
#
#   $WALKFUZZ_CACHE/profilers/<profiler>/<version>/<library>.so
#   $WALKFUZZ_CACHE/profilers/<profiler>/<version>/VERSION     "<profiler> <version> <g:a:v> sha256=<library's>"
#
# WALKFUZZ_CACHE defaults to ~/.cache/walkfuzz. walkers/asyncprofiler and walkers/ddprof find
# the libraries there. Idempotent: a library already unpacked is not fetched again. An artifact
# Maven cannot resolve is one line and not a failure: the walkers that need it say "unsupported".
set -uo pipefail
root=${WALKFUZZ_CACHE:-$HOME/.cache/walkfuzz}/profilers

# fetch PROFILER VERSION GROUP:ARTIFACT:VERSION PATH-IN-JAR
fetch() {
  local prof=$1 ver=$2 gav=$3 inner=$4
  local dir=$root/$prof/$ver lib
  lib=$dir/$(basename "$inner")
  if [[ -s $lib && -s $dir/VERSION ]]; then
    echo "fetch-profilers: $prof $ver already at $lib"
    return 0
  fi
  if ! command -v mvn >/dev/null; then
    echo "fetch-profilers: $prof $ver skipped: no mvn (apt-get install maven)"
    return 0
  fi
  local tmp
  tmp=$(mktemp -d)
  if ! mvn -q -B dependency:copy -Dartifact="$gav" -DoutputDirectory="$tmp" >"$tmp/mvn.log" 2>&1; then
    echo "fetch-profilers: $prof $ver refused: Maven could not resolve $gav ($(grep -m1 -o 'ERROR.*' "$tmp/mvn.log" | cut -c1-160))"
    rm -rf "$tmp"
    return 0
  fi
  local jar
  jar=$(ls "$tmp"/*.jar 2>/dev/null | head -1)
  if ! unzip -q -o "$jar" "$inner" -d "$tmp/x" 2>/dev/null || [[ ! -s $tmp/x/$inner ]]; then
    echo "fetch-profilers: $prof $ver refused: $gav has no $inner"
    rm -rf "$tmp"
    return 0
  fi
  mkdir -p "$dir"
  cp "$jar" "$dir/"
  mv "$tmp/x/$inner" "$lib"
  echo "$prof $ver $gav sha256=$(sha256sum "$lib" | cut -d' ' -f1)" >"$dir/VERSION"
  rm -rf "$tmp"
  echo "fetch-profilers: $prof $ver at $lib ($(stat -c %s "$lib") bytes)"
}

# fetch_jar DIR G:A:V: a plain jar into the cache (readers' dependencies).
fetch_jar() {
  local dir=$root/$1 gav=$2 jar
  IFS=: read -r _ a v <<<"$gav"
  jar=$dir/$a-$v.jar
  if [[ -s $jar ]]; then
    echo "fetch-profilers: $gav already at $jar"
    return 0
  fi
  if ! command -v mvn >/dev/null; then
    echo "fetch-profilers: $gav skipped: no mvn (apt-get install maven)"
    return 0
  fi
  mkdir -p "$dir"
  if ! mvn -q -B dependency:copy -Dartifact="$gav" -DoutputDirectory="$dir" >/dev/null 2>&1; then
    echo "fetch-profilers: $gav refused: Maven could not resolve it"
    return 0
  fi
  echo "fetch-profilers: $gav at $jar"
}

# async-profiler: 4.6 is the newest release Maven serves; 4.2 made cstack=vm the default on
# HotSpot and fixed its walks at compiled methods' prologues and epilogues (async-profiler PR
# #1449: 4.1 is the last release without the fix); 4.0 and 3.0 are the older releases for A/B
# (3.0 introduced cstack=vm).
fetch async-profiler 4.6 tools.profiler:async-profiler:4.6 linux-x64/libasyncProfiler.so
fetch async-profiler 4.2 tools.profiler:async-profiler:4.2 linux-x64/libasyncProfiler.so
fetch async-profiler 4.1 tools.profiler:async-profiler:4.1 linux-x64/libasyncProfiler.so
fetch async-profiler 4.0 tools.profiler:async-profiler:4.0 linux-x64/libasyncProfiler.so
fetch async-profiler 3.0 tools.profiler:async-profiler:3.0 linux-x64/libasyncProfiler.so
# Datadog's java-profiler: 1.22.0 is the newest release Maven serves (its metadata's <release>).
fetch ddprof 1.22.0 com.datadoghq:ddprof:1.22.0 META-INF/native-libs/linux-x64/libjavaProfiler.so
# JDK Mission Control's JFR parser and what it needs: it reads ddprof's recordings, which the
# JDK's own parser refuses (walkers/ddprof).
fetch_jar jmc org.openjdk.jmc:flightrecorder:9.1.2
fetch_jar jmc org.openjdk.jmc:common:9.1.2
fetch_jar jmc org.owasp.encoder:encoder:1.2.3
fetch_jar jmc at.yawk.lz4:lz4-java:1.10.2
