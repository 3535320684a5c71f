#!/bin/bash
# Regenerates requests.jfr and requests.json: a real recording of jdk.StackTraceRequest
# events (written by Emit.java) taken with the settings the harness uses (requests.jfc).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
JAVA_HOME=${JAVA_HOME:-$("$here/../../../../scripts/java-home.sh")}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$JAVA_HOME/bin/javac" -d "$tmp" "$here/Emit.java"
"$JAVA_HOME/bin/java" -cp "$tmp" \
    "-XX:StartFlightRecording:name=walkfuzz-jvmti,settings=$here/requests.jfc,filename=$here/requests.jfr,dumponexit=true" \
    Emit
"$JAVA_HOME/bin/jfr" print --json --stack-depth 64 --events jdk.StackTraceRequest "$here/requests.jfr" >"$here/requests.json"
