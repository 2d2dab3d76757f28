# cmake -DNODE=... -DPROGRAM=lmm_runtime_tests.js -DPROBE=node_exit_probe.js -DLOG=FILE -P check_node_exit.cmake
# Runs one short test of the WebAssembly test program in Node.js and fails unless it ended with
# exit code 0 and without process.exit() on the main thread (node_exit.js: Node.js exits by
# itself once the pthread workers are gone, not from process.exit beside exiting threads,
# nodejs/node#25007).
file(REMOVE "${LOG}")
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env "LMM_EXIT_PROBE_LOG=${LOG}"
          "${NODE}" --no-experimental-fetch -r "${PROBE}" "${PROGRAM}" --gtest_filter=Names.UsableNamesPass
  RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE output)
if(NOT EXISTS "${LOG}")
  message(FATAL_ERROR "the exit probe recorded nothing (exit status ${status}):\n${output}")
endif()
file(READ "${LOG}" record)
if(NOT status EQUAL 0 OR NOT output MATCHES "PASSED  \\] 1 test" OR NOT record MATCHES "exit event 0" OR
   record MATCHES "process\\.")
  message(FATAL_ERROR "the test program must end with status 0 and no process.exit on the main thread; "
                      "exit status ${status}, the probe recorded:\n${record}\noutput:\n${output}")
endif()
message(STATUS "ended with status 0, the exit event and no process.exit on the main thread")
