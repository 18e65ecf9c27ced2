# Runs CMD with ARGS (a ;-list) and fails unless it exits with EXPECT and, when EXPECT_OUTPUT is
# given, its stdout or stderr matches that regular expression.
# Used by the <exe>.help and <exe>.usage tests: cmake -DCMD=... -DARGS=... -DEXPECT=N -P this
execute_process(COMMAND ${CMD} ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc STREQUAL EXPECT)
  message(FATAL_ERROR "${CMD} ${ARGS}: exit ${rc}, expected ${EXPECT}\nstdout:\n${out}\nstderr:\n${err}")
endif()
if(DEFINED EXPECT_OUTPUT AND NOT "${out}${err}" MATCHES "${EXPECT_OUTPUT}")
  message(FATAL_ERROR "${CMD} ${ARGS}: the output does not match '${EXPECT_OUTPUT}'\n"
                      "stdout:\n${out}\nstderr:\n${err}")
endif()
message(STATUS "${CMD} ${ARGS}: exit ${rc} as expected")
