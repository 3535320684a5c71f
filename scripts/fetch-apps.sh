#!/usr/bin/env bash
# Fetches the applications of workloads/apps/maven/<app> from Maven Central with Maven:
# pom.xml pins the artifacts, deps.lock is the resolved tree (group:artifact:type:version:scope,
# sorted). Each lands in $WALKFUZZ_CACHE/apps/<app> (default ~/.cache/walkfuzz/apps/<app>):
#   lib/*.jar        the jars of the resolved tree
#   classpath.txt    their absolute paths, one a line (make compiles bin/apps-<app>.jar with it)
#   status           "ok", or "refused: why" (the app's workloads then say "unsupported: why")
# Idempotent (a complete, matching cache is left alone); one line of output per app.
# A tree that resolves differently from deps.lock is refused; an app without deps.lock writes
# it (commit it). `scripts/fetch-apps.sh APP...` fetches only those.
set -uo pipefail
cd "$(dirname "$0")/.."
cache=${WALKFUZZ_CACHE:-$HOME/.cache/walkfuzz}/apps
plugin=org.apache.maven.plugins:maven-dependency-plugin:3.8.1
mkdir -p "$cache" || { echo "fetch-apps: cannot create $cache" >&2; exit 2; }

apps=("$@")
if ((${#apps[@]} == 0)); then
  for p in workloads/apps/maven/*/pom.xml; do apps+=("$(basename "$(dirname "$p")")"); done
fi

complete() { # dir lock: status ok, the same tree, every jar present
  [[ -f $1/status && $(cat "$1/status") == ok && -f $2 ]] && cmp -s "$2" "$1/deps.lock" || return 1
  local j
  while IFS= read -r j; do [[ -f $j ]] || return 1; done < "$1/classpath.txt"
}

size() { du -sm "$1/lib" | cut -f1; }

for app in "${apps[@]}"; do
  src=workloads/apps/maven/$app dir=$cache/$app
  if [[ ! -f $src/pom.xml ]]; then echo "fetch-apps: $app: no $src/pom.xml" >&2; exit 2; fi
  if complete "$dir" "$src/deps.lock"; then
    echo "fetch-apps: $app: cached, $(wc -l < "$dir/classpath.txt") jars, $(size "$dir") MB in $dir"
    continue
  fi
  refuse() {
    mkdir -p "$dir" && echo "refused: $1" > "$dir/status"
    echo "fetch-apps: $app: refused: $1"
  }
  if ! command -v mvn >/dev/null; then refuse "mvn not found (Debian package maven; scripts/setup.sh installs it)"; continue; fi
  t0=$SECONDS
  tmp=$(mktemp -d "$cache/.$app.XXXXXX")
  if ! mvn -B -q -f "$src/pom.xml" "$plugin:list" "$plugin:copy-dependencies" -DincludeScope=runtime -Dsort=true \
       -DoutputFile="$tmp/list.txt" -DoutputDirectory="$tmp/lib" -Dmdep.prependGroupId=true > "$tmp/mvn.log" 2>&1; then
    why=$(grep -m1 '^\[ERROR\]' "$tmp/mvn.log" | cut -c9-200)
    rm -rf "$tmp"
    refuse "Maven could not resolve $src/pom.xml: ${why:-see mvn -f $src/pom.xml dependency:list}"
    continue
  fi
  # "   g:a:jar:v:runtime -- module m" -> "g:a:jar:v:runtime"
  sed -n 's/^ *\([^ :]*:[^ ]*\).*/\1/p' "$tmp/list.txt" | LC_ALL=C sort > "$tmp/deps.lock"
  if [[ ! -f $src/deps.lock ]]; then
    cp "$tmp/deps.lock" "$src/deps.lock"
    echo "fetch-apps: $app: wrote $src/deps.lock (the resolved tree: commit it)"
  elif ! cmp -s "$tmp/deps.lock" "$src/deps.lock"; then
    first=$(diff "$src/deps.lock" "$tmp/deps.lock" | grep -m1 '^[<>]')
    rm -rf "$tmp"
    refuse "the resolved tree differs from $src/deps.lock ($first)"
    continue
  fi
  find "$tmp/lib" -name '*.jar' | LC_ALL=C sort | sed "s#^$tmp/#$dir/#" > "$tmp/classpath.txt"
  echo ok > "$tmp/status"
  rm -rf "$dir" && mv "$tmp" "$dir"
  echo "fetch-apps: $app: $(wc -l < "$dir/classpath.txt") jars, $(size "$dir") MB in $dir (resolved in $((SECONDS - t0)) s)"
done
