#!/usr/bin/env bash
# ci/gate.sh's coverage check for one backend, both ways: the checked-in manifest holds, and the same
# manifest with one more case, one the backend refuses (as it would list it had the backend supported
# it before), fails the gate and names the case.
#   tests/gate_test.sh BACKEND BUILD_DIR REFUSED_CASE
set -euo pipefail
backend=$1 build=$2 refused=$3
root=$(cd "$(dirname "$0")/.." && pwd)
# A backend this machine cannot run skips (77), as its conformance tests do, unless it is required.
listing=$("$build/cli/touchstone" list --backend "$backend")
if grep -q "^$backend: UNAVAILABLE" <<<"$listing"; then
  case ",${TOUCHSTONE_REQUIRE_BACKENDS:-}," in *",$backend,"*) echo "FAIL: $backend is required but unavailable"; exit 1 ;; esac
  echo "$backend unavailable here: skipped"; exit 77
fi
GATE_COVERAGE_ONLY=1 bash "$root/ci/gate.sh" "$backend" "$build" || { echo "FAIL: the checked-in manifest of $backend does not hold"; exit 1; }
if grep -qxF "$refused" "$root/ci/coverage/$backend.txt"; then
  echo "FAIL: $refused is in ci/coverage/$backend.txt: pick a case $backend refuses"; exit 1
fi
manifest=$(mktemp)
trap 'rm -f "$manifest" "$manifest.out"' EXIT
{ cat "$root/ci/coverage/$backend.txt"; echo "$refused"; } >"$manifest"
if GATE_COVERAGE_ONLY=1 GATE_MANIFEST=$manifest bash "$root/ci/gate.sh" "$backend" "$build" >"$manifest.out" 2>&1; then
  cat "$manifest.out"; echo "FAIL: the gate passed although $backend does not support $refused"; exit 1
fi
grep -qxF "dropped  $refused" "$manifest.out" || { cat "$manifest.out"; echo "FAIL: the gate did not name $refused"; exit 1; }
echo "gate_test: $backend's gate holds, and fails on the refused case $refused"
