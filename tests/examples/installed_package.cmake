# The examples against an installed Spindle: installs the build tree into a scratch prefix,
# configures and builds examples/ there as a project of its own (find_package(Spindle),
# one target Spindle::dds to link), then runs its publisher and subscriber as two
# processes with the in-tree driver.
#   -DBUILD=<spindle build dir> -DSRC=<examples dir> -DWORK=<scratch dir> -DDRIVER=<exe>
#   [-DFLAGS=<extra compile/link flags, e.g. the sanitizers of the installed build>]
file(REMOVE_RECURSE ${WORK})
set(prefix ${WORK}/prefix)

function(step what)
  execute_process(${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc})")
  endif()
endfunction()

step("installing Spindle into ${prefix}"
  COMMAND ${CMAKE_COMMAND} --install ${BUILD} --prefix ${prefix} OUTPUT_QUIET)
step("configuring the examples against the installed package"
  COMMAND ${CMAKE_COMMAND} -S ${SRC} -B ${WORK}/build -G Ninja
          -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release
          "-DCMAKE_CXX_FLAGS=${FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${FLAGS}")
step("building the examples"
  COMMAND ${CMAKE_COMMAND} --build ${WORK}/build -j2)
# The programs load the shipped atomic.yaml; the package's profiles are found through
# SPINDLE_QOS_PATH since this prefix is not the one the build was configured for.
step("running the examples"
  COMMAND ${DRIVER} --publisher ${WORK}/build/sensor_publisher
          --subscriber ${WORK}/build/sensor_subscriber --samples 200
          --env SPINDLE_QOS_PATH=${prefix}/share/spindle/qos-profiles)
file(REMOVE_RECURSE ${WORK})
