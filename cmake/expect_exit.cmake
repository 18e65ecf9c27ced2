# Runs CMD with ARGS (a ;-list) and fails unless it exits with EXPECT.
# Used by the <exe>.help and <exe>.usage tests: cmake -DCMD=... -DARGS=... -DEXPECT=N -P this
execute_process(COMMAND ${CMD} ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc STREQUAL EXPECT)
  message(FATAL_ERROR "${CMD} ${ARGS}: exit ${rc}, expected ${EXPECT}\nstdout:\n${out}\nstderr:\n${err}")
endif()
message(STATUS "${CMD} ${ARGS}: exit ${rc} as expected")
