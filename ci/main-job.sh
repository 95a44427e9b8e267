#!/usr/bin/env bash
# The main job, from a fresh Debian machine: install, build, run the conformance matrix on every
# available backend (a per-backend summary), then a short benchmark pass with a readable table.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash ci/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)"

echo
echo "== backends =="
build/cli/touchstone list | sed -n '1,/^$/p'
echo "== conformance matrix =="
status=0
for b in $(build/cli/touchstone list | sed -n 's/^\([a-z0-9_]*\): .*/\1/p'); do
  if ctest --test-dir build -L "^$b\$" -j"$(nproc)" >"build/ctest-$b.log" 2>&1; then verdict=ok; else verdict=FAILED; status=1; fi
  summary=$(grep -E "tests passed|tests failed" "build/ctest-$b.log" | tail -1)
  skipped=$(grep -c "Skipped" "build/ctest-$b.log" || true)
  printf '  %-10s %-7s %s%s  (log: build/ctest-%s.log)\n' "$b" "$verdict" "$summary" \
    "$([ "$skipped" -gt 0 ] && echo ", $skipped skipped (backend unavailable)")" "$b"
done
echo
echo "== benchmarks (short pass) =="
# Every op on cpu; on opencl and vulkan (PoCL and lavapipe here: CPU emulations, where one
# model-sized GEMM takes seconds) the memory-bound decode presets only.
python3 ci/bench-summary.py --bench build/bench/touchstone-bench --filter \
  '/cpu/|^(gemm|rms_norm|flash_attention)/(opencl|vulkan)/(m1_n4096_k4096|t512_d4096|decode_h32_kv8_hd128_ctx4096)/'

exit $status
