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
# Every cpu preset but the quant family's, whose model-sized weights take seconds each to generate (of
# those, the figures' presets only: Q4_K and Q8_0 decode, Q4_K prefill, GPTQ decode). Measured: a Q6_K
# decode preset takes 16-19 s whether it runs 30 iterations or 1, so generation, not iterations, is the
# cost. The moe expert GEMV / GEMM presets are quantized expert stacks of whole models (a minute each
# to generate, Mixtral's several): of those, the two moe figure presets only. Microsecond ops (the moe routing ops) run at most touchstone-bench's --cold-iterations per
# repetition, so they are in.
bench=build/bench/touchstone-bench
cpu_ops=$("$bench" --benchmark_list_tests --benchmark_filter='/cpu/' | cut -d/ -f1 | sort -u |
  grep -vxE 'gemm_quant|gemm_quant_fused|gemm_gptq|gemm_awq|dequantize|quantize|(gemv|gemm)_quant_moe_id.*' | paste -sd'|')
python3 ci/bench-summary.py --bench "$bench" --filter \
  "^($cpu_ops)/cpu/|^gemm_quant/cpu/(Q4_K_m1_n4096_k14336|Q8_0_m1_n4096_k14336|Q4_K_m512_n4096_k4096)/|^gemm_gptq/cpu/b4_g128_m1_n4096_k4096/|^(gemv_quant_moe_id_gate_up_silu/cpu/qwen3_30b_a3b_Q4_K_b1|gemm_quant_moe_id/cpu/qwen3_30b_a3b_Q4_K_t512)/|^(gemm|rms_norm|flash_attention)/(opencl|vulkan)/(m1_n4096_k4096|t512_d4096|decode_h32_kv8_hd128_ctx4096)/"

exit $status
