#!/usr/bin/env bash
# The bundle and the exported CMake package, end to end, from a built tree (default build/):
#  1. CPack makes the bundle (packaging/); it is unpacked into an empty folder, and ldd, in a bare
#     environment, must resolve every library of every binary inside it, glibc's own excepted;
#  2. its run.sh runs under `env -i` (no LD_LIBRARY_PATH, nothing of this shell): the smoke tier of
#     every backend, opencl and vulkan required (BUNDLE_REQUIRE to change), and one short
#     benchmark per backend;
#  3. `cmake --install` into a prefix, and examples/external_backend built against it with
#     find_package(touchstone): its conformance slice must pass and its benchmark run.
# Prints the bundle's size and the time from unpacking to the first matrix result.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
require=${BUNDLE_REQUIRE-opencl,vulkan}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cmake --build "$build" --target touchstone touchstone-conformance touchstone-bench >/dev/null
(cd "$build" && rm -rf package && cpack --config CPackConfig.cmake >/dev/null)
tarball=$(ls "$build"/package/touchstone-*-linux-*.tar.gz)
echo "bundle-test: $(basename "$tarball"): $(du -k "$tarball" | cut -f1) KiB"

# 1. Unpacked where nothing else is; every library from the bundle or glibc. With the bundled C++
#    runtime forced, so that its copy is checked too (run.sh picks the host's when new enough).
unpack_start=$(date +%s.%N)
mkdir "$tmp/host" && tar xzf "$tarball" -C "$tmp/host"
unpacked=$(date +%s.%N)
dir=$(echo "$tmp"/host/touchstone-*)
env -i PATH=/usr/bin:/bin TOUCHSTONE_BUNDLE_LIBSTDCXX=bundled \
  bash -c 'source "$1/env.sh" && for b in "$1"/bin/*; do echo "== $b"; ldd "$b"; done' _ "$dir" >"$tmp/ldd.txt"
glibc='^\s*(linux-vdso\.so\.1|/lib64/ld-linux-x86-64\.so\.2|(libc|libm|libdl|libpthread|librt|libresolv|libmvec)\.so\.[0-9]+ => /(usr/)?lib/x86_64-linux-gnu/)'
outside=$(grep -v '^==' "$tmp/ldd.txt" | grep -vE "$glibc" | grep -vE "=> $dir/(bin/\.\./)?lib/" || true)
if [ -n "$outside" ]; then
  echo "bundle-test: FAILED: libraries not from the bundle (nor glibc):"; echo "$outside"; exit 1
fi
echo "bundle-test: ldd: every library of $(grep -c '^==' "$tmp/ldd.txt") binaries resolves in the bundle or glibc"

# A host whose libstdc++ is too old (a stand-in that has none of its versions): env.sh must notice
# and put the bundled one first.
mkdir "$tmp/old-cxx" && cp "$(ldconfig -p | sed -n 's/^\s*libz\.so\.1 .*=> //p' | head -1)" "$tmp/old-cxx/libstdc++.so.6"
cxx=$(env -i PATH=/usr/bin:/bin LD_LIBRARY_PATH="$tmp/old-cxx" bash -c \
  'source "$1/env.sh" && touchstone list >/dev/null && echo "$TOUCHSTONE_CXX_RUNTIME"' _ "$dir")
[ "$cxx" = bundled ] || { echo "bundle-test: FAILED: env.sh kept a libstdc++ too old for the binaries"; exit 1; }
echo "bundle-test: env.sh takes the bundled libstdc++ when the host's is too old"

# A Vulkan driver mounted outside the loader's paths (as NVIDIA's is under /usr/local/nvidia): lavapipe's
# manifest under a stand-in root, the default paths emptied. Unavailable without env.sh's search.
lvp=$(ls /usr/share/vulkan/icd.d/lvp_icd*.json | head -1)
mkdir -p "$tmp/driver-root/share/vulkan/icd.d" && cp "$lvp" "$tmp/driver-root/share/vulkan/icd.d/"
vk_line() {
  env -i PATH=/usr/bin:/bin XDG_DATA_DIRS="$tmp/none" "$@" bash -c 'source "$1/env.sh" && touchstone list' _ "$dir" |
    grep '^vulkan: '
}
vk_line | grep -q UNAVAILABLE || { echo "bundle-test: FAILED: the stand-in for a driver outside the loader's paths is not"; exit 1; }
vk_line TOUCHSTONE_DRIVER_ROOTS="$tmp/driver-root" | grep -qv UNAVAILABLE ||
  { echo "bundle-test: FAILED: env.sh did not find the Vulkan driver under TOUCHSTONE_DRIVER_ROOTS"; exit 1; }
echo "bundle-test: env.sh finds a Vulkan driver mounted outside the loader's paths"
# The same host with no validation layer of its own: the bundle's layer validates.
vk_line TOUCHSTONE_DRIVER_ROOTS="$tmp/driver-root" | grep -q 'validation on' ||
  { echo "bundle-test: FAILED: the bundle's Vulkan validation layer was not used on a host without one"; exit 1; }
echo "bundle-test: the bundle's validation layer validates on a host without one"

# 2. run.sh with nothing of this environment.
quick='^rms_norm/(cpu|opencl|vulkan)/t512_d4096/|^baseline/(stream_triad|fma_peak)'
# PoCL's kernel cache is the host's (CI's main ctest run filled it): compiling every kernel cold takes
# PoCL two minutes here, and what is checked is the bundle, not PoCL's compiler.
env -i PATH=/usr/bin:/bin HOME="$tmp" POCL_CACHE_DIR="${POCL_CACHE_DIR:-${XDG_CACHE_HOME:-${HOME:-$tmp}/.cache}/pocl/kcache}" bash "$dir/run.sh" --tier smoke --require "$require" \
  --results "$tmp/results" --bench-filter "$quick" --dtypes F32,F16 --min-time 0.01 | tee "$tmp/run.txt"
first=$(sed -n 's/^\[+ *\([0-9.]*\)s\]   [a-z0-9_]*: .*/\1/p' "$tmp/run.txt" | head -1)
awk -v u0="$unpack_start" -v u1="$unpacked" -v f="$first" 'BEGIN {
  printf "bundle-test: unpacking %.1f s; first matrix result %.1f s after unpacking began\n", u1 - u0, (u1 - u0) + f }'
for f in summary.txt env.txt backends.txt bench.json bench.txt; do
  [ -s "$tmp/results/$f" ] || { echo "bundle-test: FAILED: run.sh left no results/$f"; exit 1; }
done
ls "$tmp"/results/conformance-*.json >/dev/null
# The device roofs ran beside the benchmarks, and the summary set each device benchmark against them.
for b in ${require//,/ }; do
  grep -q "\"baseline/device_read/$b/manual_time\"" "$tmp/results/bench.json" ||
    { echo "bundle-test: FAILED: run.sh measured no device roofs for $b"; exit 1; }
  grep -q "\"rms_norm/$b/t512_d4096/F16/manual_time\"" "$tmp/results/bench.json" ||
    { echo "bundle-test: FAILED: run.sh --dtypes F32,F16 registered no F16 benchmark for $b"; exit 1; }
  if command -v python3 >/dev/null; then
    grep -q "^rms_norm/$b/.* dev copy" "$tmp/results/bench-summary.txt" ||
      { echo "bundle-test: FAILED: the summary does not judge $b against its device's roofs"; exit 1; }
  fi
done
echo "bundle-test: run.sh measures the device roofs and prints device benchmarks as fractions of them"

# The Python module, where this build has one and the host's python3 has NumPy: from the bundle under
# env -i (env.sh puts it on PYTHONPATH), then from an install.
py_check='import touchstone as t; c = t.case("rms_norm", "t2_d33"); assert t.judge(c, t.run(c, "cpu"))'
if ls -d "$dir"/lib/python3*/dist-packages/touchstone >/dev/null 2>&1 && /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
  env -i PATH=/usr/bin:/bin bash -c 'source "$1/env.sh" && python3 -c "$2"' _ "$dir" "$py_check"
  echo "bundle-test: the Python module imports from the bundle and judges a cpu run"
fi

# 3. The package, and a backend from outside the tree.
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
if ls -d "$tmp"/prefix/lib/python3*/dist-packages/touchstone >/dev/null 2>&1 && /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
  PYTHONPATH=$(echo "$tmp"/prefix/lib/python3*/dist-packages) /usr/bin/python3 -c "$py_check"
  echo "bundle-test: the Python module imports from the install"
fi
cmake -S "$root/examples/external_backend" -B "$tmp/example" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/example" >/dev/null
ctest --test-dir "$tmp/example" --output-on-failure
echo "bundle-test: ok"
