# CLI checks of `seedance plan`, run by ctest as
#   cmake -DSEEDANCE=<binary> -DWORK=<scratch> -DCASE=<case> -DDATA=<data dir> -P plan_cli_test.cmake
# Bad-input cases expect exit 2, a message naming what is wrong (and by how much), and no output
# directory. `melange_example` solves Mélange's repository example; `small_plan` plans a small
# lengths-only trace end to end and checks plan.json.
cmake_minimum_required(VERSION 3.25)

file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
set(out "${WORK}/out")
set(cache "${WORK}/cache")
set(header "num_prefill_tokens,num_decode_tokens")

include("${CMAKE_CURRENT_LIST_DIR}/cli_test_helpers.cmake")

function(run_bad regex)
  execute_process(COMMAND "${SEEDANCE}" plan --out "${out}" --cache "${cache}" ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  expect_exit_2("${regex}")
endfunction()

# Both sizes in the even rows (the tuning half of a lengths-only trace) and in the odd ones.
set(small "${header}\n80,60\n80,60\n900,200\n900,200\n80,60\n80,60\n")

if(CASE STREQUAL "infeasible_slo")
  file(WRITE "${WORK}/t.csv" "${small}")
  run_bad("infeasible SLO: no GPU type of --gpus l4,a100 serves 2 of the trace's 2 request-size buckets.*TPOT [0-9.]+ ms \\(SLO 2 ms\\)"
          --trace "${WORK}/t.csv" --gpus l4,a100 --slo-tpot 2ms)
elseif(CASE STREQUAL "unknown_gpu")
  run_bad("--gpus: unknown gpu 'v100' \\(accepted: a100, h100, l4, a10g\\)" --gpus l4,v100)
elseif(CASE STREQUAL "empty_trace")
  file(WRITE "${WORK}/t.csv" "${header}\n")
  run_bad("t\\.csv" --trace "${WORK}/t.csv")
elseif(CASE STREQUAL "bad_slo")
  run_bad("--slo-tpot 'fast': not a duration \\(e\\.g\\. 120ms, 2s, 3m\\)" --slo-tpot fast)
  # A bare number was once read as seconds (120 s per token): now an error with an example.
  run_bad("--slo-tpot '120': a number needs a unit \\(write e\\.g\\. 120ms, 2s, 3m; units: us, ms, s, m, h, d\\)" --slo-tpot 120)
  run_bad("--slo-ttft '0': must be > 0" --slo-ttft 0)
elseif(CASE STREQUAL "bad_melange")
  file(WRITE "${WORK}/m.json" "{\"gpu_info\": {\"A10G\": {\"cost\": 1.01, \"tputs\": [[2, \"x\"]]}}, \"workload_distribution\": [[0.5, 0.5]], \"total_request_rate\": 3}")
  run_bad("m\\.json: gpu_info\\.A10G\\.tputs\\[0\\]\\[1\\]: must be a number" --melange-config "${WORK}/m.json")
elseif(CASE STREQUAL "bad_curve")
  file(WRITE "${WORK}/t.csv" "${small}")
  file(WRITE "${WORK}/curve.csv" "start_s,rate_rps\n0,1\n3600,-2\n")
  run_bad("curve\\.csv:3:[0-9]+: field 'rate_rps': must be a number > 0" --trace "${WORK}/t.csv" --rate-curve "${WORK}/curve.csv")
elseif(CASE STREQUAL "melange_example")
  expect_rc(0 "${SEEDANCE}" plan --melange-config "${DATA}/melange/repo_example_config.json" --out "${out}")
  file(READ "${out}/plan.json" plan)
  if(NOT plan MATCHES "\"usd_per_hour\": 6.7" OR NOT stdout MATCHES "A10G +3 ")
    message(FATAL_ERROR "unexpected plan:\n${stdout}\n${plan}")
  endif()
elseif(CASE STREQUAL "small_plan")
  file(WRITE "${WORK}/t.csv" "${small}")
  expect_rc(0 "${SEEDANCE}" plan --trace "${WORK}/t.csv" --gpus l4,a100 --rate 0.5 --out "${out}" --cache "${cache}")
  file(READ "${out}/plan.json" plan)
  foreach(key "\"mix\"" "\"best_single\"" "\"saving_pct\"" "\"verified_slo_attainment\": [01]" "\"cost_curve\""
              "\"router\": \"input\"" "\"output-oracle\": [01]")
    if(NOT plan MATCHES "${key}")
      message(FATAL_ERROR "plan.json lacks ${key}:\n${plan}")
    endif()
  endforeach()
  if(NOT EXISTS "${out}/plan_report.html")
    message(FATAL_ERROR "no plan_report.html")
  endif()
else()
  message(FATAL_ERROR "unknown case ${CASE}")
endif()
