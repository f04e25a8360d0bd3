# A user's build: configured as the README says, without
# FPM_DEVELOPER_CHECKS, it builds no fuzz target and no sanitizer copy of
# the runtime or the tools (about half the objects of the developer's
# build). Run by CTest as
#   cmake -DSOURCE=... -DWORK=... -DC=... -DCXX=... -DPREFIX=... -P default-build.cmake
file(REMOVE_RECURSE "${WORK}")
execute_process(
  COMMAND "${CMAKE_COMMAND}" -S "${SOURCE}" -B "${WORK}" -G Ninja
          -DCMAKE_BUILD_TYPE=Release "-DCMAKE_C_COMPILER=${C}"
          "-DCMAKE_CXX_COMPILER=${CXX}" "-DCMAKE_PREFIX_PATH=${PREFIX}"
  RESULT_VARIABLE status OUTPUT_QUIET ERROR_VARIABLE errors)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "default-build: configure failed: ${errors}")
endif()
file(STRINGS "${WORK}/CMakeCache.txt" options
     REGEX "^FPM_(BUILD_FUZZERS|SANITIZER_TESTS):BOOL=")
if(NOT options STREQUAL "FPM_BUILD_FUZZERS:BOOL=OFF;FPM_SANITIZER_TESTS:BOOL=OFF")
  message(FATAL_ERROR "default-build: a user's build has ${options}")
endif()
file(READ "${WORK}/build.ninja" rules)
foreach(target fpm-fuzz- fpmrt-asan fpm-rewrite-asan fpm-unittests-tsan)
  string(FIND "${rules}" "${target}" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "default-build: a user's build makes ${target}")
  endif()
endforeach()
file(REMOVE_RECURSE "${WORK}")
message(STATUS "default-build: no fuzzers and no sanitizer builds")
