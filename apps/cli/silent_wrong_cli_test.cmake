# Issue 38, "no silent wrong answer, round 2": the CLI checks no other script made (the whole list,
# item by item with its test, is docs/YOUR_FLEET.md "What Seedance refuses to get wrong"). Run by
# ctest as
#   cmake -DSEEDANCE=<binary> -DWORK=<scratch> -DCASE=<case> -P silent_wrong_cli_test.cmake
#   step_flag         the ledger commands' --step (the walk's 5-minute history without a config
#                     file): the same bill as step_seconds in --config, both at once must agree,
#                     a step that is not whole seconds or has no unit is refused, nothing written
#   gpu_catalog_file  `seedance --gpu-catalog FILE`: a GPU type added from a catalog file is listed
#                     with its facts and its owned GPU-hour, the built-in new types (H200, L40S)
#                     and the bundled file's (B200, MI300X) too; a bad entry names file:line:key
#   plan_gpu_names    `plan --gpus` reads names with the one GPU-name parser (the fleet file's
#                     a100-80g, a dcgm-exporter product string), not its own short list
cmake_minimum_required(VERSION 3.25)

file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
include("${CMAKE_CURRENT_LIST_DIR}/cli_test_helpers.cmake")

# `seedance ARGS...` must exit 2 with stderr matching `regex` and leave ${out} unwritten.
function(bad regex)
  execute_process(COMMAND "${SEEDANCE}" ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  expect_exit_2("${regex}")
endfunction()

if(CASE STREQUAL "step_flag")
  set(db "${WORK}/ledger.db")
  set(out "${WORK}/jobs.csv")
  expect_rc(0 "${SEEDANCE}" generate telemetry --duration 2h --interval 5m --out "${WORK}/h.prom")
  expect_rc(0 "${SEEDANCE}" ingest --format prom "${WORK}/h.prom" --db "${db}")
  # The default 60 s step on 5-minute samples would bill a fifth of the time: refused, naming the flag.
  bad("the GPU samples are 300 s apart and step_seconds is 60: .*; pass --step 300s or set step_seconds: 300 in --config"
      attribute --db "${db}")
  # --step 5m is step_seconds: 300, byte for byte.
  expect_rc(0 "${SEEDANCE}" attribute --db "${db}" --step 5m --by namespace)
  set(by_flag "${stdout}")
  expect_match("${by_flag}" "reconciliation: bill \\$[0-9]")
  file(WRITE "${WORK}/300.yaml" "step_seconds: 300\n")
  expect_rc(0 "${SEEDANCE}" attribute --db "${db}" --config "${WORK}/300.yaml" --by namespace)
  if(NOT stdout STREQUAL by_flag)
    message(FATAL_ERROR "--step 5m and step_seconds: 300 bill differently:\n${by_flag}\n---\n${stdout}")
  endif()
  # Both, agreeing: fine. Both, disagreeing: exit 2 naming both, never one silently over the other.
  expect_rc(0 "${SEEDANCE}" attribute --db "${db}" --config "${WORK}/300.yaml" --step 300s --by namespace)
  file(WRITE "${WORK}/60.yaml" "step_seconds: 60\n")
  bad("--step 5m \\(300 s\\) and step_seconds: 60 in [^ ]*60\\.yaml disagree; give one of them"
      attribute --db "${db}" --config "${WORK}/60.yaml" --step 5m)
  bad("--step '300500ms': a whole number of seconds" attribute --db "${db}" --step 300500ms)
  bad("--step '300': a number needs a unit" attribute --db "${db}" --step 300)
  # export workload and export focus take the same option (one definition for every ledger command).
  bad("disagree" export workload --db "${db}" --config "${WORK}/60.yaml" --step 5m --out "${out}" --as-run "${WORK}/a.csv")
  if(EXISTS "${WORK}/a.csv")
    message(FATAL_ERROR "a refused export wrote its as-run CSV")
  endif()
  expect_rc(0 "${SEEDANCE}" export workload --db "${db}" --step 5m --out "${out}" --as-run "${WORK}/as-run.csv")
  # Every GPU-hour the generator held (8.5833) is read back at the 5-minute step.
  expect_match("${stdout}" "8 jobs \\(0 clipped[^\n]*\\), 8\\.5833 GPU-hours")
  expect_rc(0 "${SEEDANCE}" export focus --db "${db}" --step 5m --out "${WORK}/focus.csv")
elseif(CASE STREQUAL "gpu_catalog_file")
  set(out "${WORK}/nothing")
  # The four types issue 38 names are known: H200 and L40S built in, B200 and MI300X from the
  # bundled data/gpus/catalog.yaml; each with its owned GPU-hour.
  expect_rc(0 "${SEEDANCE}" catalog)
  foreach(type H200 L40S B200 MI300X)
    expect_match("${stdout}" "\n${type} +[0-9]")
  endforeach()
  if(stdout MATCHES "\nZ100 ")
    message(FATAL_ERROR "Z100 listed before its catalog file was given")
  endif()
  file(WRITE "${WORK}/mine.yaml"
       "gpu_types:\n"
       "  - name: Z100\n"
       "    product: ACME Z100 SXM (96 GB)\n"
       "    aliases: [Z100-SXM]\n"
       "    dcgm_model_names: [ACME Z100 SXM]\n"
       "    memory_gib: 96\n"
       "    fp16_tflops: 1000\n"
       "    memory_gb_s: 4000\n"
       "    tdp_w: 800\n"
       "    source: ACME Z100 data sheet\n"
       "    on_demand: {usd_per_gpu_hour: 4.5, source: a quote}\n"
       "    purchase: {usd: 30000, source: an invoice}\n")
  expect_rc(0 "${SEEDANCE}" --gpu-catalog "${WORK}/mine.yaml" catalog)
  expect_match("${stdout}" "\nZ100 +30000 +[0-9.]+ +[0-9.]+ +an invoice")
  expect_match("${stdout}" "\nZ100 +1000\\.0 ")
  # The one parser knows it everywhere, by alias: its owned GPU-hour for `catalog --gpu`.
  expect_rc(0 "${SEEDANCE}" --gpu-catalog "${WORK}/mine.yaml" catalog --gpu z100-sxm)
  expect_match("${stdout}" "owned Z100: \\$30000 GPU")
  # A bad entry: file, line and key, exit 2.
  file(WRITE "${WORK}/bad.yaml" "gpu_types:\n  - name: Z200\n    product: x\n    memory_gib: lots\n"
                                "    fp16_tflops: 1\n    memory_gb_s: 1\n    tdp_w: 1\n    source: s\n")
  bad("bad\\.yaml:4: key 'gpu_types\\[0\\]\\.memory_gib': expected a number" --gpu-catalog "${WORK}/bad.yaml" catalog)
elseif(CASE STREQUAL "plan_gpu_names")
  set(out "${WORK}/plan")
  # x9000 is the only name refused: a100-80g (the fleet file's spelling) and the dcgm-exporter
  # product string are the A100 to the one parser. Before issue 38, plan refused 'a100-80g' first.
  bad("--gpus: unknown gpu 'x9000' \\(accepted: a100, h100, l4, a10g\\)" plan --gpus l4,a100-80g,x9000)
  bad("--gpus: unknown gpu 'x9000'" plan --gpus "NVIDIA A100-SXM4-80GB,H100-SXM,x9000")
  # A type the parser knows but plan has no profile for is named as what it is.
  bad("--gpus: gpu 'h200' is the H200, which the batching engine has no profile for" plan --gpus l4,h200)
else()
  message(FATAL_ERROR "unknown CASE ${CASE}")
endif()
