# fpm_rewrite_sources(<target> [MPI] <source>...)
#
# Runs fpm-rewrite on each source at build time (again whenever the source,
# a header it includes or a kernel file its pragmas name changes) and
# compiles the rewritten file in its place; links the target to the runtime.
# The rewriter sees the target's include directories, compile definitions,
# language standard and extensions (C_STANDARD 90 is -std=gnu90 for both,
# unless C_EXTENSIONS is OFF) and the compile options it shares with the
# compiler (-W..., -D, -U, -I, -std=, -f[no-]signed-char, -fms-extensions),
# so it parses the file as the compiler does and a warning the target
# silences stays silent. The rewriter's remarks (-Rfpm: what runs on
# devices, and why not) show in the build with the target property
# FPM_REMARKS ON, or for every target with the variable FPM_REMARKS ON.
#
# Works in fpm's own build tree and from an installed package
# (find_package(fpm)): both provide the targets fpm::fpm-rewrite and
# fpm::fpmrt.
#
# MPI: the program's loops run across the ranks of `mpirun -np R ./app`,
# unchanged: the target links fpm::fpmrt-mpi (fpm built with MPI, and MPI
# found by find_package(fpm)), and a generated source calls
# fpm_mpi_route_loops() before main() (include/fpm/fpm_mpi.h). Started
# without mpirun, such a program is a job of one rank.

function(fpm_rewrite_sources target)
  if(NOT TARGET ${target})
    message(FATAL_ERROR "fpm_rewrite_sources: no target named '${target}'")
  endif()
  cmake_parse_arguments(PARSE_ARGV 1 fpm "MPI" "" "")
  set(sources ${fpm_UNPARSED_ARGUMENTS})
  if(NOT sources)
    message(FATAL_ERROR "fpm_rewrite_sources(${target}): no sources given")
  endif()

  set(includes "$<TARGET_PROPERTY:${target},INCLUDE_DIRECTORIES>")
  set(defines "$<TARGET_PROPERTY:${target},COMPILE_DEFINITIONS>")
  # $<SEMICOLON>, not ';': a literal one would split the expression into
  # list items before it is evaluated.
  set(includeFlags "$<$<BOOL:${includes}>:-I$<JOIN:${includes},$<SEMICOLON>-I>>")
  set(defineFlags "$<$<BOOL:${defines}>:-D$<JOIN:${defines},$<SEMICOLON>-D>>")
  # fpm's own headers, after the target's: a source that calls the runtime
  # itself (<fpm/fpm.h>) parses as it compiles once it links fpm::fpmrt.
  set(fpmIncludes "$<TARGET_PROPERTY:fpm::fpmrt,INTERFACE_INCLUDE_DIRECTORIES>")
  set(fpmIncludeFlags "-I$<JOIN:${fpmIncludes},$<SEMICOLON>-I>")
  # Only the options both compilers read alike: another compiler's -f and
  # -m options could stop Clang's driver.
  set(sharedOptions "$<FILTER:$<TARGET_PROPERTY:${target},COMPILE_OPTIONS>,INCLUDE,^-(W|D|U|I|std=|f(no-)?(signed-char|unsigned-char|ms-extensions))>")
  set(remarks "$<$<OR:$<BOOL:$<TARGET_PROPERTY:${target},FPM_REMARKS>>,$<BOOL:${FPM_REMARKS}>>:-Rfpm>")

  foreach(source IN LISTS sources)
    get_filename_component(absolute "${source}" ABSOLUTE)
    get_filename_component(stem "${source}" NAME_WE)
    get_filename_component(extension "${source}" LAST_EXT)
    if(extension STREQUAL ".c")
      set(language C)
    else()
      set(language CXX)
    endif()
    # -std=<c|gnu><N>, as CMake gives the compiler: GNU's dialect unless
    # <LANG>_EXTENSIONS is OFF (unset is ON); no -std= where the standard
    # is unset (both compilers' default).
    set(level "$<TARGET_PROPERTY:${target},${language}_STANDARD>")
    set(extensions "$<TARGET_PROPERTY:${target},${language}_EXTENSIONS>")
    set(dialect "$<IF:$<OR:$<STREQUAL:${extensions},>,$<BOOL:${extensions}>>,gnu,c>")
    if(language STREQUAL "CXX")
      set(dialect "${dialect}++")
    endif()
    set(standard "$<$<BOOL:${level}>:-std=${dialect}${level}>")

    set(rewritten "${CMAKE_CURRENT_BINARY_DIR}/fpm/${target}/${stem}.fpm${extension}")
    # Ninja makes an output's folder, make does not.
    file(MAKE_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}/fpm/${target}")
    # What the rewrite read besides the source (headers, `kernel("x.cl",
    # ...)` files) comes from the rewriter's dependency file, where the
    # generator reads one (Ninja and Makefile generators; tested with both).
    set(depfileFlag "")
    set(depfileArgs "")
    if(CMAKE_GENERATOR MATCHES "Ninja|Makefiles")
      set(depfileFlag "--dependency-file=${rewritten}.d")
      set(depfileArgs DEPFILE "${rewritten}.d")
    endif()
    add_custom_command(
      OUTPUT "${rewritten}"
      COMMAND fpm::fpm-rewrite "${absolute}" -o "${rewritten}" ${depfileFlag}
              "${remarks}" -- "${standard}" "${includeFlags}"
              "${fpmIncludeFlags}" "${defineFlags}" "${sharedOptions}"
      DEPENDS "${absolute}" fpm::fpm-rewrite
      ${depfileArgs}
      COMMENT "fpm-rewrite ${source}"
      COMMAND_EXPAND_LISTS
      VERBATIM)
    # The rewritten file lives in the build tree: `#include "x.h"` must
    # still find the headers beside the source, as it does there.
    get_filename_component(sourceDirectory "${absolute}" DIRECTORY)
    set_source_files_properties("${rewritten}" PROPERTIES
      GENERATED TRUE LANGUAGE ${language}
      COMPILE_OPTIONS "-iquote;${sourceDirectory}")

    # Compile the rewritten file instead of the original.
    get_target_property(targetSources ${target} SOURCES)
    list(REMOVE_ITEM targetSources "${source}" "${absolute}")
    set_property(TARGET ${target} PROPERTY SOURCES ${targetSources}
                 "${rewritten}")
  endforeach()
  target_link_libraries(${target} PRIVATE fpm::fpmrt)

  if(fpm_MPI)
    if(NOT TARGET fpm::fpmrt-mpi)
      message(FATAL_ERROR "fpm_rewrite_sources(${target} MPI): no "
              "fpm::fpmrt-mpi: fpm was built without MPI, or MPI is not "
              "found here")
    endif()
    # A constructor that routes every loop through libfpmrt-mpi; it also
    # makes the program need the library, whatever --as-needed says. C
    # when the project has it, else C++.
    get_property(languages GLOBAL PROPERTY ENABLED_LANGUAGES)
    set(extension cpp)
    set(linkage "extern \"C\" ")
    if("C" IN_LIST languages)
      set(extension c)
      set(linkage "")
    endif()
    set(route "${CMAKE_CURRENT_BINARY_DIR}/fpm/${target}/fpm_mpi_route.${extension}")
    file(CONFIGURE OUTPUT "${route}" CONTENT
"/* Generated by fpm_rewrite_sources(${target} MPI): the loops of this
   program run across the ranks of its MPI job (fpm/fpm_mpi.h). */
${linkage}void fpm_mpi_route_loops(void);
__attribute__((constructor)) static void fpm_mpi_route(void) {
  fpm_mpi_route_loops();
}
")
    target_sources(${target} PRIVATE "${route}")
    target_link_libraries(${target} PRIVATE fpm::fpmrt-mpi)
  endif()
endfunction()
