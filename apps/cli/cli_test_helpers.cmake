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
