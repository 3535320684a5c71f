#!/bin/bash
# Runs the vmstructs walker against AsyncGetCallTrace on the recursion program:
# JDK 17 and 25 x {-Xint, -Xcomp, default tiered}, then a garbage-ucontext run per JDK.
# Usage: walkers/vmstructs/test/run.sh [seconds] [interval_us]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
secs=${1:-10}
iv=${2:-500}
"$here/build.sh" >/dev/null || exit 2
out="$here/build/results.jsonl"
: > "$out"
jdks=(/usr/lib/jvm/java-17-openjdk-amd64 /usr/lib/jvm/temurin-25-jdk-amd64)
printf '%-8s %-7s %9s %9s %10s %10s %11s %9s %9s %s\n' JDK mode asgct_ok agree% exact% +explained% ours_failed ours_only inlined differ:n/asgct_bad/ours_bad/both_bad
for j in "${jdks[@]}"; do
  for mode in -Xint -Xcomp tiered; do
    flag=$mode; [ "$mode" = tiered ] && flag=-XX:+TieredCompilation
    log="$here/build/run-$(basename "$j")$mode.log"
    timeout $((secs * 6 + 60)) "$j/bin/java" -agentpath:"$here/build/libvstest.so"=interval_us=$iv,dump=20,out="$out" \
      $flag -cp "$here/build" VsRecursion "$secs" 3 > "$log" 2>&1
    rc=$?
    python3 - "$out" "$(basename "$j")" "$mode" "$rc" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
d = lines[-1]
c = lines[-2] if len(lines) > 1 and "check" in lines[-2] else None
o = [l for l in lines[-3:] if "only" in l]
o = o[-1] if o else None
ok = d["asgct_ok"] or 1
expl = (d["agree_methods"] + d["ours_extra_top"] + d["asgct_truncated"]) / ok * 100
print("%-8s %-7s %9d %9.3f %10.3f %10.3f %11d %9d %9d %s%s" % (d["jdk"].split("+")[0].split("-")[0], sys.argv[3], d["asgct_ok"],
      d["agreement_pct"], d["exact_pct"], expl, d["ours_failed"], d["ours_only"], d["inlined"],
      ("%d/%d/%d/%d" % (c["checked"], c["asgct_bad"], c["ours_bad"], c["both_bad"])) if c else "-",
      "" if sys.argv[4] == "0" else "  (exit %s)" % sys.argv[4]))
if d.get("asgct_truncated"):
    print("%-16s ASGCT stopped early, ours reached the thread root: %d (at a deoptimized frame: %d, at an entry frame: %d)" % ("", d["asgct_truncated"], d["asgct_deopt_stop"], d["asgct_entry_stop"]))
if o:
    print("%-16s ours-only traces: %d, %.1f%% end at the thread root, %d/%d checked are consistent" % ("", o["ours_only"],
          100.0 * o["root"] / (o["ours_only"] or 1), o["consistent"], o["checked"]))
PY
  done
done
echo
echo "garbage ucontexts (every 4th signal also walks random sp/fp/pc):"
for j in "${jdks[@]}"; do
  log="$here/build/garbage-$(basename "$j").log"
  timeout $((secs * 6 + 60)) "$j/bin/java" -agentpath:"$here/build/libvstest.so"=interval_us=$iv,garbage=4,dump=0 \
    -cp "$here/build" VsRecursion "$secs" 3 > "$log" 2>&1
  rc=$?
  echo "$(basename "$j"): exit $rc; $(grep -E '^garbage walks' "$log")"
  grep -E '^  of which' "$log"
  grep -E '^JVM alive|^done' "$log" | sed 's/^/    /'
done

echo
echo "unsupported-JDK path (WALKFUZZ_VMSTRUCTS_HIDE=CodeCache::_heaps):"
for j in "${jdks[@]}"; do
  WALKFUZZ_VMSTRUCTS_HIDE=CodeCache::_heaps "$j/bin/java" -agentpath:"$here/build/libvstest.so" -cp "$here/build" VsRecursion 1 1 2>&1 | head -1
done
