#!/usr/bin/env bash
# deploy/campaign.sh IMAGE: runs a sharded walkfuzz campaign on the cluster kubectl points at.
# It applies the namespace, the results volume and the shards (shards.yaml) with IMAGE, waits
# until the shards' Job has ended (Complete, or Failed when some shard failed for good: the
# merge takes what the others stored), then runs the merge (merge.yaml) and waits for it.
# IMAGE is what deploy/image.sh build printed, pushed where the cluster pulls from.
# A new campaign: change SEED_BASE in shards.yaml and delete job/walkfuzz-campaign first.
set -euo pipefail
image=${1:?usage: deploy/campaign.sh IMAGE   (IMAGE: deploy/image.sh build prints it)}
cd "$(dirname "$0")"
kubectl=${KUBECTL:-kubectl}
poll=${POLL_SECONDS:-30}

with_image() { sed "s|image: walkfuzz:COMMIT|image: $image|" "$1"; }

"$kubectl" apply -f namespace.yaml -f results-pvc.yaml
with_image shards.yaml | "$kubectl" apply -f -

echo "campaign.sh: waiting for job/walkfuzz-campaign to end (polling every ${poll}s)"
while :; do
  ended=$("$kubectl" -n walkfuzz get job walkfuzz-campaign \
    -o jsonpath='{range .status.conditions[?(@.status=="True")]}{.type}{" "}{end}')
  case " $ended " in
    *" Complete "* | *" Failed "*) break ;;
  esac
  sleep "$poll"
done
echo "campaign.sh: shards ended: $ended"

"$kubectl" -n walkfuzz delete job walkfuzz-merge --ignore-not-found
with_image merge.yaml | "$kubectl" apply -f -
"$kubectl" -n walkfuzz wait --for=condition=complete --timeout=1h job/walkfuzz-merge
echo "campaign.sh: merged: /results/walkfuzz.db, /results/corpus, /results/report on volume walkfuzz-results"
