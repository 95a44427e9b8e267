#!/usr/bin/env bash
# Installs everything touchstone builds and tests with, from Debian's packages only.
set -euo pipefail
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends \
  build-essential cmake ninja-build pkg-config git python3 \
  libfmt-dev nlohmann-json3-dev libgtest-dev libgmock-dev libbenchmark-dev \
  libopenblas-dev libeigen3-dev libhwy-dev \
  clang libclang-rt-14-dev \
  ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo libclblast-dev \
  libvulkan-dev mesa-vulkan-drivers glslang-tools vulkan-validationlayers vulkan-tools libglvnd0 \
  python3-matplotlib chromium \
  python3-dev pybind11-dev python3-numpy python3-pytest \
  openmpi-bin libopenmpi-dev
