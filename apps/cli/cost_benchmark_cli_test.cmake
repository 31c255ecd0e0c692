# CLI checks of `seedance cost-benchmark`, run by ctest as
#   cmake -DSEEDANCE=<binary> -DWORK=<scratch dir> -DCASE=<case> -P cost_benchmark_cli_test.cmake
# Cases:
#   bad_prices     a bad price row: exit 2, message names file:line:column and field, no output
#   bad_workload   an unknown --workload: exit 2, the message lists the accepted values
#   one_seed       the bundled default with one seed: exit 0, both files written
cmake_minimum_required(VERSION 3.25)

file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
set(out "${WORK}/report")

function(expect_exit_2 message_regex)
  if(NOT rc EQUAL 2)
    message(FATAL_ERROR "expected exit 2, got ${rc}\nstdout: ${stdout}\nstderr: ${stderr}")
  endif()
  if(NOT stderr MATCHES "${message_regex}")
    message(FATAL_ERROR "stderr does not match '${message_regex}':\n${stderr}")
  endif()
  if(EXISTS "${out}")
    message(FATAL_ERROR "bad input left output behind in ${out}")
  endif()
endfunction()

if(CASE STREQUAL "bad_prices")
  file(WRITE "${WORK}/prices.csv" "gpu_model,usd_per_gpu_hour_on_demand\nG2,2.85\nT4,cheap\n")
  execute_process(COMMAND "${SEEDANCE}" cost-benchmark --prices "${WORK}/prices.csv" --out "${out}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  expect_exit_2("prices\\.csv:3:4: field 'usd_per_gpu_hour_on_demand'")
elseif(CASE STREQUAL "bad_workload")
  execute_process(COMMAND "${SEEDANCE}" cost-benchmark --workload philly --out "${out}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  expect_exit_2("unknown workload 'philly' \\(accepted: openb\\)")
elseif(CASE STREQUAL "one_seed")
  execute_process(COMMAND "${SEEDANCE}" cost-benchmark --seeds 42 --out "${out}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "exit ${rc}\nstdout: ${stdout}\nstderr: ${stderr}")
  endif()
  foreach(f results.json cost_optimization_report.html)
    if(NOT EXISTS "${out}/${f}")
      message(FATAL_ERROR "missing ${out}/${f}")
    endif()
  endforeach()
  if(NOT stdout MATCHES "stranded \\$/mo")
    message(FATAL_ERROR "no cost table on stdout:\n${stdout}")
  endif()
else()
  message(FATAL_ERROR "unknown CASE '${CASE}'")
endif()
file(REMOVE_RECURSE "${WORK}")
