#!/usr/bin/env bash
# Fuzzes the readers with libFuzzer for a while (default 60 s in all: two thirds to the case-file
# reader, one third to the GGUF reader, so CI's time stays what it was). The case-file fuzzer starts
# from the checked-in corpus and one valid case per op written by `touchstone gen`
# (fuzz/make-op-seeds.sh), so it starts inside every op's validation; the GGUF fuzzer from
# fuzz/corpus/gguf/ and ggml's own tests/data/ggml-gguf/model.gguf. New crashers land in
# fuzz/crashes/; minimise them and add them to fuzz/corpus/safetensors/ or fuzz/corpus/gguf/ so every
# build replays them (the fuzz/safetensors-corpus and fuzz/gguf-corpus tests).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
seconds=${1:-60}
gguf_seconds=$(( seconds / 3 > 0 ? seconds / 3 : 1 ))
case_seconds=$(( seconds - gguf_seconds > 0 ? seconds - gguf_seconds : 1 ))
build=${FUZZ_BUILD_DIR:-$root/build-fuzz}
CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTOUCHSTONE_FUZZ=ON >/dev/null
ninja -C "$build" safetensors-fuzzer gguf-fuzzer touchstone
mkdir -p "$here/crashes" "$build/corpus" "$build/gguf-corpus"
cp -n "$here"/corpus/safetensors/* "$build/corpus/" 2>/dev/null || true
bash "$here/make-op-seeds.sh" "$build/cli/touchstone" "$build/corpus"
"$build/fuzz/safetensors-fuzzer" -max_total_time="$case_seconds" -max_len=81920 -rss_limit_mb=2048 \
  -artifact_prefix="$here/crashes/" "$build/corpus" "$here/corpus/safetensors"
cp -n "$here"/corpus/gguf/* "$root/tests/data/ggml-gguf/model.gguf" "$build/gguf-corpus/" 2>/dev/null || true
"$build/fuzz/gguf-fuzzer" -max_total_time="$gguf_seconds" -max_len=65536 -rss_limit_mb=2048 \
  -artifact_prefix="$here/crashes/gguf-" "$build/gguf-corpus" "$here/corpus/gguf"
