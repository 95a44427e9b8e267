#!/usr/bin/env bash
# One prepared run on a GPU host, from bundles built elsewhere (`cpack` in a build tree; packaging/),
# the figures first, since a lease may end before the last step:
#  1. the device roofs and the decode presets from the bundle under test (run.sh's benchmark pass and
#     summary);
#  2. with --base-bench, A/B rounds of the presets --ab-filter names between that touchstone-bench (an
#     earlier commit's, built with the same toolchain: it runs on the bundle's libraries) and the
#     bundle's, alternating which goes first (ci/bench-ab.py), so that a change is judged on the same
#     device in the same run. A gzipped binary is taken as it is;
#  3. the device backends' slice of the conformance matrix, the Vulkan validation layer on (run.sh
#     --no-bench; --tier none skips it); with --ops, also the full tier of those ops on each device
#     backend (the kernels a change touched).
# Every result lands in --results (text and JSON); a step that runs past its time limit is cut and
# said so, and the next one still runs.
#
#   bash ci/gpu-run.sh --bundle NEW.tar.gz --results DIR [--base-bench OLD-touchstone-bench[.gz]] [--tier none|smoke|ci|full]
#        [--ops OP1,OP2] [--dtypes F32,F16] [--bench-filter REGEX] [--ab-filter REGEX] [--rounds N] [--limit-s SECONDS]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bundle="" base="" results="" tier=ci rounds=2 limit=240 ops="" dtypes=F32,F16
bench_filter='^gemm_quant/(vulkan|opencl)/(Q4_0|Q4_1|Q8_0|Q4_K|Q5_K|Q6_K)_m1_n4096_k14336/F32|^gemm_(gptq|awq)/(vulkan|opencl)/[a-z0-9_]*m1_n4096_k4096/F32|^flash_attention/(vulkan|opencl)/decode_h32_kv8_hd128_ctx4096/(F32|F16)|^kv_paged_decode_attention/(vulkan|opencl)/llama3_8b_ctx4096_(F16|I8|F8_E4M3)/F16|^paged_decode_attention/(vulkan|opencl)/llama3_8b_b8_ctx4096/F16|^gemv_quant_moe_id_gate_up_silu/(vulkan|opencl)/qwen3_30b_a3b_Q4_K_b1/F32|^paged_varlen_attention/(vulkan|opencl)/llama3_8b_mixed7/F32|^baseline/(stream_read|clblast_sgemm/m512_n4096_k4096)'
ab_filter='^gemm_quant/vulkan/Q[0-9]_[0-9K]+_m1_n4096_k14336/'
usage() { sed -n 's/^#   //p;s/^#        //p' "$0" >&2; exit 1; }
while [ $# -gt 0 ]; do
  case "$1" in
    --bundle) bundle=${2:?}; shift ;;
    --base-bench) base=${2:?}; shift ;;
    --results) results=${2:?}; shift ;;
    --tier) tier=${2:?}; shift ;;
    --ops) ops=${2:?}; shift ;;
    --dtypes) dtypes=${2:?}; shift ;;
    --bench-filter) bench_filter=${2:?}; shift ;;
    --ab-filter) ab_filter=${2:?}; shift ;;
    --rounds) rounds=${2:?}; shift ;;
    --limit-s) limit=${2:?}; shift ;;
    -h|--help) usage ;;
    *) echo "gpu-run: unknown option '$1'" >&2; usage ;;
  esac
  shift
done
[ -n "$bundle" ] && [ -n "$results" ] || usage
[ -f "$bundle" ] || { echo "gpu-run: no bundle at $bundle" >&2; exit 1; }
[ -z "$base" ] || [ -f "$base" ] || { echo "gpu-run: no base touchstone-bench at $base" >&2; exit 1; }
mkdir -p "$results" && results=$(cd "$results" && pwd) || exit 1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

unpack() {  # tarball, folder -> the bundle's root
  mkdir -p "$2" && tar xzf "$1" -C "$2" && echo "$2"/touchstone-*
}
new=$(unpack "$bundle" "$work/new") || exit 1
{
  echo "bundle: $(basename "$bundle")"
  [ -z "$base" ] || echo "base touchstone-bench: $(basename "$base")"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv 2>&1 || true
  nproc
} | tee "$results/host.txt"

status=0
child=""
trap '[ -n "$child" ] && kill -TERM "$child" 2>/dev/null; wait; exit 124' TERM INT
step() {  # name, command...: runs it under the time limit, says how it ended
  local name=$1; shift
  local t0; t0=$(date +%s)
  # In the background, so that a TERM to this script reaches the step: timeout runs it in a process
  # group of its own, which a signal to this script's group would miss (and a step left running
  # holds the caller's pipe open).
  timeout "$limit" "$@" &
  child=$!
  wait "$child"
  local rc=$?
  child=""
  echo "gpu-run: $name: exit $rc after $(( $(date +%s) - t0 )) s$([ $rc = 124 ] && echo " (cut at ${limit} s)")" | tee -a "$results/steps.txt"
  [ $rc = 0 ] || status=1
}

step benchmarks bash "$new/run.sh" --no-matrix --bench-filter "$bench_filter" --dtypes "$dtypes" --results "$results/bench"
if [ -n "$base" ]; then
  # Beside the bundle's own, so that its RPATH ($ORIGIN/../lib) finds the bundle's libraries.
  old="$new/bin/touchstone-bench-base"
  case "$base" in *.gz) gzip -dc "$base" >"$old" ;; *) cp "$base" "$old" ;; esac
  chmod +x "$old"
  step ab bash -c 'source "$1/env.sh" && python3 "$2/bench-ab.py" --a "$3" --b "$1/bin/touchstone-bench" \
      --filter "$4" --rounds "$5" --min-time 0.1 -- --dtypes="$7" >"$6/ab.txt" 2>"$6/ab.log"; rc=$?; cat "$6/ab.txt"; exit $rc' \
    _ "$new" "$here" "$old" "$ab_filter" "$rounds" "$results" "$dtypes"
fi
[ "$tier" = none ] || step conformance bash "$new/run.sh" --tier "$tier" --no-bench --require opencl,vulkan \
  --backends opencl,vulkan --results "$results/conformance"
for op in ${ops//,/ }; do
  for b in vulkan opencl; do
    step "full tier of $op on $b" bash -c 'source "$1/env.sh" && touchstone-conformance --backend="$2" --op="$3" --tier=full \
        --failures="$4/failures" >"$4/full-$3-$2.txt" 2>&1; rc=$?; tail -3 "$4/full-$3-$2.txt"; exit $rc' _ "$new" "$b" "$op" "$results"
  done
done
exit $status
