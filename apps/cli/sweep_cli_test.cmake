# CLI checks of `seedance sweep`, run by ctest as
#   cmake -DSEEDANCE=<binary> -DEXAMPLE=<grid> -DWORK=<scratch> -DCASE=<case> -P sweep_cli_test.cmake
# bad_key / bad_value / bad_policy: exit 2, the grid file, line and key named, no output directory.
# local_rerun: the example grid locally, then a rerun that runs nothing and writes the same bytes;
# one deleted cell is the only one the next rerun runs.
cmake_minimum_required(VERSION 3.25)

file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
set(out "${WORK}/out")
include("${CMAKE_CURRENT_LIST_DIR}/cli_test_helpers.cmake")

function(run_bad grid_text regex)
  file(WRITE "${WORK}/grid.yaml" "${grid_text}")
  execute_process(COMMAND "${SEEDANCE}" sweep --grid "${WORK}/grid.yaml" --out "${out}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  expect_exit_2("${regex}")
endfunction()

set(head "workloads: [llm-finetune]\npolicies: [fifo, seedance]\nseeds: [0, 1]\n")
if(CASE STREQUAL "bad_key")
  run_bad("${head}value:\n  duration: 1d\n"
          "grid.yaml:4: key 'value': unknown key \\(allowed: config, fleet, policies, seeds, values, workloads\\)")
  run_bad("${head}values:\n  duration: 1d\n  scheduler.cost_aware.max_price: [0.5]\n"
          "grid.yaml:6: key 'values.scheduler.cost_aware.max_price': unknown key")
elseif(CASE STREQUAL "bad_value")
  run_bad("${head}values:\n  spot_price_ratio: [0.3, 1.5]\n"
          "grid.yaml:5: key 'values.spot_price_ratio': '1.5' is out of range \\(0, 1\\]")
  run_bad("${head}values:\n  scheduler.checkpoint.cost: [-3s]\n"
          "grid.yaml:5: key 'values.scheduler.checkpoint.cost': -3s is out of range")
  run_bad("${head}values:\n  scheduler.checkpoint.cost: [30]\n"
          "grid.yaml:5: key 'values.scheduler.checkpoint.cost': '30': a number needs a unit")
  run_bad("${head}values:\n  duration: 86400\n"
          "grid.yaml:5: key 'values.duration': '86400': a number needs a unit")
elseif(CASE STREQUAL "bad_policy")
  run_bad("workloads: [llm-finetune]\npolicies: [fifo, fgd]\nseeds: [0]\n"
          "grid.yaml:2: key 'policies': unknown policy 'fgd'")
  execute_process(COMMAND "${SEEDANCE}" sweep --grid "${WORK}/grid.yaml" --out "${out}" --partition gpu
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  expect_exit_2("need --slurm")
elseif(CASE STREQUAL "local_rerun")
  expect_rc(0 "${SEEDANCE}" sweep --grid "${EXAMPLE}" --out "${out}" --threads 2)
  expect_match("${stderr}" "60 cells, 0 already finished")
  expect_match("${stderr}" "60/60 cells done")
  file(READ "${out}/results.json" first)
  file(GLOB cells "${out}/cells/*.json")
  list(LENGTH cells n)
  if(NOT n EQUAL 60)
    message(FATAL_ERROR "expected 60 cell files, got ${n}")
  endif()
  expect_rc(0 "${SEEDANCE}" sweep --grid "${EXAMPLE}" --out "${out}")
  expect_match("${stderr}" "60 already finished in .*, 0 to run")
  file(READ "${out}/results.json" second)
  if(NOT first STREQUAL second)
    message(FATAL_ERROR "results.json changed on a rerun that ran nothing")
  endif()
  list(GET cells 7 victim)
  file(REMOVE "${victim}")
  expect_rc(0 "${SEEDANCE}" sweep --grid "${EXAMPLE}" --out "${out}")
  expect_match("${stderr}" "59 already finished in .*, 1 to run")
  file(READ "${out}/results.json" third)
  if(NOT first STREQUAL third)
    message(FATAL_ERROR "results.json differs after rerunning one cell")
  endif()
  file(READ "${out}/manifest.json" manifest)
  string(JSON ran GET "${manifest}" cells_to_run)
  if(NOT ran EQUAL 1)
    message(FATAL_ERROR "manifest: cells_to_run ${ran}, expected 1")
  endif()
else()
  message(FATAL_ERROR "unknown CASE ${CASE}")
endif()
