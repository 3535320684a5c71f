#!/usr/bin/env bash
# Finds the commit that introduced a known crash or hang, with git bisect run driven by
# `walkfuzz repro`'s exit code (1 reproduced, 0 not). Run it from the checkout to bisect:
#
#   scripts/bisect-walkfuzz.sh GOOD BAD TARGET [walkfuzz repro flags...]
#   scripts/bisect-walkfuzz.sh v0.3 HEAD results/runs/20261124-0x5eed --runs 5 --jdk 17
#
# TARGET is what `walkfuzz repro` takes: a run directory, a corpus bucket directory or a seed.
# A directory is copied aside first, so checking out old commits cannot move it. Each step
# builds with $WALKFUZZ_BISECT_BUILD (default: make the CLI, the agent and the workloads); a
# commit that does not build, or whose runs all fail before sampling (repro exits 2), is
# skipped (exit 125), never blamed. The checkout must be clean; it is left on the commit it
# started from (git bisect reset). Prints the first bad commit; exits 0 when one was found.
set -euo pipefail

usage() {
	echo "usage: scripts/bisect-walkfuzz.sh GOOD BAD TARGET [walkfuzz repro flags...] (see docs/bisect.md)" >&2
	exit 2
}

# One bisect step, run by git bisect run from a copy of this script: build, reproduce, and
# turn repro's exit code into git's (0 good, 1 bad, 125 skip).
if [[ ${1:-} == --step ]]; then
	shift
	out=$1
	shift
	rev=$(git rev-parse --short HEAD)
	if ! bash -c "${WALKFUZZ_BISECT_BUILD}" >"$out/build-$rev.log" 2>&1; then
		echo "bisect: $rev does not build (see $out/build-$rev.log): skipped"
		exit 125
	fi
	set +e
	bin/walkfuzz repro "$@" --out "$out/repro-$rev" >"$out/repro-$rev.log" 2>&1
	code=$?
	set -e
	grep -v '^$' "$out/repro-$rev.log" | tail -n 3 | sed "s/^/bisect: $rev: /"
	case $code in
	0) exit 0 ;;
	1) exit 1 ;;
	*) echo "bisect: $rev: walkfuzz repro exited $code: skipped"; exit 125 ;;
	esac
fi

[[ $# -ge 3 ]] || usage
good=$1 bad=$2 target=$3
shift 3
git rev-parse --git-dir >/dev/null 2>&1 || { echo "bisect-walkfuzz: not in a git checkout: cd into the repository to bisect" >&2; exit 2; }
git rev-parse --verify -q "$good^{commit}" >/dev/null || { echo "bisect-walkfuzz: GOOD $good is not a commit: pass a hash, tag or branch" >&2; exit 2; }
git rev-parse --verify -q "$bad^{commit}" >/dev/null || { echo "bisect-walkfuzz: BAD $bad is not a commit: pass a hash, tag or branch" >&2; exit 2; }
if [[ -n $(git status --porcelain --untracked-files=no) ]]; then
	echo "bisect-walkfuzz: the checkout has uncommitted changes: commit or stash them first" >&2
	exit 2
fi

: "${WALKFUZZ_BISECT_BUILD:=make bin/walkfuzz bin/libwalkfuzz.so bin/workloads.jar bin/libwfjni.so}"
export WALKFUZZ_BISECT_BUILD
work=$(mktemp -d "${TMPDIR:-/tmp}/walkfuzz-bisect.XXXXXX")
cp "$0" "$work/step.sh" # old commits may not have this script
if [[ -d $target ]]; then
	cp -r "$target" "$work/target"
	target=$work/target
fi

start=$(git rev-parse --abbrev-ref HEAD)
[[ $start == HEAD ]] && start=$(git rev-parse HEAD)
trap 'git bisect reset "$start" >/dev/null 2>&1 || true' EXIT
git bisect start "$bad" "$good" >/dev/null
set +e
git bisect run bash "$work/step.sh" --step "$work" "$target" "$@" >"$work/bisect.log" 2>&1
code=$?
set -e
grep '^bisect: ' "$work/bisect.log" || true
first=$(sed -n 's/^\([0-9a-f]\{7,\}\) is the first bad commit$/\1/p' "$work/bisect.log" | head -n 1)
if [[ $code -ne 0 || -z $first ]]; then
	echo "bisect-walkfuzz: no first bad commit (git bisect run exited $code); log: $work/bisect.log" >&2
	exit 1
fi
echo "first bad commit: $(git log -1 --format='%h %s' "$first")"
echo "log and every step's repro output: $work"
