# Install-time script of the "bundle" component: copies into lib/ every shared library the three
# binaries load, directly or through another library, except glibc's own (a host always has them, and
# they must match its kernel and dynamic loader). The C++ runtime (libstdc++, libgcc_s) goes to
# lib/compat/: env.sh puts it on the path only when the host's own is older than the one the
# binaries were built against, because a host's GPU driver or PoCL may need its newer one.
# Set by install(CODE) before this runs: TS_BUNDLE_TOOLS, TS_BUNDLE_LIBDIR, TS_BUNDLE_SEARCH.
set(glibc "^(ld-linux[-a-z0-9_]*|libc|libm|libdl|libpthread|librt|libresolv|libutil|libanl|libnsl|libmvec|libBrokenLocale)\\.so(\\.[0-9]+)*$")
file(GET_RUNTIME_DEPENDENCIES
  EXECUTABLES ${TS_BUNDLE_TOOLS}
  RESOLVED_DEPENDENCIES_VAR resolved
  UNRESOLVED_DEPENDENCIES_VAR unresolved
  DIRECTORIES ${TS_BUNDLE_SEARCH}
  PRE_EXCLUDE_REGEXES "${glibc}")
if(unresolved)
  message(FATAL_ERROR "bundle: cannot find ${unresolved} (needed by ${TS_BUNDLE_TOOLS})")
endif()
set(dest "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}/${TS_BUNDLE_LIBDIR}")
foreach(lib ${resolved})
  get_filename_component(name ${lib} NAME)
  if(name MATCHES "${glibc}")
    continue()
  endif()
  # The name the binaries ask for (the soname, often a symbolic link), with the file's own bytes.
  file(REAL_PATH ${lib} real)
  if(name MATCHES "^(libstdc\\+\\+|libgcc_s)\\.so")
    set(dir ${dest}/compat)
  else()
    set(dir ${dest})
  endif()
  message(STATUS "bundle: ${dir}/${name} (from ${real})")
  file(MAKE_DIRECTORY ${dir})
  file(COPY_FILE ${real} ${dir}/${name} ONLY_IF_DIFFERENT)
endforeach()
