#!/usr/bin/env bash
# Per-backend gate: runs one backend's slice of the conformance matrix and fails on any failure, on
# the backend being unavailable, or on a drop in coverage against ci/coverage/<backend>.txt: the
# checked-in list of (op, variant) pairs the backend supports in every conformance case, one a line,
# "gemm" for an op without enum parameters, "gemm_quant kind=Q4_K" for one variant of an op with
# them, so a backend cannot silently lose a kind.
#   ci/gate.sh BACKEND [BUILD_DIR]          coverage check, then the backend's slice of ctest
#   GATE_COVERAGE_ONLY=1 ci/gate.sh ...     coverage check only (.ci/run, after the full ctest run)
set -euo pipefail
backend=${1:?usage: ci/gate.sh BACKEND [BUILD_DIR]}
root=$(cd "$(dirname "$0")/.." && pwd)
build=${2:-$root/build}
manifest=$root/ci/coverage/$backend.txt
cli=$build/cli/touchstone

[ -f "$manifest" ] || { echo "gate: no coverage manifest $manifest" >&2; exit 1; }
supported=$("$cli" list --backend "$backend" --supported) || { echo "gate: $backend is not usable here" >&2; exit 1; }
# Only "op" and "op key=VALUE ..." lines count (a driver or layer may print to stdout too).
supported=$(grep -E '^[a-z0-9_]+( [a-z0-9_.]+=[A-Za-z0-9_]+)*$' <<<"$supported" || true)

missing=$(comm -23 <(grep -v '^#' "$manifest" | sed '/^$/d' | sort) <(sort <<<"$supported"))
extra=$(comm -13 <(grep -v '^#' "$manifest" | sed '/^$/d' | sort) <(sort <<<"$supported"))
if [ -n "$missing" ]; then
  echo "gate: coverage of $backend dropped; these (op, variant) pairs are in $manifest but no longer supported in every case:" >&2
  echo "$missing" | sed 's/^/  /' >&2
  exit 1
fi
[ -z "$extra" ] || { echo "gate: $backend now also supports (add to $manifest):"; echo "$extra" | sed 's/^/  /'; }

echo "gate: $backend supports $(wc -l <<<"$supported") (op, variant) pairs (manifest: $(grep -cv '^#' "$manifest"))"
[ "${GATE_COVERAGE_ONLY:-0}" = 1 ] && exit 0
TOUCHSTONE_REQUIRE_BACKENDS=$backend ctest --test-dir "$build" -L "^$backend\$" --output-on-failure -j"$(nproc)"
