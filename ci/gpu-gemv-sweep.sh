#!/usr/bin/env bash
# The decode GEMVs' shapes swept on a GPU host, from a bundle built elsewhere: each shape (work-group
# size, rows a group and, on Vulkan, a cap on the groups) runs the presets in a process of its own,
# through the planners' tuning knobs (TOUCHSTONE_VULKAN_GEMV, TOUCHSTONE_OPENCL_GEMV), cold and, for
# the default shape, warm (the weights left in the L2: a kernel as slow warm as cold is not bound by
# the device's memory). One JSON per run lands in --results, and a table of medians on stdout.
#
#   bash ci/gpu-gemv-sweep.sh --bundle NEW.tar.gz --results DIR [--kinds Q4_K,Q8_0] [--vulkan "256,4 128,4 ..."]
#        [--opencl "256,4 ..."]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bundle="" results="" kinds="Q4_K,Q8_0"
vulkan_shapes="256,4 128,4 64,4 256,8 256,1 256,4,264 256,8,264"
opencl_shapes="256,4 128,8 256,1"
while [ $# -gt 0 ]; do
  case "$1" in
    --bundle) bundle=${2:?}; shift ;;
    --results) results=${2:?}; shift ;;
    --kinds) kinds=${2:?}; shift ;;
    --vulkan) vulkan_shapes=${2?}; shift ;;
    --opencl) opencl_shapes=${2?}; shift ;;
    *) sed -n 's/^#   //p;s/^#        //p' "$0" >&2; exit 1 ;;
  esac
  shift
done
[ -f "$bundle" ] && [ -n "$results" ] || { sed -n 's/^#   //p' "$0" >&2; exit 1; }
mkdir -p "$results" && results=$(cd "$results" && pwd) || exit 1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tar xzf "$bundle" -C "$work" || exit 1
root=$(echo "$work"/touchstone-*)
# shellcheck source=/dev/null
source "$root/env.sh" || exit 1
presets="(${kinds//,/|})_m1_n4096_k14336/F32"

run() {  # backend, shape ("" for the default), label, extra flags...
  local b=$1 shape=$2 label=$3; shift 3
  local var=TOUCHSTONE_VULKAN_GEMV
  [ "$b" = opencl ] && var=TOUCHSTONE_OPENCL_GEMV
  env ${shape:+$var=$shape} touchstone-bench --benchmark_filter="^gemm_quant/$b/$presets" --benchmark_min_time=0.1 \
    --benchmark_repetitions=3 --benchmark_out="$results/$b-$label.json" --benchmark_out_format=json "$@" \
    >"$results/$b-$label.txt" 2>&1 || echo "gpu-gemv-sweep: $b $label failed (see $b-$label.txt)"
}
run vulkan "" warm --warm-cache
run opencl "" warm --warm-cache
for s in $vulkan_shapes; do run vulkan "$s" "${s//,/x}"; done
for s in $opencl_shapes; do run opencl "$s" "${s//,/x}"; done
python3 - "$results" <<'PY'
import glob, json, os, statistics, sys
rows = []
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    label = os.path.basename(f)[:-5]
    try:
        bs = json.load(open(f))["benchmarks"]
    except Exception as e:
        print(f"{label}: unreadable ({e})"); continue
    times = {}
    for b in bs:
        if b.get("run_type") == "aggregate" or b.get("error_occurred"):
            continue
        times.setdefault(b["run_name"], []).append(b["real_time"])
    for name, t in sorted(times.items()):
        rows.append((label, name.split("/")[2], statistics.median(t)))
for label, preset, t in rows:
    print(f"{label:24s} {preset:28s} {t:8.1f} us")
PY
