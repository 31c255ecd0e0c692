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
  run_bad("infeasible SLO: no GPU type of l4,a100 serves 2 of the trace's 2 request-size buckets.*TPOT [0-9.]+ ms \\(SLO 2 ms\\)"
          --trace "${WORK}/t.csv" --gpus l4,a100 --slo-tpot 2ms)
elseif(CASE STREQUAL "unknown_gpu")
  run_bad("--gpus: gpu 'v100' is the V100, which the batching engine has no profile for \\(accepted: a100 \\(A100-80G\\), h100, l4, a10g\\)" --gpus l4,v100)
  run_bad("--gpus: unknown gpu 'x9000' \\(accepted: a100, h100, l4, a10g\\)" --gpus l4,x9000)
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
elseif(CASE STREQUAL "bad_model")
  run_bad("--model: unknown model 'mistral-7b' \\(accepted: llama-2-7b, llama-2-70b, codellama-34b, phi-2, llama-3-8b, llama-3-70b\\)"
          --model mistral-7b)
  run_bad("--gpus a100: --tp 3: llama-2-70b is profiled at TP 1, 2, 4, 8 only" --model llama-2-70b --gpus a100 --tp 3)
  run_bad("--tp 0: must be >= 1" --model llama-2-70b --tp 0)
  run_bad("--gpus l4: llama-2-70b does not fit on 1 x l4 \\(24 GiB each at 90% utilization\\): 138\\.0 GB of FP16 weights"
          --model llama-2-70b --gpus l4,a100)
  run_bad("--gpus a100: --tp 2: llama-2-7b is profiled at TP 1 only" --gpus a100 --tp 2)
  run_bad("--profile ${WORK}/none: not a directory" --model phi-2 --profile "${WORK}/none")
  # Vidur has no H100 profile of Llama-3: listed, it is an error naming the missing file.
  run_bad("--gpus h100: no profile of llama-3-8b on h100: .*/h100/meta-llama/Meta-Llama-3-8B/mlp\\.csv is missing"
          --model llama-3-8b --gpus a100,h100)
elseif(CASE STREQUAL "model_tp")
  # Llama-2-70B on the default GPU types: L4 and A10G cannot hold it and are left out (said so), A100
  # and H100 serve it at TP 4; Unix-epoch timestamps; a 5,000-token prompt over the 4k context is
  # counted in the text and in plan.json.
  set(rows "TIMESTAMP,ContextTokens,GeneratedTokens\n")
  foreach(i RANGE 0 39)
    math(EXPR ts "1700000000 + ${i} * 2")
    if(i EQUAL 7 OR i EQUAL 31)
      string(APPEND rows "${ts}.25,5000,50\n")
    else()
      string(APPEND rows "${ts}.25,300,80\n")
    endif()
  endforeach()
  file(WRITE "${WORK}/t.csv" "${rows}")
  expect_rc(0 "${SEEDANCE}" plan --model llama-2-70b --trace "${WORK}/t.csv" --out "${out}" --cache "${cache}")
  expect_match("${stdout}" "model llama-2-70b \\(context 4096 tokens\\)")
  expect_match("${stdout}" "(A100-80G|H100) +[0-9]+ +4 +[0-9]+ +no")
  expect_match("${stdout}" "1 of 20 requests of the tuning half exceed llama-2-70b's 4096-token context")
  expect_match("${stdout}" "1 of 20 requests exceed llama-2-70b's 4096-token context and are not served")
  file(READ "${out}/plan.json" plan)
  foreach(key "\"tensor_parallel\": 4" "\"gpus_per_replica\": 4" "\"held_out_over_context\": 1"
              "\"tuning_over_context\": 1" "\"weights\"" "\"reject_over_context\": 4096" "GPU types left out \\(cannot hold or time llama-2-70b\\): l4")
    expect_match("${plan}" "${key}")
  endforeach()
elseif(CASE STREQUAL "melange_example")
  expect_rc(0 "${SEEDANCE}" plan --melange-config "${DATA}/melange/repo_example_config.json" --out "${out}")
  file(READ "${out}/plan.json" plan)
  if(NOT plan MATCHES "\"usd_per_hour\": 6.7" OR NOT stdout MATCHES "A10G +3 ")
    message(FATAL_ERROR "unexpected plan:\n${stdout}\n${plan}")
  endif()
elseif(CASE STREQUAL "fleet_prices")
  # Issue 38: --fleet prices each type as the fleet pays for it; a type it has no pool of is an error.
  file(WRITE "${WORK}/t.csv" "${small}")
  file(WRITE "${WORK}/f.yaml" "name: mine\nregions: [r]\ngpus:\n  - {type: a100-80g, owned: {count: 8, usd_per_gpu_hour: 0.9}}\n")
  run_bad("--fleet [^ ]*f\\.yaml: the fleet has no pool of L4 \\(it has A100-80G\\)" --trace "${WORK}/t.csv" --gpus l4,a100
          --fleet "${WORK}/f.yaml")
  file(WRITE "${WORK}/f.yaml" "name: mine\nregions: [r]\ngpus:\n  - {type: a100-80g, owned: {count: 8, usd_per_gpu_hour: 0.9}}\n"
                              "  - {type: L4, on_demand: {quota: 64, usd_per_gpu_hour: 0.07}}\n")
  expect_rc(0 "${SEEDANCE}" plan --trace "${WORK}/t.csv" --gpus l4,a100 --rate 0.5 --fleet "${WORK}/f.yaml" --out "${out}"
            --cache "${cache}")
  file(READ "${out}/plan.json" plan)
  if(NOT plan MATCHES "prices: fleet file [^\"]*f\\.yaml \\('mine'\\)")
    message(FATAL_ERROR "plan.json does not name the fleet's prices:\n${plan}")
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
