# touchstone_add_backend(NAME <backend> TARGET <library>)
#
# An out-of-tree backend's own conformance and benchmark binaries: <NAME>-conformance and <NAME>-bench
# are touchstone's matrix and benchmark registry (the same main(), the same typed cases, goldens,
# judge and presets) linked with <library>, which registers the backend named <NAME> from a static
# initializer (ts::register_backend<B>(), core/backend.h). The built-in backends stay in both binaries,
# beside it. CTest gets:
#   conformance/<NAME>         its ci-tier slice with the goldens (the backend must be available)
#   conformance/<NAME>/smoke   its smoke tier
#   bench/<NAME>/registered    its benchmarks are registered (the list is not empty)
function(touchstone_add_backend)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "NAME;TARGET" "")
  if(NOT arg_NAME OR NOT arg_TARGET)
    message(FATAL_ERROR "touchstone_add_backend: usage: touchstone_add_backend(NAME <backend> TARGET <library>)")
  endif()
  if(NOT TARGET ${arg_TARGET})
    message(FATAL_ERROR "touchstone_add_backend: '${arg_TARGET}' is not a target")
  endif()
  # The registration sits in a static initializer that nothing references: a static library must be
  # linked whole, or the linker drops it.
  get_target_property(type ${arg_TARGET} TYPE)
  if(type STREQUAL "STATIC_LIBRARY")
    set(backend_lib "$<LINK_LIBRARY:WHOLE_ARCHIVE,${arg_TARGET}>")
  else()
    set(backend_lib ${arg_TARGET})
  endif()

  add_executable(${arg_NAME}-conformance)
  target_link_libraries(${arg_NAME}-conformance PRIVATE ${backend_lib} touchstone::conformance_main)
  add_executable(${arg_NAME}-bench)
  target_link_libraries(${arg_NAME}-bench PRIVATE ${backend_lib} touchstone::bench_main)

  add_test(NAME conformance/${arg_NAME}
           COMMAND ${arg_NAME}-conformance --backend=${arg_NAME} --tier=ci --require-available
                   --golden-dir=${touchstone_GOLDEN_DIR} --failures=${CMAKE_BINARY_DIR}/failures)
  add_test(NAME conformance/${arg_NAME}/smoke
           COMMAND ${arg_NAME}-conformance --backend=${arg_NAME} --tier=smoke --require-available --no-goldens)
  set_tests_properties(conformance/${arg_NAME} conformance/${arg_NAME}/smoke PROPERTIES LABELS "${arg_NAME}")
  add_test(NAME bench/${arg_NAME}/registered
           COMMAND ${arg_NAME}-bench --benchmark_list_tests "--benchmark_filter=^[a-z0-9_]+/${arg_NAME}/")
  set_tests_properties(bench/${arg_NAME}/registered PROPERTIES LABELS "${arg_NAME};bench"
                       PASS_REGULAR_EXPRESSION "/${arg_NAME}/")
endfunction()
