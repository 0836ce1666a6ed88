# Runs idlc on one file and checks its exit code, stderr and (optionally) depfile.
# -DIDLC=… -DIDL=… -DOUT=… -DEXPECT_RC=… [-DARGS=a;b] [-DEXPECT_STDERR=substring]
# [-DEXPECT_DEPFILE=substring]
file(REMOVE_RECURSE ${OUT})
execute_process(
  COMMAND ${IDLC} ${ARGS} -o ${OUT} --depfile ${OUT}/out.d ${IDL}
  RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_VARIABLE out)
if(NOT rc EQUAL EXPECT_RC)
  message(FATAL_ERROR "idlc exited with ${rc}, expected ${EXPECT_RC}\nstderr:\n${err}")
endif()
if(DEFINED EXPECT_STDERR)
  string(FIND "${err}" "${EXPECT_STDERR}" pos)
  if(pos EQUAL -1)
    message(FATAL_ERROR "stderr lacks '${EXPECT_STDERR}':\n${err}")
  endif()
endif()
if(DEFINED EXPECT_DEPFILE)
  file(READ ${OUT}/out.d dep)
  string(FIND "${dep}" "${EXPECT_DEPFILE}" pos)
  if(pos EQUAL -1)
    message(FATAL_ERROR "depfile lacks '${EXPECT_DEPFILE}':\n${dep}")
  endif()
endif()
