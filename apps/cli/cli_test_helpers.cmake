# Shared checks of the CLI test scripts (included by *_cli_test.cmake).

# After an execute_process that set rc, stdout and stderr: the command must have failed as a
# usage/input error (exit 2), with stderr matching `message_regex`, leaving nothing in ${out}.
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

# Runs a command (the full command line in ARGN); it must exit `want`. Sets stdout and stderr.
function(expect_rc want)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE so ERROR_VARIABLE se)
  if(NOT rc EQUAL ${want})
    message(FATAL_ERROR "expected exit ${want}, got ${rc}: ${ARGN}\nstdout: ${so}\nstderr: ${se}")
  endif()
  set(stdout "${so}" PARENT_SCOPE)
  set(stderr "${se}" PARENT_SCOPE)
endfunction()

function(expect_match text regex)
  if(NOT text MATCHES "${regex}")
    message(FATAL_ERROR "output does not match '${regex}':\n${text}")
  endif()
endfunction()
