# Compiles c_api_test.c as C11 against fpm.h, links -lfpmrt alone, and runs
# it with 1 and 3 OpenMP threads. Only libfpmrt's folder is on the loader's
# path: libomp must be found through libfpmrt's RUNPATH.
separate_arguments(extraFlags UNIX_COMMAND "${EXTRA_FLAGS}")
execute_process(
  COMMAND ${CC} ${extraFlags} -std=c11 -Wall -Wextra -pedantic -Werror ${SOURCE}
          -I ${INCLUDE} -I ${BUILD_INCLUDE} -L ${LIBRARY_DIR} -lfpmrt
          -o ${OUTPUT}
  RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "compiling and linking ${SOURCE} with -lfpmrt failed")
endif()
foreach(threads 1 3)
  execute_process(
    COMMAND ${CMAKE_COMMAND} -E env --unset=LD_LIBRARY_PATH
            LD_LIBRARY_PATH=${LIBRARY_DIR} OMP_NUM_THREADS=${threads}
            ${OUTPUT}
    RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${OUTPUT} failed with OMP_NUM_THREADS=${threads}")
  endif()
endforeach()
