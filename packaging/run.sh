#!/usr/bin/env bash
# The bundle's one command: on this host, with whatever OpenCL and Vulkan drivers it has, list the
# backends, run each one's slice of the conformance matrix, then a short decode benchmark pass, and
# keep everything in a results folder (text and JSON). Needs nothing from the host but glibc, bash
# and coreutils (python3, when there, adds the benchmark summary table).
#
#   bash run.sh [--tier smoke|ci|full] [--results DIR] [--require B1,B2] [--backends B1,B2]
#               [--no-bench | --no-matrix] [--bench-filter REGEX] [--dtypes LIST] [--min-time SECONDS]
#
# A backend whose driver is missing is reported unavailable, not failed, unless --require names it.
# Exit 1 when a slice of the matrix fails, a required backend is unavailable or the benchmarks error.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
start=$(date +%s.%N)

tier=ci
results=""
bench=1
matrix=1
# The decode presets CI times on opencl and vulkan (ci/main-job.sh), on cpu too, and the machine
# limits the summary sets them against (triad, FMA peak, SGEMM at m512; CLBlast at the same shape).
# The device backends' own roofs (baseline/device_{read,copy,fma_f32,fma_f16}/<backend>) are added to
# this or any --bench-filter, so each opencl / vulkan benchmark is printed as a fraction of its device's.
bench_filter='^(gemm|rms_norm|flash_attention)/(cpu|opencl|vulkan)/(m1_n4096_k4096|t512_d4096|decode_h32_kv8_hd128_ctx4096)/|^baseline/(stream_triad|fma_peak|cblas_sgemm/m512_n4096_k4096|clblast_sgemm/(m1|m512)_n4096_k4096)'
min_time=0.1
dtypes=F32  # the float dtypes the benchmarks register (touchstone-bench --dtypes: F32,F16 or all)
only=""
usage() { grep -A1 '^#   bash run.sh' "$0" | sed 's/^# *//' >&2; exit 1; }
while [ $# -gt 0 ]; do
  case "$1" in
    --tier) tier=${2:?}; shift ;;
    --results) results=${2:?}; shift ;;
    --require) export TOUCHSTONE_REQUIRE_BACKENDS=${2:?}; shift ;;
    --backends) only=${2:?}; shift ;;
    --no-bench) bench=0 ;;
    --no-matrix) matrix=0 ;;
    --bench-filter) bench_filter=${2:?}; shift ;;
    --min-time) min_time=${2:?}; shift ;;
    --dtypes) dtypes=${2:?}; shift ;;
    -h|--help) usage ;;
    *) echo "run.sh: unknown option '$1'" >&2; usage ;;
  esac
  shift
done
case "$tier" in smoke|ci|full) ;; *) echo "run.sh: --tier must be smoke, ci or full" >&2; exit 1 ;; esac

# shellcheck source=env.sh
source "$here/env.sh" || exit 1
results=${results:-$PWD/results-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$results" || exit 1
results=$(cd "$results" && pwd)
summary="$results/summary.txt"
: >"$summary"
elapsed() { awk -v s="$start" -v n="$(date +%s.%N)" 'BEGIN { printf "%.1f", n - s }'; }
say() { printf '[+%6ss] %s\n' "$(elapsed)" "$*" | tee -a "$summary"; }

{
  echo "host: $(uname -srm)"
  echo "bundle: $here"
  echo "C++ runtime: $TOUCHSTONE_CXX_RUNTIME's"
  echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
  for v in VK_DRIVER_FILES VK_ICD_FILENAMES VK_ADD_DRIVER_FILES OCL_ICD_VENDORS TOUCHSTONE_REQUIRE_BACKENDS TOUCHSTONE_OPENCL_DEVICE TOUCHSTONE_VULKAN_DEVICE; do
    [ -n "${!v:-}" ] && echo "$v=${!v}"
  done
} >"$results/env.txt"

status=0
export TOUCHSTONE_REQUIRE_BACKENDS=${TOUCHSTONE_REQUIRE_BACKENDS:-}
touchstone list >"$results/list.txt" 2>&1 || { say "touchstone list failed:"; cat "$results/list.txt"; exit 1; }
sed -n '1,/^$/{/^$/!p}' "$results/list.txt" >"$results/backends.txt"
say "backends:"
sed 's/^/    /' "$results/backends.txt" | tee -a "$summary"

# A required backend this bundle was built without fails as one whose driver is missing would.
for b in ${TOUCHSTONE_REQUIRE_BACKENDS//,/ }; do
  if ! grep -q "^$b: " "$results/backends.txt"; then status=1; say "  $b: FAILED  required, but not a backend of this bundle"; fi
done

[ "$matrix" = 1 ] && say "conformance matrix, tier $tier:"
for b in $(sed -n 's/^\([a-z0-9_]*\): .*/\1/p' "$results/backends.txt"); do
  if [ "$matrix" = 0 ] || { [ -n "$only" ] && [[ ",$only," != *",$b,"* ]]; }; then continue; fi
  log="$results/conformance-$b.txt"
  touchstone-conformance --backend="$b" --tier="$tier" --failures="$results/failures" \
    --gtest_output="json:$results/conformance-$b.json" >"$log" 2>&1
  rc=$?
  passed=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) tests\{0,1\}.*/\1/p' "$log" | tail -1)
  skipped=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) tests\{0,1\}.*/\1/p' "$log" | tail -1)
  failed=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) tests\{0,1\}, listed below.*/\1/p' "$log" | tail -1)
  counts="${passed:-0} passed, ${failed:-0} failed, ${skipped:-0} skipped (unsupported)"
  case $rc in
    0) say "  $b: ok      $counts" ;;
    77) say "  $b: unavailable: $(sed -n "s/^backend $b unavailable: //p" "$log" | head -1)" ;;
    *) status=1
       if grep -q "^backend $b unavailable: " "$log"; then
         say "  $b: FAILED  required but unavailable: $(sed -n "s/^backend $b unavailable: //p" "$log" | head -1)"
       else
         say "  $b: FAILED  $counts (log: $log)"
       fi ;;
  esac
done

if [ "$bench" = 1 ]; then
  say "benchmarks (decode presets, min time ${min_time}s): $results/bench.txt"
  # The device roofs of the device backends this run takes (all of them, or those --backends names).
  roof_backends=""
  for b in opencl vulkan; do
    if [ -z "$only" ] || [[ ",$only," == *",$b,"* ]]; then roof_backends="${roof_backends:+$roof_backends|}$b"; fi
  done
  [ -n "$roof_backends" ] && bench_filter="($bench_filter)|^baseline/device_[a-z0-9_]+/($roof_backends)(/|\$)"
  echo "$bench_filter" >"$results/bench-filter.txt"
  if touchstone-bench --dtypes="$dtypes" --benchmark_filter="$bench_filter" --benchmark_min_time="$min_time" \
      --benchmark_out="$results/bench.json" --benchmark_out_format=json >"$results/bench.txt" 2>&1; then
    # Failed benchmarks (a setup or execute error, a wrong baseline result) fail the run; the ones
    # a backend does not take or cannot run here ("unsupported: ", "unavailable: ") do not.
    if command -v python3 >/dev/null; then
      python3 "$here/share/touchstone/bench-summary.py" --strict --json "$results/bench.json" >"$results/bench-summary.txt" 2>&1
      bench_rc=$?
      sed 's/^/    /' "$results/bench-summary.txt" | tee -a "$summary"
    else
      grep -E '^(gemm|rms_norm|flash_attention|baseline)/' "$results/bench.txt" | sed 's/^/    /' | tee -a "$summary"
      grep "ERROR OCCURRED" "$results/bench.txt" | grep -vq "unsupported: \|unavailable: "
      bench_rc=$(( $? == 0 ))
    fi
    if [ "$bench_rc" != 0 ]; then
      status=1
      say "  benchmarks: FAILED (an error other than unsupported / unavailable; see bench.txt)"
    fi
  else
    status=1
    say "  benchmarks: FAILED (touchstone-bench exited non-zero; see bench.txt)"
  fi
fi
say "done: results in $results ($([ $status = 0 ] && echo ok || echo FAILED))"
exit $status
