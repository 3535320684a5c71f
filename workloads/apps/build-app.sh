#!/usr/bin/env bash
# Builds bin/apps-<app>.jar for a Maven-Central app (workloads/apps/maven/<app>): the drivers'
# core (workloads/apps/src: App, Config, Main, Run) and the app's own sources, compiled against
# the classpath scripts/fetch-apps.sh left in $WALKFUZZ_CACHE/apps/<app>. The jar runs with
# `java -jar`: its manifest names Main, the fetched jars (Class-Path, absolute paths) and the
# app's own manifest lines (workloads/apps/maven/<app>/manifest.mf, e.g. Spark's Add-Opens).
# bin/apps-<app>.classpath lists the fetched jars (the harness checks they are still there).
# When the app was not fetched or was refused, the jar holds the core alone and
# bin/apps-<app>.unsupported says why, in one line; the build goes on.
set -euo pipefail
cd "$(dirname "$0")/../.."
app=$1
cache=${WALKFUZZ_CACHE:-$HOME/.cache/walkfuzz}/apps/$app
java_home=${JAVA_HOME:?}
out=bin/apps-$app.jar classes=build/apps-$app
core=(workloads/apps/src/walkfuzz/apps/{App,Config,Main,Run}.java)
mkdir -p bin && rm -rf "$classes" && mkdir -p "$classes"
why=
if [[ ! -f $cache/status ]]; then
  why="not fetched: run scripts/setup.sh (scripts/fetch-apps.sh $app), then make"
elif [[ $(cat "$cache/status") != ok ]]; then
  why="$(cat "$cache/status"): see scripts/fetch-apps.sh $app"
fi
mf=$classes.mf
printf 'Main-Class: walkfuzz.apps.Main\n' > "$mf"
if [[ -z $why ]]; then
  cp=$(paste -sd: "$cache/classpath.txt")
  mapfile -t srcs < <(find "workloads/apps/maven/$app" -name '*.java')
  "$java_home/bin/javac" --release 17 -nowarn -cp "$cp" -d "$classes" "${core[@]}" "${srcs[@]}"
  # Manifest lines are at most 72 bytes, continued on lines that start with a space; spaces
  # in paths are %20.
  printf 'Class-Path: %s\n' "$(sed 's/ /%20/g' "$cache/classpath.txt" | paste -sd' ')" | fold -b -w 71 | sed '2,$s/^/ /' >> "$mf"
  [[ -f workloads/apps/maven/$app/manifest.mf ]] && cat "workloads/apps/maven/$app/manifest.mf" >> "$mf"
  cp "$cache/classpath.txt" "bin/apps-$app.classpath"
  rm -f "bin/apps-$app.unsupported"
else
  "$java_home/bin/javac" --release 17 -nowarn -d "$classes" "${core[@]}"
  echo "$why" > "bin/apps-$app.unsupported"
  rm -f "bin/apps-$app.classpath"
  echo "apps: $app unsupported: $why"
fi
"$java_home/bin/jar" cfm "$out" "$mf" -C "$classes" .
