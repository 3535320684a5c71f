#!/usr/bin/env bash
# Installs what walkfuzz needs from Debian packages, and only what is missing.
# Idempotent: a second run installs nothing and says so.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
want() { for p in "$@"; do have_pkg "$p" || need+=("$p"); done; }

want openjdk-17-jdk-headless gcc make libc6-dev
# The dashboard's browser test renders the report in Debian's headless Chromium.
want chromium
# The real-application workloads (h2, xalan, lucene, ...) come from Debian's Java packages.
if [[ -f scripts/apps-packages.txt ]]; then
  while read -r p; do [[ -n "$p" && "$p" != \#* ]] && want "$p"; done < scripts/apps-packages.txt
fi
# clang builds the eBPF walker's program (make generate); the committed object needs no clang.
if [[ "${WALKFUZZ_SETUP_CLANG:-0}" == 1 ]]; then want clang llvm libbpf-dev; fi

if ((${#need[@]} == 0)); then
  echo "setup: nothing to install"
else
  echo "setup: installing ${need[*]}"
  if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; else SUDO=; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  echo "setup: installed ${need[*]}"
fi

if ! command -v go >/dev/null; then
  echo "setup: Go is not installed; install Go 1.22 or newer (it is not taken from Debian's packages)" >&2
  exit 2
fi
echo "setup: go $(go env GOVERSION), $(javac -version 2>&1), $(gcc --version | head -1)"
