#!/usr/bin/env bash
# Source this to use the bundle's binaries from any shell:   source touchstone-*/env.sh
# It puts the bundle's bin/ on PATH and its lib/ on LD_LIBRARY_PATH, and finds the host's GPU drivers
# where the loaders would not look by themselves. Nothing of the host is changed.
#
#   TOUCHSTONE_BUNDLE_LIBSTDCXX=auto|bundled|host  which C++ runtime (libstdc++, libgcc_s): auto (the
#       default) takes the host's when it is new enough for the binaries, else the bundled one
#       (lib/compat/); a driver built with a newer compiler needs the host's newer one.
#   VK_DRIVER_FILES / VK_ICD_FILENAMES, OCL_ICD_VENDORS: set them to choose the drivers yourself.
ts_root=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export PATH="$ts_root/bin${PATH:+:$PATH}"
export LD_LIBRARY_PATH="$ts_root/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# Every binary must load with the host's C++ runtime (no "version `GLIBCXX_...' not found"), else
# the bundled one goes first.
ts_cxx_runtime=host
case "${TOUCHSTONE_BUNDLE_LIBSTDCXX:-auto}" in
  bundled) ts_cxx_runtime=bundled ;;
  host) ;;
  auto)
    for ts_bin in "$ts_root"/bin/*; do
      case "$("$ts_bin" --help 2>&1 </dev/null)" in
        *"GLIBCXX_"*"not found"* | *"CXXABI_"*"not found"* | *"GCC_"*"not found"*) ts_cxx_runtime=bundled ;;
      esac
    done ;;
  *) echo "env.sh: TOUCHSTONE_BUNDLE_LIBSTDCXX must be auto, bundled or host" >&2; return 1 2>/dev/null || exit 1 ;;
esac
if [ "$ts_cxx_runtime" = bundled ]; then export LD_LIBRARY_PATH="$ts_root/lib/compat:$LD_LIBRARY_PATH"; fi
export TOUCHSTONE_CXX_RUNTIME=$ts_cxx_runtime

# Directories a driver's libraries may sit in outside the loader's default path (NVIDIA's container
# mount is /usr/local/nvidia).
ts_driver_lib_dirs="/usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib /lib/x86_64-linux-gnu"
ts_add_driver_dir() {
  case ":$LD_LIBRARY_PATH:" in *":$1:"*) ;; *) export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$1" ;; esac
}

# Vulkan: the loader reads */vulkan/icd.d/*.json under XDG_DATA_DIRS (/usr/local/share:/usr/share),
# /etc/xdg and /etc. A driver installed elsewhere (NVIDIA's in /usr/local/nvidia/share) is named here.
if [ -z "${VK_DRIVER_FILES:-}${VK_ICD_FILENAMES:-}" ]; then
  ts_found=""
  IFS=: read -ra ts_dirs <<<"${XDG_DATA_DIRS:-/usr/local/share:/usr/share}"
  for d in "${ts_dirs[@]}" /etc/xdg /etc; do
    for f in "$d"/vulkan/icd.d/*.json; do [ -e "$f" ] && ts_found=1; done
  done
  if [ -z "$ts_found" ]; then
    ts_icds=""
    for f in /usr/local/nvidia/share/vulkan/icd.d/*.json /usr/local/nvidia/etc/vulkan/icd.d/*.json; do
      [ -e "$f" ] && ts_icds="${ts_icds:+$ts_icds:}$f"
    done
    if [ -n "$ts_icds" ]; then
      export VK_DRIVER_FILES="$ts_icds" VK_ICD_FILENAMES="$ts_icds"
      for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib; do [ -d "$d" ] && ts_add_driver_dir "$d"; done
    fi
  fi
fi

# OpenCL: the ICD loader reads /etc/OpenCL/vendors/*.icd. Without any, a known driver library found
# on the host gets an .icd file of its own in a private folder (OCL_ICD_VENDORS).
if [ -z "${OCL_ICD_VENDORS:-}" ] && ! ls /etc/OpenCL/vendors/*.icd >/dev/null 2>&1; then
  ts_vendors="${TMPDIR:-/tmp}/touchstone-ocl-vendors-$$"
  for d in $ts_driver_lib_dirs; do
    for lib in libnvidia-opencl.so.1 libpocl.so.2; do
      if [ -e "$d/$lib" ] && [ ! -e "$ts_vendors/${lib%%.so*}.icd" ]; then
        mkdir -p "$ts_vendors" && echo "$d/$lib" >"$ts_vendors/${lib%%.so*}.icd"
        export OCL_ICD_VENDORS="$ts_vendors"
        ts_add_driver_dir "$d"
      fi
    done
  done
fi
unset ts_bin ts_dirs ts_found ts_icds ts_vendors ts_driver_lib_dirs
