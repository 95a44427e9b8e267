#!/usr/bin/env bash
# Benchmarks swept over the planners' tuning knobs on a GPU host, from a bundle built elsewhere: each
# setting (knobs as VAR=VALUE words, or "-" for the planners' own choice) runs the filter's presets in
# a process of its own, three repetitions, cold; with --warm the planners' own choice once more with
# the caches left warm (a kernel as slow warm as cold is not bound by the device's memory). One JSON
# per run lands in --results, and a table of medians on stdout.
#
#   bash ci/gpu-sweep.sh --bundle NEW.tar.gz --results DIR --filter REGEX [--dtypes F32,F16] [--warm] SETTING...
#
# e.g. the Vulkan decode attention's rounds of loads and key pieces:
#   bash ci/gpu-sweep.sh --bundle B --results R --dtypes F16 --warm \
#     --filter '^kv_paged_decode_attention/vulkan/llama3_8b_ctx4096_(F16|I8)/F16' \
#     - TOUCHSTONE_VULKAN_ATTN_ROUNDS=4 'TOUCHSTONE_VULKAN_ATTN_ROUNDS=4 TOUCHSTONE_VULKAN_ATTN_PIECE=256'
set -uo pipefail
bundle="" results="" filter="" dtypes=F32 warm=0
settings=()
usage() { sed -n 's/^#   //p' "$0" >&2; exit 1; }
while [ $# -gt 0 ]; do
  case "$1" in
    --bundle) bundle=${2:?}; shift ;;
    --results) results=${2:?}; shift ;;
    --filter) filter=${2:?}; shift ;;
    --dtypes) dtypes=${2:?}; shift ;;
    --warm) warm=1 ;;
    --*) echo "gpu-sweep: unknown option '$1'" >&2; usage ;;
    *) settings+=("$1") ;;
  esac
  shift
done
[ -f "$bundle" ] && [ -n "$results" ] && [ -n "$filter" ] && [ ${#settings[@]} -gt 0 ] || usage
mkdir -p "$results" && results=$(cd "$results" && pwd) || exit 1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tar xzf "$bundle" -C "$work" || exit 1
root=$(echo "$work"/touchstone-*)
# shellcheck source=/dev/null
source "$root/env.sh" || exit 1

# A setting's file name: its knobs without the TOUCHSTONE_ prefix, '=' as '-', ',' as 'x'.
label_of() {
  local s=$1
  [ "$s" = - ] && { echo default; return; }
  s=${s//TOUCHSTONE_/}; s=${s//=/-}; s=${s//,/x}; s=${s// /_}
  echo "$s"
}

run() {  # setting, label, extra flags...
  local setting=$1 label=$2; shift 2
  local knobs=()
  [ "$setting" = - ] || read -r -a knobs <<<"$setting"
  env "${knobs[@]}" touchstone-bench --dtypes="$dtypes" --benchmark_filter="$filter" --benchmark_min_time=0.1 \
    --benchmark_repetitions=3 --benchmark_out="$results/$label.json" --benchmark_out_format=json "$@" \
    >"$results/$label.txt" 2>&1 || echo "gpu-sweep: $label failed (see $label.txt)"
}
[ "$warm" = 0 ] || run - default-warm --warm-cache
for s in "${settings[@]}"; do run "$s" "$(label_of "$s")"; done
python3 - "$results" <<'PY'
import glob, json, os, statistics, sys
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
        print(f"{label:40s} {name.removesuffix('/manual_time'):64s} {statistics.median(t):9.1f} us")
PY
