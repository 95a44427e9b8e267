#!/usr/bin/env bash
# Per-backend gate: runs one backend's slice of the conformance matrix and fails on any failure, on
# the backend being unavailable, or on a drop in coverage against ci/coverage/<backend>.txt: the
# conformance cases (op/case/dtype, every tier) the backend supports, as `touchstone coverage --backend
# B` generated them from the catalog and the backend's supports(), checked in. A case listed there that
# the backend no longer supports, or that no longer exists, fails the gate, so a backend cannot
# silently lose one case of one dtype. Regenerate the file when a backend gains cases.
#   ci/gate.sh BACKEND [BUILD_DIR]          coverage check, then the backend's slice of ctest
#   GATE_COVERAGE_ONLY=1 ci/gate.sh ...     coverage check only (.ci/run, after the full ctest run)
#   GATE_MANIFEST=FILE ci/gate.sh ...       another manifest than ci/coverage/<backend>.txt
set -euo pipefail
backend=${1:?usage: ci/gate.sh BACKEND [BUILD_DIR]}
root=$(cd "$(dirname "$0")/.." && pwd)
build=${2:-$root/build}
manifest=${GATE_MANIFEST:-$root/ci/coverage/$backend.txt}
cli=$build/cli/touchstone

[ -f "$manifest" ] || { echo "gate: no coverage manifest $manifest" >&2; exit 1; }
if ! "$cli" coverage --backend "$backend" --check "$manifest"; then
  echo "gate: coverage of $backend dropped below $manifest (or $backend is not usable here)" >&2
  exit 1
fi
[ "${GATE_COVERAGE_ONLY:-0}" = 1 ] && exit 0
TOUCHSTONE_REQUIRE_BACKENDS=$backend ctest --test-dir "$build" -L "^$backend\$" --output-on-failure -j"$(nproc)"
