#!/bin/bash
# Builds the test agent (walker + test driver) and the test program into walkers/vmstructs/test/build.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
mkdir -p "$here/build"
gcc -O2 -g -fPIC -shared -Wall -Wextra -Wno-unused-parameter -ftls-model=initial-exec \
    -I"$here/../../include" -I"$JAVA_HOME/include" -I"$JAVA_HOME/include/linux" \
    -DVS_DEBUG -o "$here/build/libvstest.so" "$here/vstest.c" "$here/../vmstructs.c" -ldl -lrt -lpthread
"$JAVA_HOME/bin/javac" --release 17 -d "$here/build" "$here/VsRecursion.java"
