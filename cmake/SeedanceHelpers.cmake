# Target helpers on the abseil model: one library per module, tests and benchmarks beside the code.

add_library(seedance_warnings INTERFACE)
target_compile_options(seedance_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion -Wnon-virtual-dtor
  -Woverloaded-virtual -Wold-style-cast -Wimplicit-fallthrough)

# Tests and benchmarks are built with the release flags (-O3) in the ci preset. GCC 12 at -O3
# reports false -Wrestrict on `"literal" + std::string` (GCC PR105651) and false
# -Wmaybe-uninitialized on aggregates of vectors copied in test fixtures (PR107138); product code
# (the libraries and the binary) keeps both warnings as errors.
add_library(seedance_test_warnings INTERFACE)
target_link_libraries(seedance_test_warnings INTERFACE seedance_warnings)
target_compile_options(seedance_test_warnings INTERFACE
  $<$<CXX_COMPILER_ID:GNU>:-Wno-restrict -Wno-maybe-uninitialized>)

# seedance_cc_library(NAME name SRCS ... DEPS ...): builds target seedance_<name>, alias seedance::<name>.
# Include form everywhere: #include "seedance/<module>/<file>.h".
function(seedance_cc_library)
  cmake_parse_arguments(ARG "" "NAME" "SRCS;DEPS" ${ARGN})
  set(target seedance_${ARG_NAME})
  add_library(${target} STATIC ${ARG_SRCS})
  add_library(seedance::${ARG_NAME} ALIAS ${target})
  target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${target} PUBLIC ${ARG_DEPS} PRIVATE seedance_warnings)
endfunction()

# seedance_cc_test(NAME name SRCS ... DEPS ... [LABELS ...]): a GoogleTest binary registered with ctest.
function(seedance_cc_test)
  if(NOT SEEDANCE_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(ARG "" "NAME" "SRCS;DEPS;LABELS" ${ARGN})
  if(NOT ARG_LABELS)
    set(ARG_LABELS unit)
  endif()
  add_executable(${ARG_NAME} ${ARG_SRCS})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS} GTest::gmock GTest::gtest_main seedance_test_warnings)
  target_compile_definitions(${ARG_NAME} PRIVATE SEEDANCE_TEST_DATA_DIR="${SEEDANCE_SOURCE_DATA_DIR}")
  list(LENGTH ARG_LABELS n_labels)
  if(n_labels EQUAL 1)
    gtest_discover_tests(${ARG_NAME} PROPERTIES LABELS "${ARG_LABELS}" DISCOVERY_TIMEOUT 60)
  else()
    # gtest_discover_tests cannot carry a list-valued property: register the whole binary.
    add_test(NAME ${ARG_NAME} COMMAND ${ARG_NAME})
    set_tests_properties(${ARG_NAME} PROPERTIES LABELS "${ARG_LABELS}")
  endif()
endfunction()

# seedance_cc_benchmark(NAME name SRCS ... DEPS ...): a Google Benchmark binary; ctest runs a smoke pass.
function(seedance_cc_benchmark)
  if(NOT SEEDANCE_BUILD_BENCHMARKS)
    return()
  endif()
  cmake_parse_arguments(ARG "" "NAME" "SRCS;DEPS" ${ARGN})
  add_executable(${ARG_NAME} ${ARG_SRCS})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS} benchmark::benchmark seedance_test_warnings)
  target_compile_definitions(${ARG_NAME} PRIVATE SEEDANCE_TEST_DATA_DIR="${SEEDANCE_SOURCE_DATA_DIR}")
  if(SEEDANCE_BUILD_TESTS)
    add_test(NAME ${ARG_NAME}.smoke COMMAND ${ARG_NAME} --benchmark_min_time=0.01)
    # SEEDANCE_BENCH_SMOKE: a benchmark may shrink its inputs for this pass (the code path, not the figure).
    set_tests_properties(${ARG_NAME}.smoke PROPERTIES LABELS "bench" ENVIRONMENT "SEEDANCE_BENCH_SMOKE=1")
  endif()
endfunction()
