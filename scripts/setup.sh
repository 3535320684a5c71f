#!/usr/bin/env bash
# Installs what walkfuzz needs from Debian packages, and only what is missing.
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
    echo "setup: the archive serves no JDK 17 build other than the installed ${installed:-none}" >&2
    exit 2
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
  (cd "$tmp/debs" && apt-get download -qq "openjdk-17-jre-headless=$ver" "openjdk-17-jdk-headless=$ver" "openjdk-17-jre-zero=$ver")
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

case "${1:-}" in
  "") ;;
  --jdk-builds) jdk_builds; exit 0 ;;
  *) echo "usage: scripts/setup.sh [--jdk-builds]" >&2; exit 2 ;;
esac

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
scripts/fetch-apps.sh  # the real applications from Maven Central (workloads/apps/maven), one line each
