#!/usr/bin/env bash
# Fetches DaCapo and Renaissance for `walkfuzz run --workload dacapo:<bench>|renaissance:<bench>`
# on a machine with internet access. Our CI machines cannot reach these hosts: there, the
# suites stay "unsupported" (see `walkfuzz workloads`) and the Debian-packaged applications
# (h2, xalan, lucene) stand in for them.
#
# Checksums: scripts/benchmarks.sha256 pins the expected SHA-256 of each file (sha256sum
# format). A file without a pinned sum is refused unless WALKFUZZ_TRUST_FIRST_FETCH=1, in
# which case its sum is printed so you can pin it after checking it against the release page.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=${1:-benchmarks}
mkdir -p "$dest"

fetch() { # url file
  local url=$1 file=$dest/$2
  if [[ ! -f $file ]]; then
    echo "fetch: $url"
    curl -fL --retry 3 -o "$file.part" "$url"
    mv "$file.part" "$file"
  fi
  local sum; sum=$(sha256sum "$file" | cut -d' ' -f1)
  local want; want=$(grep " $2\$" scripts/benchmarks.sha256 2>/dev/null | cut -d' ' -f1 || true)
  if [[ -n $want && $want != "$sum" ]]; then
    echo "fetch: $file has SHA-256 $sum, expected $want: refusing it" >&2; rm -f "$file"; exit 2
  elif [[ -z $want && ${WALKFUZZ_TRUST_FIRST_FETCH:-0} != 1 ]]; then
    echo "fetch: no pinned checksum for $2 (got $sum); check it against the release page, add it to scripts/benchmarks.sha256, or rerun with WALKFUZZ_TRUST_FIRST_FETCH=1" >&2
    exit 2
  fi
  echo "fetch: $file ok ($sum)"
}

fetch https://github.com/renaissance-benchmarks/renaissance/releases/download/v0.15.0/renaissance-gpl-0.15.0.jar renaissance-gpl-0.15.0.jar
fetch https://download.dacapobench.org/chopin/dacapo-23.11-chopin.zip dacapo-23.11-chopin.zip
if [[ ! -f $dest/dacapo-23.11-chopin/dacapo-23.11-chopin.jar ]]; then
  (cd "$dest" && unzip -q dacapo-23.11-chopin.zip)
fi
echo "export RENAISSANCE_JAR=$PWD/$dest/renaissance-gpl-0.15.0.jar"
echo "export DACAPO_JAR=$PWD/$dest/dacapo-23.11-chopin/dacapo-23.11-chopin.jar"
