# CLI checks of `seedance cost-benchmark`, run by ctest as
#   cmake -DSEEDANCE=<binary> -DWORK=<scratch dir> -DCASE=<case> -P cost_benchmark_cli_test.cmake
# Cases:
#   bad_prices     a bad price row: exit 2, message names file:line:column and field, no output
#   bad_workload   an unknown --workload: exit 2, the message lists the accepted values
#   bad_tenancy_*  an inconsistent tenancy: section (a limit without a cohort, lending above
#                  nominal): exit 2, the message names file:line and the key, no output
#   one_seed       the bundled default with one seed: exit 0, both files written
#   frontier       --frontier adds seedance-tv<value> runs and the cost/JCT chart; bad values exit 2
#   seeds          --seeds 0,1: mean ± sd per policy in the table, results.json (seeds, summary,
#                  per_seed, best_baseline, bound_at_best_baseline_usd) and the report, assumptions;
#                  a second run gives the same results.json apart from timing keys
#   bad_seeds      a bad --seeds list, or --seed with --seeds: exit 2 naming the flag, no output
#   held_out_headline  the default run's headline is llm-finetune's held-out seeds 5-9 (issue 29):
#                  with --with-tuning the tuning seeds 0-4 stand beside it, labelled; the headline
#                  figures equal a run of the held-out seeds alone and differ from the tuning set's;
#                  a run of tuning seeds only is labelled tuning and never held out
#   bad_with_tuning  --with-tuning with --seeds, or on a workload without both sets; seeds outside
#                  the split mixed with held-out ones: exit 2 naming the flag, no output
#   seed_instance  --seed 0 and --seed 1 generate different llm-finetune instances
#   fleet          --fleet with owned, reserved, on-demand and spot GPUs: owned used first (the
#                  decision log), the committed pools and their accounting in the assumptions
#   bad_fleet      a bad fleet file: exit 2 naming file:line and key, nothing written
#   fleet_week     --workload fleet-week twice: byte-identical results.json and report, the keys
#                  fleet_week.standard (the competent base) / .seedance / .levers[8], issue 30's base
#                  and the idle compute per set, the headline set held out, the
#                  waterfall and the bound in the table; --fleet runs one set on that fleet
#                  beside fleet a; --history runs examples/history on its fleet beside fleet a
#                  (label slow: reuses fleet_test's serving profiles)
#   bad_fleet_week --workload fleet-week with --seeds (it runs its own held-out sets), with a fleet
#                  no type of which can serve the deployments, or with a bad
#                  --fleet file: exit 2 naming the flag / file:line and key, nothing written
#   fleet_price_series  --fleet examples/fleets/spot-price-series.yaml (spot priced by a CSV and an
#                  AWS price history): exit 0, the series in the assumptions, spot billed, and the
#                  lower bound at or below every policy's cost
#   as_run_price_series --as-run with the optional spot column on a fleet whose spot price series
#                  has wall-clock times: spot priced at the price in force when it ran (a known
#                  total), and history before the series begins an error (exit 2)
#   bad_price_series    a price series with a bad row: exit 2 naming the fleet file's line and key,
#                  then the series' file:line and column; nothing written
#   as_run         --as-run: the row "as run (what you paid)" in the table, results.json and the
#                  report, the same total as `export workload --fleet` prints for the same fleet
#   bad_history    --workload fleet-week --history (issue 38): without --fleet, with another workload,
#                  with a bad row of as-run.csv: exit 2 naming the flag / file:line and field, before
#                  any week runs, nothing written
#   bad_as_run     --as-run without --fleet or a jobs CSV, jobs that do not match, a fleet too
#                  small for what ran, a malformed as-run CSV: exit 2 naming file and job, no output
cmake_minimum_required(VERSION 3.25)

file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
set(out "${WORK}/report")

include("${CMAKE_CURRENT_LIST_DIR}/cli_test_helpers.cmake")

if(CASE STREQUAL "bad_prices")
  file(WRITE "${WORK}/prices.csv" "gpu_model,usd_per_gpu_hour_on_demand\nG2,2.85\nT4,cheap\n")
  execute_process(COMMAND "${SEEDANCE}" cost-benchmark --prices "${WORK}/prices.csv" --out "${out}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  expect_exit_2("prices\\.csv:3:4: field 'usd_per_gpu_hour_on_demand'")
elseif(CASE STREQUAL "bad_workload")
  execute_process(COMMAND "${SEEDANCE}" cost-benchmark --workload nosuch --out "${out}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  expect_exit_2("unknown workload 'nosuch' \\(accepted: llm-finetune, gavel, philly, openb, llm-inference, fleet-week, or a jobs CSV file\\)")
elseif(CASE STREQUAL "bad_config_key")
  file(WRITE "${WORK}/c.yaml" "scheduler:\n  cost_aware:\n    enabled: true\n    max_price_ration: 0.5\n")
  execute_process(COMMAND "${SEEDANCE}" cost-benchmark --config "${WORK}/c.yaml" --out "${out}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  expect_exit_2("c\\.yaml:4: key 'scheduler\\.cost_aware\\.max_price_ration': unknown key")
elseif(CASE STREQUAL "bad_config_ratio")
  file(WRITE "${WORK}/c.yaml" "scheduler:\n  cost_aware:\n    max_price_ratio: 1.5\n")
  execute_process(COMMAND "${SEEDANCE}" cost-benchmark --config "${WORK}/c.yaml" --out "${out}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  expect_exit_2("c\\.yaml:3: key 'scheduler\\.cost_aware\\.max_price_ratio': 1\\.5 is out of range \\(0, 1\\]")
elseif(CASE STREQUAL "bad_config_window")
  file(WRITE "${WORK}/c.yaml" "scheduler:\n  cost_aware:\n    warmup_window: -5s\n")
  execute_process(COMMAND "${SEEDANCE}" cost-benchmark --config "${WORK}/c.yaml" --out "${out}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  expect_exit_2("c\\.yaml:3: key 'scheduler\\.cost_aware\\.warmup_window': -5s is out of range")
elseif(CASE STREQUAL "bad_tenancy_no_cohort")
  file(WRITE "${WORK}/c.yaml" "tenancy:\n  tenants:\n    - name: team-a\n      quota:\n"
                              "        gpu/A100-80G: {nominal: 16, borrowing_limit: 8}\n")
  execute_process(COMMAND "${SEEDANCE}" cost-benchmark --config "${WORK}/c.yaml" --out "${out}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  expect_exit_2("c\\.yaml:5: key 'tenancy\\.tenants\\[0\\]\\.quota\\.gpu/A100-80G\\.borrowing_limit': needs a cohort")
elseif(CASE STREQUAL "bad_tenancy_lending")
  file(WRITE "${WORK}/c.yaml" "tenancy:\n  tenants:\n    - {name: team-a, cohort: p}\n    - name: team-b\n"
                              "      cohort: p\n      quota:\n        gpu: {nominal: 2, lending_limit: 3}\n")
  execute_process(COMMAND "${SEEDANCE}" cost-benchmark --config "${WORK}/c.yaml" --out "${out}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  expect_exit_2("c\\.yaml:7: key 'tenancy\\.tenants\\[1\\]\\.quota\\.gpu\\.lending_limit': 3 exceeds nominal 2")
elseif(CASE STREQUAL "bad_duration")
  execute_process(COMMAND "${SEEDANCE}" cost-benchmark --duration 7x --out "${out}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  expect_exit_2("--duration '7x': unknown unit 'x'")
  # A bare number once meant seconds; now it is an error that shows the units.
  execute_process(COMMAND "${SEEDANCE}" cost-benchmark --duration 600 --out "${out}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  expect_exit_2("--duration '600': a number needs a unit \\(write e\\.g\\. 120ms, 2s, 3m")
  # ... in a config file too, naming file:line:key.
  file(WRITE "${WORK}/c.yaml" "scheduler:\n  autoscaling:\n    cold_start: 180\n")
  execute_process(COMMAND "${SEEDANCE}" cost-benchmark --config "${WORK}/c.yaml" --out "${out}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  expect_exit_2("c\\.yaml:3: key 'scheduler\\.autoscaling\\.cold_start': '180': a number needs a unit")
elseif(CASE STREQUAL "catalog")
  execute_process(COMMAND "${SEEDANCE}" catalog RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "exit ${rc}\n${stderr}")
  endif()
  # The seed's spot TFLOPS per dollar (S1.2), reproduced from its prices and TFLOPS.
  # GPU rows come from the GPU catalog: the K80 is one GPU of its board (12 GiB, 4.37 TFLOPS,
  # 150 W), the A100-80G's spot price is the price table's quote.
  # The owned A100's power is the catalog's TDP over its FP16 peak (400 W / 312 TFLOPS), within its
  # TDP (the seed's 300 W per TFLOPS put it at 94 kW).
  # Issue 38 (deliberate change): the owned GPU's purchase price is its type's cited one (A100-80G:
  # DGX A100's $199,000 / 8), power $0.08/kWh at PUE 1.58 (were $12,000, $0.07, 1.45 for every type);
  # every type's owned GPU-hour is printed with its source (H100 about $1.56), catalog-file types too.
  foreach(v "19\\.71" "36\\.27" "42\\.59" "total +27\\.38 +0\\.87"
            "owned A100-80G: \\$24875 GPU, 3 years, 312 TFLOPS, 1\\.28 W/TFLOPS \\(400 W per GPU, TDP 400 W\\)"
            "purchase price: estimate: NVIDIA's DGX A100 launch price"
            "owned A100-80G: \\$0\\.975 per GPU-hour \\(total x 312 TFLOPS / 8,760 h\\), of which power and cooling \\$0\\.025 \\(the marginal cost of running it\\); on-demand list price \\$1\\.79"
            "\nH100 +39600 +1\\.561 +0\\.044  estimate: a Thinkmate quote"
            "\nT4 +12000 +[0-9.]+ +[0-9.]+  fallback, not a market price"
            "\nMI300X +24600 +[0-9.]+ +[0-9.]+  estimate: USD 12,500"
            "\nB200 +2250\\.0 +4500 +180 +8000 +1000 +0\\.44 NVLink +5\\.98"
            "K80 +4\\.4 +- +12 +240 +150 +34\\.32 PCIe +0\\.52" "A100-80G +312\\.0 +624 +80 +2039 +400 +1\\.28 NVLink +1\\.79 +1\\.19")
    if(NOT stdout MATCHES "${v}")
      message(FATAL_ERROR "catalog output lacks ${v}:\n${stdout}")
    endif()
  endforeach()
  execute_process(COMMAND "${SEEDANCE}" catalog --pue 0.5 RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  if(NOT rc EQUAL 2)
    message(FATAL_ERROR "--pue 0.5 should exit 2, got ${rc}")
  endif()
  execute_process(COMMAND "${SEEDANCE}" catalog --watts-per-tflops 300 RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  if(NOT rc EQUAL 2 OR NOT stderr MATCHES "--watts-per-tflops 300 x 312 TFLOPS = 93600 W per GPU, above the A100-80G's 400 W TDP")
    message(FATAL_ERROR "300 W/TFLOPS on an A100 should exit 2 naming the TDP, got ${rc}: ${stderr}")
  endif()
  execute_process(COMMAND "${SEEDANCE}" catalog --gpu "NVIDIA H100 80GB HBM3" RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  if(NOT rc EQUAL 0 OR NOT stdout MATCHES "owned H100: .* \\(700 W per GPU, TDP 700 W\\)")
    message(FATAL_ERROR "--gpu H100: ${rc} ${stderr}\n${stdout}")
  endif()
elseif(CASE STREQUAL "unpriced_type")
  file(WRITE "${WORK}/jobs.csv" "job_id,arrival_s,job_type,gpus,total_steps,steps_per_s_V100\n0,0,a,1,100,2\n")
  file(WRITE "${WORK}/prices.csv" "gpu_model,usd_per_gpu_hour_on_demand\nT4,0.35\n")
  execute_process(COMMAND "${SEEDANCE}" cost-benchmark --workload "${WORK}/jobs.csv" --prices "${WORK}/prices.csv"
                          --no-packing --out "${out}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  expect_exit_2("prices\\.csv: no on-demand price for GPU type 'V100'")
elseif(CASE STREQUAL "jobs_csv_names_window")
  # GPU names in steps_per_s_<TYPE> take any spelling the GPU-name parser knows.
  file(WRITE "${WORK}/jobs.csv" "job_id,arrival_s,job_type,gpus,total_steps,steps_per_s_NVIDIA-A100-SXM4-80GB,steps_per_s_t4\n0,0,a,1,3600,2,0.5\n1,60,a,1,3600,2,0.5\n2,7200,b,1,3600,2,0.5\n")
  execute_process(COMMAND "${SEEDANCE}" cost-benchmark --workload "${WORK}/jobs.csv" --duration 1h --no-packing
                          --tenancy none --out "${out}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "exit ${rc}\n${stderr}")
  endif()
  # The job arriving after the 1 h window is counted and said: stderr, the table, results.json.
  set(note "1 of 3 jobs of '[^']*jobs[^']*' arrive at or after the 3600 s --duration window and were left out")
  expect_match("${stderr}" "seedance: note: ${note}")
  expect_match("${stdout}" "note: ${note}")
  file(READ "${out}/results.json" results)
  expect_match("${results}" "${note}")
  expect_match("${results}" "\"A100-80G\"")
  # A non-integer job_id names file:line:column and the field.
  file(WRITE "${WORK}/jobs.csv" "job_id,arrival_s,job_type,gpus,total_steps,steps_per_s_V100\nllm-a,0,a,1,100,2\n")
  file(REMOVE_RECURSE "${out}")
  execute_process(COMMAND "${SEEDANCE}" cost-benchmark --workload "${WORK}/jobs.csv" --out "${out}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  expect_exit_2("jobs\\.csv:2:1: field 'job_id': expected an integer job id, got 'llm-a' \\(a name goes in job_type or tenant\\)")
  # Two spellings of one type are an error naming both columns.
  file(WRITE "${WORK}/jobs.csv" "job_id,arrival_s,job_type,gpus,total_steps,steps_per_s_A100-80G,steps_per_s_NVIDIA-A100-SXM4-80GB\n0,0,a,1,100,2,2\n")
  execute_process(COMMAND "${SEEDANCE}" cost-benchmark --workload "${WORK}/jobs.csv" --out "${out}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  expect_exit_2("columns 'steps_per_s_A100-80G' and 'steps_per_s_NVIDIA-A100-SXM4-80GB' name the same GPU type A100-80G")
elseif(CASE STREQUAL "bad_jobs_csv")
  file(WRITE "${WORK}/jobs.csv" "job_id,arrival_s,job_type,gpus,total_steps,steps_per_s_V100\n0,0,a,1,100,2\n1,10,b,1,-4,2\n")
  execute_process(COMMAND "${SEEDANCE}" cost-benchmark --workload "${WORK}/jobs.csv" --out "${out}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  expect_exit_2("jobs\\.csv:3:[0-9]+: field 'total_steps'")
elseif(CASE STREQUAL "bad_spot_series")
  file(WRITE "${WORK}/jobs.csv" "job_id,arrival_s,job_type,gpus,total_steps,steps_per_s_V100\n0,0,a,1,100,2\n")
  file(MAKE_DIRECTORY "${WORK}/data/spot_traces")
  # A data directory is the whole bundle: the GPU catalog file (data/gpus/catalog.yaml) comes with it.
  file(COPY "${SOURCE}/data/gpus" DESTINATION "${WORK}/data")
  file(WRITE "${WORK}/data/prices/gpu_prices.csv" "gpu_model,usd_per_gpu_hour_on_demand\nV100,2.85\n")
  file(WRITE "${WORK}/data/spot_traces/aws-10-26-2022_us-west-2a_v100_8.json" "{\"metadata\": {\"gap_seconds\": 600}, \"data\": [1, -2]}")
  file(WRITE "${WORK}/data/spot_traces/aws-10-26-2022_us-west-2b_v100_8.json" "{\"metadata\": {\"gap_seconds\": 600}, \"data\": [1]}")
  execute_process(COMMAND "${CMAKE_COMMAND}" -E env "SEEDANCE_DATA_DIR=${WORK}/data"
                          "${SEEDANCE}" cost-benchmark --workload "${WORK}/jobs.csv" --no-packing --out "${out}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  expect_exit_2("us-west-2a_v100_8\\.json: field 'data\\[1\\]'")
elseif(CASE STREQUAL "fleet" OR CASE STREQUAL "bad_fleet")
  set(jobs "job_id,arrival_s,job_type,gpus,total_steps,steps_per_s_A100-80G,steps_per_s_V100\n")
  foreach(i RANGE 0 23)
    math(EXPR arrival "${i} * 1200")
    math(EXPR gpus "1 + ${i} % 2")
    math(EXPR steps "3600 * (1 + ${i} % 3)")
    string(APPEND jobs "${i},${arrival},t${i},${gpus},${steps},1,0.6\n")
  endforeach()
  file(WRITE "${WORK}/jobs.csv" "${jobs}")
  file(WRITE "${WORK}/traces/spot.json" "{\"metadata\": {\"gap_seconds\": 3600}, \"data\": [2, 1, 0, 2, 2, 1]}")
  set(owned "    owned: {count: 2, tco: {gpu_price: 15000, life: 1460d}}\n")
  if(CASE STREQUAL "bad_fleet")
    set(owned "    owned: {count: 2, tco: {gpu_price: 15000, life: 4}}\n")
  endif()
  file(WRITE "${WORK}/fleet.yaml" "name: lab\nregions: [eu-west-1]\ngpus:\n  - type: NVIDIA A100-SXM4-80GB\n${owned}"
       "    reserved: {count: 2, usd_per_gpu_hour: 1.1}\n    on_demand: {quota: 4}\n"
       "    spot: [{max_gpus: 8, gpus_per_instance: 4, series: traces/spot.json}]\n"
       "  - type: v100\n    on_demand: {quota: 4}\n")
  execute_process(COMMAND "${SEEDANCE}" cost-benchmark --workload "${WORK}/jobs.csv" --fleet "${WORK}/fleet.yaml"
                          --decisions "${WORK}/decisions.csv" --no-packing --tenancy none --out "${out}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  if(CASE STREQUAL "bad_fleet")
    expect_exit_2("fleet\\.yaml:5: key 'gpus\\[0\\]\\.owned\\.tco\\.life': '4': a number needs a unit")
    if(EXISTS "${WORK}/decisions.csv")
      message(FATAL_ERROR "a bad fleet file still wrote the decision log")
    endif()
  else()
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "--fleet: exit ${rc}\n${stderr}")
    endif()
    # Pools: owned, reserved, then on-demand per type, then spot; the first thing Seedance starts
    # lands on an owned GPU (pool 0).
    file(READ "${out}/results.json" results)
    foreach(v "A100-80G owned" "A100-80G reserved" "A100-80G spot"
              "fleet 'lab' from [^\"]*fleet\\.yaml: 2 owned A100-80G at \\$0\\.4[0-9][0-9]/GPU-hour \\(TCO: \\$15000 per GPU over 4 years"
              "2 reserved A100-80G at \\$1\\.100/GPU-hour, billed for every GPU from the first arrival")
      if(NOT results MATCHES "${v}")
        message(FATAL_ERROR "results.json lacks ${v}")
      endif()
    endforeach()
    file(STRINGS "${WORK}/decisions.csv" starts REGEX "^[0-9.e+]+,seedance,[0-9]+,start,")
    list(GET starts 0 first)
    if(NOT first MATCHES ",start,0$")
      message(FATAL_ERROR "Seedance's first start is not on the owned pool: ${first}")
    endif()
    if(NOT stdout MATCHES "lower bound +[0-9]")
      message(FATAL_ERROR "no lower bound in:\n${stdout}")
    endif()
  endif()
elseif(CASE STREQUAL "fleet_price_series")
  # A small workload on the example's four types; the example's series sit beside it.
  set(jobs "job_id,arrival_s,job_type,gpus,total_steps,steps_per_s_A100-80G,steps_per_s_H100,steps_per_s_A100,steps_per_s_L4\n")
  foreach(i RANGE 0 29)
    math(EXPR arrival "${i} * 2400")
    math(EXPR gpus "1 + ${i} % 2")
    math(EXPR steps "3600 * (2 + ${i} % 4)")
    string(APPEND jobs "${i},${arrival},t${i},${gpus},${steps},1,1.8,0.7,0.2\n")
  endforeach()
  file(WRITE "${WORK}/jobs.csv" "${jobs}")
  expect_rc(0 "${SEEDANCE}" cost-benchmark --workload "${WORK}/jobs.csv" --fleet
            "${SOURCE}/examples/fleets/spot-price-series.yaml" --no-packing --tenancy none --out "${out}")
  file(READ "${out}/results.json" results)
  expect_match("${results}" "A100-80G by a price series of 42 points, \\$0\\.850 to \\$1\\.700/GPU-hour")
  # p5.48xlarge in us-east-2a: $13.8 to $24.0 an instance-hour over 8 GPUs.
  expect_match("${results}" "H100 by a price series of 10 points, \\$1\\.725 to \\$3\\.000/GPU-hour")
  expect_match("${results}" "billed at the price in force at each instant, the policies seeing only the price in force now")
  string(JSON bound GET "${results}" lower_bound_usd)
  string(JSON n LENGTH "${results}" policies)
  math(EXPR last "${n} - 1")
  set(spot_billed 0)
  foreach(i RANGE 0 ${last})
    string(JSON name GET "${results}" policies ${i} name)
    string(JSON cost GET "${results}" policies ${i} total_cost_usd)
    string(JSON spot_cost ERROR_VARIABLE no_pool GET "${results}" policies ${i} cost_by_pool_usd "A100-80G spot")
    if(NOT no_pool AND spot_cost GREATER 0)
      math(EXPR spot_billed "${spot_billed} + 1")
    endif()
    if(bound GREATER cost)
      message(FATAL_ERROR "lower bound ${bound} above ${name}'s cost ${cost}")
    endif()
  endforeach()
  if(spot_billed EQUAL 0)
    message(FATAL_ERROR "no policy used the A100-80G spot pool:\n${results}")
  endif()
elseif(CASE STREQUAL "as_run_price_series")
  # Spot A100-80G: $1/GPU-hour from 00:00Z, $3 from 02:00Z; on-demand $2. Job 1 holds 2 spot GPUs
  # 01:00Z-03:00Z: 2 x (1 + 3) = $8; job 2 one on-demand GPU 02:00Z-03:00Z: $2. Total $10 (a
  # series started at the history's first start instead would give 2 x 2 x 1 + 2 = $6).
  file(WRITE "${WORK}/traces/spot.json" "{\"metadata\": {\"gap_seconds\": 3600}, \"data\": [4]}")
  file(WRITE "${WORK}/jobs.csv" "job_id,arrival_s,job_type,gpus,total_steps,steps_per_s_A100-80G\n"
       "1,0,team/a,2,7200,1\n2,3600,team/b,1,3600,1\n")
  file(WRITE "${WORK}/as-run.csv" "job_id,namespace,pod,gpu_type,gpus,start,end,spot\n"
       "1,team,a,NVIDIA A100-SXM4-80GB,2,2026-12-01T01:00:00Z,2026-12-01T03:00:00Z,true\n"
       "2,team,b,A100-80G,1,2026-12-01T02:00:00Z,2026-12-01T03:00:00Z,false\n")
  foreach(first "2026-12-01T00:00:00Z" "2026-12-01T01:30:00Z")
    file(WRITE "${WORK}/spot-prices.csv" "time,usd_per_gpu_hour\n${first},1\n2026-12-01T02:00:00Z,3\n")
    file(WRITE "${WORK}/fleet.yaml" "name: lab\nregions: [r]\ngpus:\n  - type: A100-80G\n"
         "    on_demand: {quota: 4, usd_per_gpu_hour: 2}\n"
         "    spot: [{max_gpus: 4, series: traces/spot.json, price_series: spot-prices.csv}]\n")
    file(REMOVE_RECURSE "${out}")
    execute_process(COMMAND "${SEEDANCE}" cost-benchmark --workload "${WORK}/jobs.csv" --fleet "${WORK}/fleet.yaml"
                            --as-run "${WORK}/as-run.csv" --no-packing --tenancy none --out "${out}"
                    RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
    if(first STREQUAL "2026-12-01T00:00:00Z")
      if(NOT rc EQUAL 0)
        message(FATAL_ERROR "--as-run with a spot price series: exit ${rc}\n${stderr}")
      endif()
      file(READ "${out}/results.json" results)
      string(JSON total GET "${results}" as_run total_cost_usd)
      if(NOT total EQUAL 10)
        message(FATAL_ERROR "as-run total ${total}, expected 10 (spot 8 at the series' prices + on-demand 2)")
      endif()
    else()
      expect_exit_2("as-run\\.csv: [^\n]*job 'team/a \\(job_id 1\\)'[^\n]*before its price series begins")
    endif()
  endforeach()
elseif(CASE STREQUAL "bad_price_series")
  file(WRITE "${WORK}/traces/spot.json" "{\"metadata\": {\"gap_seconds\": 3600}, \"data\": [2, 1]}")
  file(WRITE "${WORK}/prices/a100.csv" "time,usd_per_gpu_hour\n0,1.2\n3600,1,3\n")
  file(WRITE "${WORK}/fleet.yaml" "name: lab\nregions: [r]\ngpus:\n  - type: A100-80G\n    on_demand: {quota: 4}\n"
       "    spot: [{max_gpus: 8, series: traces/spot.json, price_series: prices/a100.csv}]\n")
  file(WRITE "${WORK}/jobs.csv" "job_id,arrival_s,job_type,gpus,total_steps,steps_per_s_A100-80G\n0,0,t,1,3600,1\n")
  execute_process(COMMAND "${SEEDANCE}" cost-benchmark --workload "${WORK}/jobs.csv" --fleet "${WORK}/fleet.yaml"
                          --no-packing --tenancy none --out "${out}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  expect_exit_2("fleet\\.yaml:6: key 'gpus\\[0\\]\\.spot\\[0\\]\\.price_series': [^\n]*prices/a100\\.csv:3: expected 2 fields")
  if(EXISTS "${out}/results.json")
    message(FATAL_ERROR "a bad price series still wrote results.json")
  endif()
elseif(CASE STREQUAL "as_run" OR CASE STREQUAL "bad_as_run")
  # History whose jobs are known: a generated cluster (2 nodes of 4 GPUs, 1 h), its ledger, and
  # the jobs CSV and as-run CSV exported from it.
  expect_rc(0 "${SEEDANCE}" generate telemetry --out "${WORK}/s.prom" --seed 5)
  expect_rc(0 "${SEEDANCE}" ingest --format prom "${WORK}/s.prom" --db "${WORK}/ledger.db")
  file(WRITE "${WORK}/fleet.yaml" "name: mine\nregions: [here]\ngpus:\n"
       "  - type: A100-80G\n    owned: {count: 2, tco: {gpu_price: 15000, life: 1460d}}\n    on_demand: {quota: 4}\n"
       "  - {type: H100, reserved: {count: 1, usd_per_gpu_hour: 2.2}, on_demand: {quota: 4}}\n")
  expect_rc(0 "${SEEDANCE}" export workload --ledger "${WORK}/ledger.db" --out "${WORK}/jobs.csv" --as-run
            "${WORK}/as-run.csv" --fleet "${WORK}/fleet.yaml" --summary "${WORK}/summary.json")
  string(REGEX MATCH "as run on fleet 'mine' [^\n]*: \\$([0-9.]+) = owned \\$([0-9.]+) \\+ reserved \\$([0-9.]+) \\+ on-demand \\$([0-9.]+)" _ "${stdout}")
  set(paid "${CMAKE_MATCH_1}")
  if(NOT paid OR CMAKE_MATCH_2 STREQUAL "0.00" OR CMAKE_MATCH_3 STREQUAL "0.00" OR CMAKE_MATCH_4 STREQUAL "0.00")
    message(FATAL_ERROR "expected owned, reserved and on-demand cost in:\n${stdout}")
  endif()
  set(common --workload "${WORK}/jobs.csv" --fleet "${WORK}/fleet.yaml" --no-packing --tenancy none --out "${out}")
  if(CASE STREQUAL "as_run")
    expect_rc(0 "${SEEDANCE}" cost-benchmark ${common} --as-run "${WORK}/as-run.csv")
    # The table: the row with the same total as the export, labelled as no policy, and the
    # headline against it.
    expect_match("${stdout}" "\nas run \\(what you paid\\) +${paid}[0-9]* [^\n]*as run, not a policy \\([^)]*as-run.csv\\)\n")
    expect_match("${stdout}" "=> seedance: [0-9.]+% (cheaper|dearer) than what you paid as run \\(\\$${paid}: owned")
    expect_match("${stdout}" "assumes \\(as run\\): the history does not say which GPUs were owned, reserved or on-demand")
    # No spot pool in this fleet: spot only could never start a job, so it is not run (it used to
    # bill the committed pools until the simulator's safety stop, a six-figure row).
    expect_match("${stdout}" "skypilot-spot-only not run: the fleet has no spot pool")
    if(stdout MATCHES "\nskypilot-spot-only ")
      message(FATAL_ERROR "skypilot-spot-only has a row on a fleet without spot:\n${stdout}")
    endif()
    file(READ "${out}/results.json" results)
    string(JSON label GET "${results}" as_run label)
    string(JSON role GET "${results}" as_run role)
    string(JSON total GET "${results}" as_run total_cost_usd)
    file(READ "${WORK}/summary.json" summary)
    string(JSON jobs GET "${results}" as_run jobs)
    string(JSON exported GET "${summary}" jobs)
    if(NOT label STREQUAL "as run (what you paid)" OR NOT role STREQUAL "as run, not a policy" OR NOT jobs EQUAL exported)
      message(FATAL_ERROR "results.json as_run: ${label} / ${role} / ${jobs} jobs (exported ${exported})")
    endif()
    # The same figure to the micro-dollar (results.json rounds to 1e-6).
    string(JSON micro GET "${summary}" total_micro_usd)
    string(REGEX REPLACE "^([0-9]+)\\.([0-9]*)$" "\\1;\\2" parts "${total}")
    list(GET parts 0 whole)
    list(GET parts 1 frac)
    string(SUBSTRING "${frac}000000" 0 6 frac)
    math(EXPR got "${whole} * 1000000 + 1${frac} - 1000000")
    math(EXPR diff "${got} - ${micro}")
    if(diff LESS -1 OR diff GREATER 1)
      message(FATAL_ERROR "results.json as_run.total_cost_usd ${total} vs export's ${micro} micro-USD")
    endif()
    string(JSON policies LENGTH "${results}" policies)
    math(EXPR last "${policies} - 1")
    foreach(i RANGE ${last})
      string(JSON name GET "${results}" policies ${i} name)
      string(JSON saving GET "${results}" policies ${i} savings_vs_as_run_pct)
      if(name STREQUAL "as run (what you paid)")
        message(FATAL_ERROR "the as-run row is listed as a policy")
      endif()
    endforeach()
    # Issue 38: one window for every row. Each policy's total is its bill over the history's
    # window (its unfinished work valued), and horizon + cloud + placement = its difference to as run.
    expect_match("${stdout}" "\nwindow: 0\\.9[0-9] h of history")
    expect_match("${stdout}" "\nas run, replayed +[0-9.]+ +\\(unfinished work valued \\$[0-9.]+; gap to as run [-+][0-9.]+%: the backtest's error")
    string(JSON as_run_window_total GET "${results}" as_run_window window as_run total_usd)
    string(JSON scheduler GET "${results}" as_run_window as_run_replayed scheduler)
    if(NOT scheduler STREQUAL "kube")
      message(FATAL_ERROR "a Prometheus history is replayed under kube-scheduler by default, not ${scheduler}")
    endif()
    foreach(i RANGE ${last})
      string(JSON name GET "${results}" policies ${i} name)
      string(JSON total GET "${results}" policies ${i} total_cost_usd)
      string(JSON w GET "${results}" as_run_window policies "${name}")
      string(JSON wt GET "${w}" bill total_usd)
      string(JSON d GET "${w}" vs_as_run_usd total)
      string(JSON h GET "${w}" vs_as_run_usd horizon)
      string(JSON c GET "${w}" vs_as_run_usd cloud)
      string(JSON pl GET "${w}" vs_as_run_usd placement)
      string(JSON own GET "${w}" own_horizon_usd)
      string(JSON unfinished GET "${w}" bill unfinished_work_valued_usd)
      # CMake has no floats: compare in micro-dollars (truncated, so within 10).
      foreach(v total wt d h c pl as_run_window_total)
        string(REGEX REPLACE "^(-?)([0-9]+)\\.?([0-9]*)$" "\\1;\\2;\\3" parts "${${v}}")
        list(GET parts 0 sign)
        list(GET parts 1 whole)
        list(GET parts 2 frac)
        string(SUBSTRING "${frac}000000" 0 6 frac)
        math(EXPR m "${whole} * 1000000 + 1${frac} - 1000000")
        if(sign STREQUAL "-")
          math(EXPR m "0 - ${m}")
        endif()
        set(${v}_micro ${m})
      endforeach()
      math(EXPR sum "${h_micro} + ${c_micro} + ${pl_micro} - ${d_micro}")
      math(EXPR diff "${wt_micro} - ${as_run_window_total_micro} - ${d_micro}")
      math(EXPR same "${total_micro} - ${wt_micro}")
      if(sum LESS -10 OR sum GREATER 10 OR diff LESS -10 OR diff GREATER 10 OR same LESS -10 OR same GREATER 10)
        message(FATAL_ERROR "${name}: window total ${wt} (row ${total}), difference ${d} = horizon ${h} + cloud ${c} + placement ${pl}?")
      endif()
    endforeach()
    # The bundled example history (issue 38, what must show 1): replayed under kube-scheduler, it
    # lands within 5 % of the as-run bill on both example fleets.
    expect_rc(0 "${SEEDANCE}" ingest --format prom "${SOURCE}/examples/telemetry/cluster-history.prom" --db "${WORK}/ex.db")
    foreach(f node-pools mixed)
      expect_rc(0 "${SEEDANCE}" export workload --db "${WORK}/ex.db" --out "${WORK}/ex-jobs.csv" --as-run "${WORK}/ex-as-run.csv"
                --fleet "${SOURCE}/examples/fleets/${f}.yaml" --types H100,A100-80G,A100,L4)
      expect_rc(0 "${SEEDANCE}" cost-benchmark --workload "${WORK}/ex-jobs.csv" --as-run "${WORK}/ex-as-run.csv" --fleet
                "${SOURCE}/examples/fleets/${f}.yaml" --no-packing --tenancy none --out "${WORK}/ex-${f}")
      file(READ "${WORK}/ex-${f}/results.json" ex)
      string(JSON gap GET "${ex}" as_run_window as_run_replayed gap_pct)
      if(gap GREATER 5 OR gap LESS -5)
        message(FATAL_ERROR "${f}: as run, replayed is ${gap}% off the bundled example's as-run bill")
      endif()
    endforeach()
    if(stdout MATCHES "closes -[0-9]+% of the gap")
      message(FATAL_ERROR "a negative gap closure is printed:\n${stdout}")
    endif()
    file(READ "${out}/cost_optimization_report.html" html)
    expect_match("${html}" "<h2>One window for every row</h2>")
    expect_match("${html}" "<th>unfinished work, valued \\$</th>")
    expect_match("${html}" "<td title=\"owned \\$[0-9.]+ \\+ reserved[^\"]*\">as run \\(what you paid\\)</td><td>as run, not a policy</td>")
    expect_match("${html}" "Seedance: [0-9.]+% (cheaper|dearer) than what you paid as run")
  else()
    set(as_run --as-run "${WORK}/as-run.csv")
    function(bad_as_run regex)
      file(REMOVE_RECURSE "${out}")
      execute_process(COMMAND "${SEEDANCE}" cost-benchmark ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE stdout
                      ERROR_VARIABLE stderr)
      expect_exit_2("${regex}")
    endfunction()
    bad_as_run("--as-run: give --fleet FILE too" --workload "${WORK}/jobs.csv" --no-packing --out "${out}" ${as_run})
    bad_as_run("--as-run: --workload must be the jobs CSV" --workload gavel --fleet "${WORK}/fleet.yaml" --no-packing
               --out "${out}" ${as_run})
    bad_as_run("none.csv: cannot open" ${common} --as-run "${WORK}/none.csv")
    # Rows edited: a job left out, a job that is not in the jobs CSV, other GPUs, a shifted start.
    file(STRINGS "${WORK}/as-run.csv" rows)
    list(GET rows 0 header)
    list(GET rows 1 row1)
    list(GET rows 2 row2)
    list(REMOVE_AT rows 0 1)
    string(REPLACE ";" "\n" rest "${rows}")
    file(WRITE "${WORK}/less.csv" "${header}\n${rest}\n")
    bad_as_run("--as-run .*less.csv: job 1 \\([^)]+\\) of .*jobs.csv is missing: not the same jobs" ${common} --as-run "${WORK}/less.csv")
    string(REGEX REPLACE "^1," "99," extra "${row1}")
    file(WRITE "${WORK}/extra.csv" "${header}\n${extra}\n${rest}\n")
    bad_as_run("--as-run .*extra.csv:2: job 99 \\([^)]+\\) is not among the [0-9]+ jobs run from" ${common} --as-run "${WORK}/extra.csv")
    string(REGEX REPLACE "^(1,[^,]*,[^,]*,[^,]*,[^,]*),[0-9]+," "\\1,7," wider "${row1}")
    file(WRITE "${WORK}/wider.csv" "${header}\n${wider}\n${rest}\n")
    bad_as_run("--as-run .*wider.csv:2: job 1 \\([^)]+\\) with 7 GPUs is job 1 \\([^)]+\\) with [0-9] GPUs in .*jobs.csv: not the same jobs" ${common} --as-run "${WORK}/wider.csv")
    # Job 2 an hour later (its end too): another export's times.
    string(REGEX MATCH "^2,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,([^,]*),([^,]*)," _ "${row2}")
    string(REPLACE "${CMAKE_MATCH_1},${CMAKE_MATCH_2}" "2026-11-30T00:00:00Z,2026-11-30T00:10:00Z" shifted "${row2}")
    list(REMOVE_AT rows 0)
    string(REPLACE ";" "\n" rest2 "${rows}")
    file(WRITE "${WORK}/shifted.csv" "${header}\n${row1}\n${shifted}\n${rest2}\n")
    bad_as_run("--as-run .*shifted.csv:3: job 2 \\([^)]+\\) starts [0-9.]+ s after job 1 but arrives [0-9.]+ s after it in .*jobs.csv: not the same export" ${common} --as-run "${WORK}/shifted.csv")
    string(REGEX REPLACE "^(1,[^,]*,[^,]*,[^,]*,[^,]*),[0-9]+," "\\1,two," typo "${row1}")
    file(WRITE "${WORK}/typo.csv" "${header}\n${typo}\n${rest}\n")
    bad_as_run("typo.csv:2:[0-9]+: field 'gpus': expected an integer, got 'two'" ${common} --as-run "${WORK}/typo.csv")
    file(WRITE "${WORK}/twice.csv" "${header}\n${row1}\n${row1}\n${rest}\n")
    bad_as_run("twice.csv:3:1: field 'job_id': job_id 1 is listed already at line 2" ${common} --as-run "${WORK}/twice.csv")
    # A fleet too small for what ran: an error naming the GPU type (never a silent overflow).
    file(WRITE "${WORK}/small.yaml" "name: small\nregions: [here]\ngpus:\n"
         "  - {type: A100-80G, on_demand: {quota: 1}}\n  - {type: H100, on_demand: {quota: 4}}\n")
    bad_as_run("--as-run .*as-run.csv: as-run job '[^']+' holds [0-9]+ GPUs? of A100-80G .* more than fleet 'small' .*: raise its capacity of A100-80G"
               --workload "${WORK}/jobs.csv" --fleet "${WORK}/small.yaml" --no-packing --tenancy none --out "${out}" ${as_run})
    # A node inventory beside the as-run CSV (as-run.nodes.csv, found by its name; issue 38): a
    # malformed field, and a pool the fleet file does not have, name the file, line and node.
    set(nodes_header "node,pool,kind,gpu_type,gpus,up_from,up_to,up_hours,usd_per_gpu_hour,bill_usd,idle_usd\n")
    file(WRITE "${WORK}/as-run.nodes.csv" "${nodes_header}"
         "n1,gpu-pool,on-demand,H100,eight,2026-11-29T00:00:00Z,2026-11-29T01:00:00Z,1,4,32,0\n")
    bad_as_run("as-run.nodes.csv:2:[0-9]+: field 'gpus': expected an integer, got 'eight'" ${common} ${as_run})
    file(WRITE "${WORK}/as-run.nodes.csv" "${nodes_header}"
         "n1,gpu-pool,on-demand,H100,8,2026-11-29T00:00:00Z,2026-11-29T01:00:00Z,1,4,32,0\n")
    bad_as_run("as-run.nodes.csv:2: node n1: pool 'gpu-pool' is not a node pool of fleet 'mine'" ${common} ${as_run})
    file(REMOVE "${WORK}/as-run.nodes.csv")
  endif()
elseif(CASE STREQUAL "kubectl")
  # The install step puts kubectl-seedance beside seedance; the seed's own spelling must work.
  execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${WORK}/prefix" --component Unspecified
                  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE stderr)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "install failed: ${stderr}")
  endif()
  execute_process(COMMAND "${WORK}/prefix/bin/kubectl-seedance" cost-benchmark --workload=llm-finetune --duration=30m
                          --no-packing --out "${out}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  if(NOT rc EQUAL 0 OR NOT EXISTS "${out}/results.json")
    message(FATAL_ERROR "kubectl-seedance failed (${rc})\n${stdout}\n${stderr}")
  endif()
elseif(CASE STREQUAL "ledger")
  # The simulator writes into the same ledger `seedance attribute` reads; a rerun replaces it.
  foreach(run 1 2)
    execute_process(COMMAND "${SEEDANCE}" cost-benchmark --duration 1d --no-packing --ledger "${WORK}/l.db"
                            --out "${WORK}/r${run}"
                    RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "exit ${rc}\n${stderr}")
    endif()
    execute_process(COMMAND "${SEEDANCE}" attribute --db "${WORK}/l.db" --by tenant
                    RESULT_VARIABLE rc OUTPUT_VARIABLE attr${run} ERROR_VARIABLE stderr)
    if(NOT rc EQUAL 0 OR NOT attr${run} MATCHES "exact to the micro-dollar" OR NOT attr${run} MATCHES "research")
      message(FATAL_ERROR "attribute on the simulator's ledger failed (${rc}):\n${attr${run}}\n${stderr}")
    endif()
  endforeach()
  string(REGEX MATCH "reconciliation:[^\n]*" line1 "${attr1}")
  string(REGEX MATCH "reconciliation:[^\n]*" line2 "${attr2}")
  if(NOT line1 STREQUAL line2)
    message(FATAL_ERROR "a rerun changed the ledger:\n${line1}\n${line2}")
  endif()
elseif(CASE STREQUAL "bench_gavel")
  execute_process(COMMAND "${SEEDANCE}" bench gavel --rates 2.0 --policies fifo --out "${out}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "exit ${rc}\n${stderr}")
  endif()
  file(READ "${out}/gavel.json" json)
  foreach(key "\"results\"" "\"policy\": \"fifo\"" "\"rate\": 2.0" "\"seed\": 0" "\"avg_jct_hours\"" "\"total_cost_usd\"")
    if(NOT json MATCHES "${key}")
      message(FATAL_ERROR "gavel.json lacks ${key}:\n${json}")
    endif()
  endforeach()
elseif(CASE STREQUAL "bench_gavel_bad")
  execute_process(COMMAND "${SEEDANCE}" bench gavel --rates 2.0,abc --out "${out}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  expect_exit_2("--rates: 'abc' is not a positive number")
  execute_process(COMMAND "${SEEDANCE}" bench gavel --policies fifo,magic --out "${out}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  expect_exit_2("--policies: unknown policy 'magic'")
  execute_process(COMMAND "${SEEDANCE}" bench gavel --trace static --out "${out}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  expect_exit_2("--trace: unknown Gavel trace 'static'")
elseif(CASE STREQUAL "frontier")
  # --frontier adds one Seedance run per job-hour value; a bad value exits 2 before any run.
  execute_process(COMMAND "${SEEDANCE}" cost-benchmark --duration 1d --no-packing --frontier 0,6 --out "${out}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "exit ${rc}\n${stderr}")
  endif()
  file(READ "${out}/results.json" json)
  foreach(name seedance-tv0 seedance-tv6)
    if(NOT json MATCHES "\"name\": \"${name}\"")
      message(FATAL_ERROR "results.json lacks policy ${name}")
    endif()
  endforeach()
  file(READ "${out}/cost_optimization_report.html" html)
  if(NOT html MATCHES "Cost against average JCT")
    message(FATAL_ERROR "the report lacks the cost/JCT chart")
  endif()
  # Issue 38: the bundled enforcement scenario is labelled as such on a bundled workload's report.
  expect_match("${html}" "Bundled example, not your fleet:</strong> the next section is the health audit's bundled enforcement scenario[^<]*</p>\n<section id=\"audit-enforcement\">")
  file(REMOVE_RECURSE "${out}")
  execute_process(COMMAND "${SEEDANCE}" cost-benchmark --frontier 3,-1 --out "${out}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  expect_exit_2("--frontier: '-1' is not a non-negative number")
elseif(CASE STREQUAL "determinism")
  foreach(run a b)
    execute_process(COMMAND "${SEEDANCE}" cost-benchmark --duration 2d --no-packing --seed 7 --out "${WORK}/${run}"
                    RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "exit ${rc}\n${stderr}")
    endif()
    file(READ "${WORK}/${run}/results.json" json_${run})
    string(REGEX REPLACE "\"(wall_seconds|solve_seconds)\": [0-9.e+-]+" "" json_${run} "${json_${run}}")
  endforeach()
  if(NOT json_a STREQUAL json_b)
    message(FATAL_ERROR "results.json differs between two runs with the same seed")
  endif()
  # The Advice section: the training levers replayed on the workload, each with its command.
  file(READ "${WORK}/a/cost_optimization_report.html" html)
  if(NOT html MATCHES "<h2>Advice</h2>" OR NOT html MATCHES "seedance advise --workload llm-finetune --seed 7")
    message(FATAL_ERROR "the report has no Advice section")
  endif()
  file(READ "${WORK}/a/results.json" raw_a)
  string(JSON n_advice LENGTH "${raw_a}" advice findings)
  if(n_advice LESS 1)
    message(FATAL_ERROR "results.json has no advice findings")
  endif()
  foreach(key "\"policies\"" "\"lower_bound_usd\"" "\"name\": \"fifo\"" "\"name\": \"gavel-las\""
              "\"name\": \"seedance\"" "\"total_cost_usd\"" "\"avg_jct_hours\"" "\"deadline_misses\""
              "\"best_baseline\": {" "\"bound_at_best_baseline_usd\": [0-9]" "\"savings_vs_best_baseline_pct\""
              "\"assumptions\"" "\"seed\": 7")
    if(NOT json_a MATCHES "${key}")
      message(FATAL_ERROR "results.json lacks ${key}")
    endif()
  endforeach()
elseif(CASE STREQUAL "seeds")
  execute_process(COMMAND "${SEEDANCE}" cost-benchmark --duration 1d --no-packing --seeds 0,1 --out "${out}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "exit ${rc}\n${stderr}")
  endif()
  foreach(v "workload seeds 0,1: mean ± sd" "fifo +[0-9.]+ ± [0-9.]+" "lower bound @ " "=> Over 2 workload seeds"
            "assumes: speeds from llm-finetune")
    if(NOT stdout MATCHES "${v}")
      message(FATAL_ERROR "the table lacks '${v}':\n${stdout}")
    endif()
  endforeach()
  file(READ "${out}/results.json" json)
  foreach(key "\"seeds\": \\[" "\"summary\": {" "\"per_seed\": \\[" "\"best_baseline\": {"
              "\"bound_at_best_baseline_usd\": [0-9]" "\"mean\": [0-9]" "\"sd\": [0-9]" "\"total_cost_usd_sd\""
              "\"seed\": 0" "\"seed\": 1")
    if(NOT json MATCHES "${key}")
      message(FATAL_ERROR "results.json lacks ${key}")
    endif()
  endforeach()
  # Same seeds, same bytes (apart from timing keys).
  execute_process(COMMAND "${SEEDANCE}" cost-benchmark --duration 1d --no-packing --seeds 0,1 --out "${WORK}/again"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout2 ERROR_VARIABLE stderr)
  file(READ "${WORK}/again/results.json" json2)
  string(REGEX REPLACE "\"(wall_seconds|solve_seconds)\": [0-9.e+-]+" "" a "${json}")
  string(REGEX REPLACE "\"(wall_seconds|solve_seconds)\": [0-9.e+-]+" "" b "${json2}")
  if(NOT rc EQUAL 0 OR NOT a STREQUAL b)
    message(FATAL_ERROR "results.json differs between two runs with the same seeds (${rc})")
  endif()
  file(READ "${out}/cost_optimization_report.html" html)
  foreach(v "Cost over workload seeds 0,1" "Assumes: " "best baseline")
    if(NOT html MATCHES "${v}")
      message(FATAL_ERROR "the report lacks '${v}'")
    endif()
  endforeach()
elseif(CASE STREQUAL "held_out_headline")
  # 12 h arrival windows keep the ten seeds' runs to a few seconds.
  set(fast --duration 12h --no-packing --tenancy none)
  expect_rc(0 "${SEEDANCE}" cost-benchmark ${fast} --with-tuning --out "${WORK}/both")
  expect_match("${stdout}" "^prices: the bundled fleet data/fleets/cloud-llm-finetune.yaml, prices the file does not give from data/prices/gpu_prices.csv\nHeadline, held out: seeds 5-9 \\(never run while Seedance's defaults were tuned\\); beside it tuning: seeds 0-4")
  expect_match("${stdout}" "gavel-las-spot +not run held out \\(below\\) +\\$[0-9]")
  expect_match("${stdout}" "\nheld out: seeds 5-9: workload llm-finetune")
  string(FIND "${stderr}" "seedance: held out: workload seeds 5-9\n" held_at)
  string(FIND "${stderr}" "seedance: tuning: workload seeds 0-4\n" tuning_at)
  if(held_at LESS 0 OR tuning_at LESS held_at)
    message(FATAL_ERROR "progress does not run held out 5-9, then tuning 0-4:\n${stderr}")
  endif()
  file(READ "${WORK}/both/results.json" both)
  string(JSON headline_set GET "${both}" headline_set)
  string(JSON held_seeds GET "${both}" held_out seeds)
  string(JSON tuning_seeds GET "${both}" tuning seeds)
  string(JSON top_seeds GET "${both}" seeds)
  string(REGEX REPLACE "[ \n]" "" held_seeds "${held_seeds}")
  string(REGEX REPLACE "[ \n]" "" tuning_seeds "${tuning_seeds}")
  string(REGEX REPLACE "[ \n]" "" top_seeds "${top_seeds}")
  if(NOT headline_set STREQUAL "held_out" OR NOT held_seeds STREQUAL "[5,6,7,8,9]" OR
     NOT tuning_seeds STREQUAL "[0,1,2,3,4]" OR NOT top_seeds STREQUAL "[5,6,7,8,9]")
    message(FATAL_ERROR "seed sets: headline ${headline_set}, held_out ${held_seeds}, tuning ${tuning_seeds}, "
                        "top-level ${top_seeds}")
  endif()
  string(JSON not_run GET "${both}" held_out not_run 0 policy)
  if(NOT not_run STREQUAL "gavel-las-spot")
    message(FATAL_ERROR "held_out.not_run names '${not_run}', not gavel-las-spot")
  endif()
  # The seedance row's mean cost in the top-level policies, each block, and a held-out-only run.
  function(seedance_cost json_text out_var)
    set(path ${ARGN})
    string(JSON n LENGTH "${json_text}" ${path} policies)
    math(EXPR last "${n} - 1")
    foreach(i RANGE ${last})
      string(JSON name GET "${json_text}" ${path} policies ${i} name)
      if(name STREQUAL "seedance")
        string(JSON v GET "${json_text}" ${path} policies ${i} total_cost_usd)
        set(${out_var} "${v}" PARENT_SCOPE)
        return()
      endif()
    endforeach()
    message(FATAL_ERROR "no seedance row under '${path}'")
  endfunction()
  seedance_cost("${both}" top)
  seedance_cost("${both}" held held_out)
  seedance_cost("${both}" tuned tuning)
  expect_rc(0 "${SEEDANCE}" cost-benchmark ${fast} --seeds 5-9 --out "${WORK}/held")
  file(READ "${WORK}/held/results.json" held_only)
  seedance_cost("${held_only}" alone)
  if(NOT top STREQUAL held OR NOT top STREQUAL alone OR top STREQUAL tuned)
    message(FATAL_ERROR "headline seedance $${top}: held_out block $${held}, held-out seeds alone $${alone}, "
                        "tuning block $${tuned}")
  endif()
  file(READ "${WORK}/both/cost_optimization_report.html" html)
  expect_match("${html}" "<h2>Headline: held out: seeds 5-9 \\(llm-finetune\\)</h2>")
  expect_match("${html}" "<th class=\"tuning\">tuning: seeds 0-4</th>")
  # The default without --with-tuning: the same headline, and how to add the tuning seeds.
  expect_rc(0 "${SEEDANCE}" cost-benchmark ${fast} --out "${WORK}/default")
  expect_match("${stdout}" "tuning: seeds 0-4 not run \\(add --with-tuning")
  file(READ "${WORK}/default/results.json" default_json)
  seedance_cost("${default_json}" default_top)
  string(JSON tuning_type TYPE "${default_json}" tuning)
  if(NOT default_top STREQUAL top OR NOT tuning_type STREQUAL "NULL")
    message(FATAL_ERROR "default run: seedance $${default_top} (with tuning: $${top}), tuning block ${tuning_type}")
  endif()
  # Tuning seeds alone make a tuning headline, never labelled held out.
  expect_rc(0 "${SEEDANCE}" cost-benchmark ${fast} --seeds 0,1 --out "${WORK}/tuning")
  expect_match("${stdout}" "^prices: [^\n]*\nHeadline, tuning: seeds 0,1 \\(in-sample")
  file(READ "${WORK}/tuning/cost_optimization_report.html" html)
  file(READ "${WORK}/tuning/results.json" tuning_json)
  string(JSON held_type TYPE "${tuning_json}" held_out)
  string(JSON headline_set GET "${tuning_json}" headline_set)
  if(html MATCHES "held out: seed" OR stdout MATCHES "held out: seed" OR NOT held_type STREQUAL "NULL" OR
     NOT headline_set STREQUAL "tuning")
    message(FATAL_ERROR "tuning seeds 0,1 labelled held out (held_out ${held_type}, headline_set ${headline_set})")
  endif()
elseif(CASE STREQUAL "bad_with_tuning")
  execute_process(COMMAND "${SEEDANCE}" cost-benchmark --with-tuning --seeds 5-9 --out "${out}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  expect_exit_2("--with-tuning: adds the tuning seeds to the default held-out seeds")
  execute_process(COMMAND "${SEEDANCE}" cost-benchmark --with-tuning --workload gavel --out "${out}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  expect_exit_2("--with-tuning: workload 'gavel' has no held-out and tuning seeds")
  execute_process(COMMAND "${SEEDANCE}" cost-benchmark --seeds 5,42 --out "${out}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  expect_exit_2("--seeds '5,42': mixes seeds outside the tuning / held-out split \\(42\\)")
elseif(CASE STREQUAL "bad_seeds")
  execute_process(COMMAND "${SEEDANCE}" cost-benchmark --seeds 4-0 --out "${out}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  expect_exit_2("--seeds '4-0': range goes backwards")
  execute_process(COMMAND "${SEEDANCE}" cost-benchmark --seeds 1,x --out "${out}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  expect_exit_2("--seeds '1,x': not a seed: 'x'")
  execute_process(COMMAND "${SEEDANCE}" cost-benchmark --seeds 1,1 --out "${out}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  expect_exit_2("--seeds '1,1': seed 1 given twice")
  execute_process(COMMAND "${SEEDANCE}" cost-benchmark --seed 3 --seeds 0-1 --out "${out}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  expect_exit_2("--seeds: give either --seed N or --seeds LIST")
elseif(CASE STREQUAL "bad_fleet_week")
  execute_process(COMMAND "${SEEDANCE}" cost-benchmark --workload fleet-week --seeds 0-4 --out "${out}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  expect_exit_2("--workload fleet-week runs its own seed sets.*--seed / --seeds are not accepted")
  file(WRITE "${WORK}/fleet.yaml" "name: mine\nregions: [us-west-2]\ngpus:\n  - type: H100\n    on_demand: {quota: many}\n")
  execute_process(COMMAND "${SEEDANCE}" cost-benchmark --workload fleet-week --fleet "${WORK}/fleet.yaml" --out "${out}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  expect_exit_2("fleet\\.yaml:5:.*quota")
  # A fleet none of whose types can serve the deployments: refused before any week runs.
  file(WRITE "${WORK}/v100.yaml" "name: v100\nregions: [us-west-2]\ngpus:\n  - type: V100\n    on_demand: {quota: 64}\n")
  execute_process(COMMAND "${SEEDANCE}" cost-benchmark --workload fleet-week --fleet "${WORK}/v100.yaml" --out "${out}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  expect_exit_2("v100\\.yaml: gpus: .*L4, A10G, A100-80G or H100.*\\(V100\\)")
elseif(CASE STREQUAL "fleet_week")
  # Byte-identical files from two runs; the keys issue 30 names; the headline set held out.
  foreach(run 1 2)
    execute_process(COMMAND "${SEEDANCE}" cost-benchmark --workload fleet-week --out "${WORK}/r${run}"
                    RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "fleet-week run ${run}: exit ${rc}\n${stderr}")
    endif()
  endforeach()
  foreach(f results.json cost_optimization_report.html)
    execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${WORK}/r1/${f}" "${WORK}/r2/${f}" RESULT_VARIABLE same)
    if(NOT same EQUAL 0)
      message(FATAL_ERROR "two fleet-week runs wrote different ${f}")
    endif()
  endforeach()
  file(READ "${WORK}/r1/results.json" json)
  string(JSON std_usd GET "${json}" fleet_week standard total_usd)
  string(JSON sd_usd GET "${json}" fleet_week seedance total_usd)
  string(JSON n_levers LENGTH "${json}" fleet_week levers)
  string(JSON headline GET "${json}" fleet_week headline_set)
  string(JSON n_assumptions LENGTH "${json}" fleet_week sets 0 assumptions)
  # Issue 39: the competent base, issue 30's base beside it, the idle-compute metric per set.
  string(JSON shipped_usd GET "${json}" fleet_week sets 0 shipped_standard total_usd)
  string(JSON std_name GET "${json}" fleet_week standard stack)
  string(JSON idle_base GET "${json}" fleet_week sets 0 idle_gpu_hours base)
  string(JSON idle_owned GET "${json}" fleet_week sets 0 idle_gpu_hours owned_seedance)
  if(NOT n_levers EQUAL 8 OR n_assumptions LESS 5 OR NOT headline MATCHES "^held out: fleet a, week 2" OR
     NOT std_usd GREATER 0 OR NOT sd_usd GREATER 0 OR NOT shipped_usd GREATER std_usd OR
     NOT std_name MATCHES "^competent standard" OR NOT idle_base GREATER 0 OR NOT idle_owned GREATER 0)
    message(FATAL_ERROR "results.json fleet_week: levers ${n_levers}, assumptions ${n_assumptions}, headline '${headline}', "
                        "standard ${std_usd} (${std_name}), issue 30's ${shipped_usd}, seedance ${sd_usd}, "
                        "idle ${idle_base} / owned ${idle_owned}")
  endif()
  if(NOT stdout MATCHES "waterfall: each layer alone over the base" OR NOT stdout MATCHES "lower bound for the base's work")
    message(FATAL_ERROR "the table lacks the waterfall or the bound:\n${stdout}")
  endif()
  # The frontier (issue 39): Seedance's points, every standard row against the curve.
  string(JSON n_frontier LENGTH "${json}" fleet_week frontier seedance)
  string(JSON n_frontier_bases LENGTH "${json}" fleet_week frontier baselines)
  string(JSON none_below GET "${json}" fleet_week frontier no_baseline_below_curve)
  if(NOT n_frontier EQUAL 5 OR NOT n_frontier_bases EQUAL 4 OR NOT none_below OR NOT stdout MATCHES "frontier, Seedance across migrate_min_speed")
    message(FATAL_ERROR "results.json fleet_week.frontier: ${n_frontier} points, ${n_frontier_bases} baselines, none below: ${none_below}")
  endif()
  # --fleet: one set on the user's fleet instead of fleet b.
  execute_process(COMMAND "${SEEDANCE}" cost-benchmark --workload fleet-week --fleet "${SOURCE}/data/fleets/fleet-week-b.yaml"
                          --out "${WORK}/mine" RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  if(NOT rc EQUAL 0 OR NOT stdout MATCHES "your fleet: week 2, seeds 5-9" OR stdout MATCHES "second fleet shape b" OR
     NOT stdout MATCHES "held out: fleet a, week 2, seeds 5-9")
    message(FATAL_ERROR "--fleet: exit ${rc}\n${stdout}\n${stderr}")
  endif()
  # --history (issue 38): the user's week on the user's fleet, beside fleet a, with the waterfall.
  execute_process(COMMAND "${SEEDANCE}" cost-benchmark --workload fleet-week --fleet "${SOURCE}/examples/history/fleet.yaml"
                          --history "${SOURCE}/examples/history/day" --out "${WORK}/week"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  if(NOT rc EQUAL 0 OR NOT stdout MATCHES "your week: [^\n]*examples/history/day" OR
     NOT stdout MATCHES "held out: fleet a, week 2, seeds 5-9" OR NOT stdout MATCHES "5 notebook sessions and 2 serving")
    message(FATAL_ERROR "--history: exit ${rc}\n${stdout}\n${stderr}")
  endif()
  file(READ "${WORK}/week/results.json" json)
  string(JSON n_week_levers LENGTH "${json}" fleet_week sets 1 levers)
  string(JSON week_jobs GET "${json}" fleet_week sets 1 standard jobs)
  string(JSON week_weeks GET "${json}" fleet_week sets 1 standard weeks)
  if(NOT n_week_levers EQUAL 8 OR NOT week_jobs EQUAL 8 OR NOT week_weeks EQUAL 1)
    message(FATAL_ERROR "--history results.json: levers ${n_week_levers}, jobs ${week_jobs}, weeks ${week_weeks}")
  endif()
elseif(CASE STREQUAL "seed_instance")
  foreach(seed 0 1)
    execute_process(COMMAND "${SEEDANCE}" cost-benchmark --duration 6h --no-packing --seed ${seed} --out "${WORK}/s${seed}"
                    RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "exit ${rc}\n${stderr}")
    endif()
    file(READ "${WORK}/s${seed}/results.json" json)
    string(REGEX MATCH "\"work_gpu_hours_on_fastest_type\": [0-9.e+-]+" work${seed} "${json}")
  endforeach()
  if(work0 STREQUAL "" OR work0 STREQUAL work1)
    message(FATAL_ERROR "--seed 0 and --seed 1 gave the same llm-finetune instance: ${work0} / ${work1}")
  endif()
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
elseif(CASE STREQUAL "bad_history")
  set(ex "${SOURCE}/examples/history")
  execute_process(COMMAND "${SEEDANCE}" cost-benchmark --workload fleet-week --history "${ex}/day" --out "${out}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  expect_exit_2("--history: give --fleet FILE too")
  execute_process(COMMAND "${SEEDANCE}" cost-benchmark --workload llm-finetune --history "${ex}/day" --out "${out}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  expect_exit_2("--history is for --workload fleet-week")
  file(COPY "${ex}/day/" DESTINATION "${WORK}/day")
  file(READ "${WORK}/day/as-run.csv" rows)
  string(REPLACE ",notebook,10800," ",jupyter,10800," rows "${rows}")
  file(WRITE "${WORK}/day/as-run.csv" "${rows}")
  execute_process(COMMAND "${SEEDANCE}" cost-benchmark --workload fleet-week --fleet "${ex}/fleet.yaml" --history "${WORK}/day"
                          --out "${out}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  expect_exit_2("as-run\\.csv:11:[0-9]+: field 'kind': 'jupyter': expected batch, service or notebook")
else()
  message(FATAL_ERROR "unknown CASE '${CASE}'")
endif()
file(REMOVE_RECURSE "${WORK}")
