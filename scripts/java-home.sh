#!/usr/bin/env bash
# Prints the JAVA_HOME the agent and workloads are built against: $JAVA_HOME, else the javac on PATH.
set -euo pipefail
if [[ -n "${JAVA_HOME:-}" && -x "$JAVA_HOME/bin/javac" ]]; then echo "$JAVA_HOME"; exit; fi
j=$(command -v javac) || { echo "java-home: no javac found: run scripts/setup.sh" >&2; exit 2; }
dirname "$(dirname "$(readlink -f "$j")")"
