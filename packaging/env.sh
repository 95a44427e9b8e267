#!/usr/bin/env bash
# Source this to use the bundle's binaries from any shell:   source touchstone-*/env.sh
# It puts the bundle's bin/ on PATH and its lib/ on LD_LIBRARY_PATH, and finds the host's GPU drivers
# where the loaders would not look by themselves. Nothing of the host is changed.
#
#   TOUCHSTONE_BUNDLE_LIBSTDCXX=auto|bundled|host  which C++ runtime (libstdc++, libgcc_s): auto (the
#       default) takes the host's when it is new enough for the binaries, else the bundled one
#       (lib/compat/); a driver built with a newer compiler needs the host's newer one.
#   TOUCHSTONE_DRIVER_ROOTS="/usr/local/nvidia"  where drivers outside the loaders' paths are mounted.
#   VK_DRIVER_FILES / VK_ICD_FILENAMES / VK_ADD_DRIVER_FILES, OCL_ICD_VENDORS: set one to choose the
#       drivers yourself; env.sh then leaves that API's drivers alone.
ts_root=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export PATH="$ts_root/bin${PATH:+:$PATH}"
export LD_LIBRARY_PATH="$ts_root/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# The Python module touchstone, when the bundle has one (built for one Python minor version: its folder
# says which).
for ts_py in "$ts_root"/lib/python3*/dist-packages; do
  [ -d "$ts_py/touchstone" ] && export PYTHONPATH="$ts_py${PYTHONPATH:+:$PYTHONPATH}"
done

# Every binary must load with the host's C++ runtime (there, and no "version `GLIBCXX_...' not
# found"), else the bundled one goes first.
ts_cxx_runtime=host
case "${TOUCHSTONE_BUNDLE_LIBSTDCXX:-auto}" in
  bundled) ts_cxx_runtime=bundled ;;
  host) ;;
  auto)
    for ts_bin in "$ts_root"/bin/*; do
      case "$("$ts_bin" --help 2>&1 </dev/null)" in
        *"GLIBCXX_"*"not found"* | *"CXXABI_"*"not found"* | *"GCC_"*"not found"* | \
        *"loading shared libraries: libstdc++"* | *"loading shared libraries: libgcc_s"*) ts_cxx_runtime=bundled ;;
      esac
    done ;;
  *) echo "env.sh: TOUCHSTONE_BUNDLE_LIBSTDCXX must be auto, bundled or host" >&2; return 1 2>/dev/null || exit 1 ;;
esac
if [ "$ts_cxx_runtime" = bundled ]; then export LD_LIBRARY_PATH="$ts_root/lib/compat:$LD_LIBRARY_PATH"; fi
export TOUCHSTONE_CXX_RUNTIME=$ts_cxx_runtime

# Folders a GPU driver is mounted under, outside the loaders' default paths: NVIDIA's container
# mount by default (TOUCHSTONE_DRIVER_ROOTS, space-separated, to name others). Each may hold
# share/vulkan/icd.d, etc/vulkan/icd.d, lib64 and lib.
ts_roots=${TOUCHSTONE_DRIVER_ROOTS:-/usr/local/nvidia}
ts_driver_lib_dirs=""
for r in $ts_roots; do ts_driver_lib_dirs="$ts_driver_lib_dirs $r/lib64 $r/lib"; done
ts_driver_lib_dirs="$ts_driver_lib_dirs /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib /lib/x86_64-linux-gnu"
ts_add_driver_dir() {
  case ":$LD_LIBRARY_PATH:" in *":$1:"*) ;; *) export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$1" ;; esac
}

# Vulkan: the loader reads */vulkan/icd.d/*.json under XDG_DATA_DIRS, /etc/xdg and /etc. A driver
# under one of those roots is added to them; its libraries are named by soname, so the root's
# library folders join the library path.
if [ -z "${VK_DRIVER_FILES:-}${VK_ICD_FILENAMES:-}${VK_ADD_DRIVER_FILES:-}" ]; then
  for r in $ts_roots; do
    ts_added=""
    for f in "$r"/share/vulkan/icd.d/*.json "$r"/etc/vulkan/icd.d/*.json; do
      [ -e "$f" ] && ts_added=1 && export VK_ADD_DRIVER_FILES="${VK_ADD_DRIVER_FILES:+$VK_ADD_DRIVER_FILES:}$f"
    done
    if [ -n "$ts_added" ]; then
      for d in "$r/lib64" "$r/lib"; do [ -d "$d" ] && ts_add_driver_dir "$d"; done
      ts_vk_from_root=1
    fi
  done
fi
# The bundle's Vulkan validation layer, after the host's own layer folders (the loader reads
# */vulkan/explicit_layer.d under XDG_DATA_DIRS; unset means /usr/local/share:/usr/share), so that a
# GPU host without the layer validates too. TOUCHSTONE_VULKAN_VALIDATION=0 turns validation off.
if [ -d "$ts_root/share/vulkan/explicit_layer.d" ]; then
  export XDG_DATA_DIRS="${XDG_DATA_DIRS:-/usr/local/share:/usr/share}:$ts_root/share"
fi
# NVIDIA's Vulkan driver needs glvnd's libEGL and libGLdispatch; a container with the driver mounted
# may have no glvnd, and then vkCreateInstance fails with VK_ERROR_INCOMPATIBLE_DRIVER. The bundle's
# copies are added last, and only when the host's library cache and the driver's folders lack one.
if [ -n "${ts_vk_from_root:-}" ] && [ -d "$ts_root/lib/glvnd" ]; then
  ts_cache=$({ ldconfig -p 2>/dev/null || /sbin/ldconfig -p 2>/dev/null; })
  for ts_lib in libEGL.so.1 libGLdispatch.so.0; do
    ts_have=""
    case "$ts_cache" in *"$ts_lib "*) ts_have=1 ;; esac
    for d in ${LD_LIBRARY_PATH//:/ }; do [ -e "$d/$ts_lib" ] && ts_have=1; done
    [ -z "$ts_have" ] && ts_add_driver_dir "$ts_root/lib/glvnd"
  done
fi

# OpenCL: the ICD loader reads /etc/OpenCL/vendors/*.icd. A known driver library on the host that no
# .icd file names (NVIDIA's, mounted without its .icd) gets one, in a private copy of that folder.
if [ -z "${OCL_ICD_VENDORS:-}" ]; then
  ts_named=$(cat /etc/OpenCL/vendors/*.icd 2>/dev/null)
  ts_vendors="${TMPDIR:-/tmp}/touchstone-ocl-vendors-$$"
  for d in $ts_driver_lib_dirs; do
    for lib in libnvidia-opencl.so.1 libpocl.so.2; do
      [ -e "$d/$lib" ] || continue
      case "$ts_named" in *"$lib"*) continue ;; esac
      mkdir -p "$ts_vendors" && echo "$d/$lib" >"$ts_vendors/${lib%%.so*}.icd"
      ts_named="$ts_named $d/$lib"
      ts_add_driver_dir "$d"
    done
  done
  if [ -d "$ts_vendors" ]; then
    cp /etc/OpenCL/vendors/*.icd "$ts_vendors/" 2>/dev/null
    export OCL_ICD_VENDORS="$ts_vendors"
  fi
fi
unset ts_bin ts_named ts_vendors ts_driver_lib_dirs ts_roots ts_added ts_vk_from_root ts_have ts_cache ts_lib r
unset -f ts_add_driver_dir
