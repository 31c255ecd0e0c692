# CLI tests of the entry point: --version, bare `seedance`, and suggestions for mistyped names.
# Run by ctest as: cmake -DSEEDANCE=... -DKUBECTL_SHIM=... -DCASE=... -P main_cli_test.cmake
include(${CMAKE_CURRENT_LIST_DIR}/cli_test_helpers.cmake)

if(CASE STREQUAL "version")
  expect_rc(0 ${SEEDANCE} --version)
  # "seedance 0.1.0 (a1b2c3d, Release)": version, commit (or "unknown" outside git), build type.
  expect_match("${stdout}" "^seedance [0-9]+\\.[0-9]+\\.[0-9]+ \\(([0-9a-f]+|unknown), [A-Za-z ]+\\)\n$")
  # The kubectl plugin shim passes the flag through (run beside a copy of the binary).
  expect_rc(0 sh ${KUBECTL_SHIM} --version)
elseif(CASE STREQUAL "bare")
  expect_rc(0 ${SEEDANCE})
  foreach(cmd bench cost-benchmark catalog batching ingest attribute export breaker audit lint)
    expect_match("${stdout}" "\n  ${cmd} ")
  endforeach()
  expect_match("${stdout}" "seedance COMMAND --help")
elseif(CASE STREQUAL "suggest")
  expect_rc(2 ${SEEDANCE} cost-benchmrk)
  expect_match("${stderr}" "unknown command 'cost-benchmrk' for 'seedance'; did you mean 'cost-benchmark'\\?")
  expect_rc(2 ${SEEDANCE} bench spt)
  expect_match("${stderr}" "unknown command 'spt' for 'seedance bench'; did you mean 'spot'\\?")
  expect_rc(2 ${SEEDANCE} cost-benchmark --workloadd llm-finetune)
  expect_match("${stderr}" "unknown option '--workloadd' for 'seedance cost-benchmark'; did you mean '--workload'\\?")
  # Issue 38: a mistyped command before its options is named, not the options.
  expect_rc(2 ${SEEDANCE} atribute --db ledger.db)
  expect_match("${stderr}" "unknown command 'atribute' for 'seedance'; did you mean 'attribute'\\?")
  expect_rc(2 ${SEEDANCE} export focsu --db ledger.db --out x.csv)
  expect_match("${stderr}" "unknown command 'focsu' for 'seedance export'; did you mean 'focus'\\?")
  # Nothing close: no made-up suggestion, still exit 2.
  expect_rc(2 ${SEEDANCE} frobnicate)
  if(stderr MATCHES "did you mean")
    message(FATAL_ERROR "suggested a name for 'frobnicate':\n${stderr}")
  endif()
else()
  message(FATAL_ERROR "unknown CASE ${CASE}")
endif()
