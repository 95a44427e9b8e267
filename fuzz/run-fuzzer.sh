#!/usr/bin/env bash
# Fuzzes the case-file reader with libFuzzer for a while (default 60 s), starting from the
# checked-in corpus and one valid case per op written by `touchstone gen` (fuzz/make-op-seeds.sh),
# so the fuzzer starts inside every op's validation. New crashers land in fuzz/crashes/; minimise
# them and add them to fuzz/corpus/safetensors/ so every build replays them (the
# fuzz/safetensors-corpus test).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
seconds=${1:-60}
build=${FUZZ_BUILD_DIR:-$root/build-fuzz}
CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTOUCHSTONE_FUZZ=ON >/dev/null
ninja -C "$build" safetensors-fuzzer touchstone
mkdir -p "$here/crashes" "$build/corpus"
cp -n "$here"/corpus/safetensors/* "$build/corpus/" 2>/dev/null || true
bash "$here/make-op-seeds.sh" "$build/cli/touchstone" "$build/corpus"
"$build/fuzz/safetensors-fuzzer" -max_total_time="$seconds" -max_len=81920 -rss_limit_mb=2048 \
  -artifact_prefix="$here/crashes/" "$build/corpus" "$here/corpus/safetensors"
