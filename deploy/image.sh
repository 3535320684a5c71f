#!/usr/bin/env bash
# deploy/image.sh tag [REPO]    prints the image tag of this checkout: REPO:<commit>, with
#                               -dirty when the work tree has uncommitted changes
# deploy/image.sh build [REPO]  builds deploy/Dockerfile with that tag and prints it; refuses a
#                               dirty tree, so a tag always names the code inside
# REPO defaults to $WALKFUZZ_IMAGE_REPO, else walkfuzz. Building needs a Docker engine.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=${2:-${WALKFUZZ_IMAGE_REPO:-walkfuzz}}
commit=$(git rev-parse --short=12 HEAD)
dirty=
if [[ -n "$(git status --porcelain --untracked-files=no)" ]]; then dirty=-dirty; fi
tag="$repo:$commit$dirty"

case "${1:-}" in
  tag) echo "$tag" ;;
  build)
    if [[ -n "$dirty" ]]; then
      echo "image.sh: the work tree has uncommitted changes: commit or stash them, so $repo:$commit is what it says" >&2
      exit 2
    fi
    docker build -f deploy/Dockerfile --build-arg "COMMIT=$commit" -t "$tag" . >&2
    echo "$tag"
    ;;
  *)
    echo "usage: deploy/image.sh tag|build [REPO]" >&2
    exit 2
    ;;
esac
