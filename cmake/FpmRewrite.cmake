# fpm_rewrite_sources(<target> <source>...)
#
# Runs fpm-rewrite on each source at build time (again whenever the source,
# a header it includes or a kernel file its pragmas name changes) and
# compiles the rewritten file in its place; links the target to the runtime.
# The rewriter sees the target's include directories, compile definitions
# and language standard, so it parses the file as the compiler does.
#
# Works in fpm's own build tree and from an installed package
# (find_package(fpm)): both provide the targets fpm::fpm-rewrite and
# fpm::fpmrt.

function(fpm_rewrite_sources target)
  if(NOT TARGET ${target})
    message(FATAL_ERROR "fpm_rewrite_sources: no target named '${target}'")
  endif()
  if(NOT ARGN)
    message(FATAL_ERROR "fpm_rewrite_sources(${target}): no sources given")
  endif()

  set(includes "$<TARGET_PROPERTY:${target},INCLUDE_DIRECTORIES>")
  set(defines "$<TARGET_PROPERTY:${target},COMPILE_DEFINITIONS>")
  # $<SEMICOLON>, not ';': a literal one would split the expression into
  # list items before it is evaluated.
  set(includeFlags "$<$<BOOL:${includes}>:-I$<JOIN:${includes},$<SEMICOLON>-I>>")
  set(defineFlags "$<$<BOOL:${defines}>:-D$<JOIN:${defines},$<SEMICOLON>-D>>")

  foreach(source IN LISTS ARGN)
    get_filename_component(absolute "${source}" ABSOLUTE)
    get_filename_component(stem "${source}" NAME_WE)
    get_filename_component(extension "${source}" LAST_EXT)
    if(extension STREQUAL ".c")
      set(language C)
      set(standard "-std=c$<TARGET_PROPERTY:${target},C_STANDARD>")
    else()
      set(language CXX)
      set(standard "-std=c++$<TARGET_PROPERTY:${target},CXX_STANDARD>")
    endif()
    # An unset standard property leaves "-std=c" or "-std=c++": drop it.
    set(standard "$<$<NOT:$<OR:$<STREQUAL:${standard},-std=c>,$<STREQUAL:${standard},-std=c++>>>:${standard}>")

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
              -- "${standard}" "${includeFlags}" "${defineFlags}"
      DEPENDS "${absolute}" fpm::fpm-rewrite
      ${depfileArgs}
      COMMENT "fpm-rewrite ${source}"
      COMMAND_EXPAND_LISTS
      VERBATIM)
    set_source_files_properties("${rewritten}" PROPERTIES
      GENERATED TRUE LANGUAGE ${language})

    # Compile the rewritten file instead of the original.
    get_target_property(sources ${target} SOURCES)
    list(REMOVE_ITEM sources "${source}" "${absolute}")
    set_property(TARGET ${target} PROPERTY SOURCES ${sources} "${rewritten}")
  endforeach()
  target_link_libraries(${target} PRIVATE fpm::fpmrt)
endfunction()
