#!/usr/bin/env bash
# The decode GEMVs' shapes swept on a GPU host, from a bundle built elsewhere (ci/gpu-sweep.sh): each
# shape (work-group size, rows a group and, on Vulkan, a cap on the groups) through the planners'
# tuning knobs (TOUCHSTONE_VULKAN_GEMV, TOUCHSTONE_OPENCL_GEMV), and each backend's own shape warm.
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
presets="(${kinds//,/|})_m1_n4096_k14336/F32"
for b in vulkan opencl; do
  var=TOUCHSTONE_VULKAN_GEMV shapes=$vulkan_shapes
  [ "$b" = opencl ] && var=TOUCHSTONE_OPENCL_GEMV shapes=$opencl_shapes
  settings=()
  for s in $shapes; do settings+=("$var=$s"); done
  bash "$here/gpu-sweep.sh" --bundle "$bundle" --results "$results/$b" --filter "^gemm_quant/$b/$presets" --warm \
    "${settings[@]}" || exit 1
done
