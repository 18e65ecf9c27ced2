# Helpers that declare a chapter: its kernel library, its executables (each with smoke tests)
# and its GoogleTest suite. Chapters call these and nothing else; see chapters/*/CMakeLists.txt.

set(STAGED_TESTS_DIR ${PROJECT_SOURCE_DIR}/tests)
set(STAGED_EXPECT_EXIT ${CMAKE_CURRENT_LIST_DIR}/expect_exit.cmake)

# Warnings as the project wants them: -Wall -Wextra on host code, nvcc warnings as errors.
function(staged_target_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra --Werror=all-warnings -lineinfo>
    $<$<AND:$<COMPILE_LANGUAGE:CUDA>,$<BOOL:${STAGED_DEVICE_DEBUG}>>:-G>)
endfunction()

function(_staged_reject_unparsed fn)
  if(ARGN)
    message(FATAL_ERROR "${fn}: unknown arguments: ${ARGN}")
  endif()
endfunction()

# The chapter's number prefix, e.g. 01_minmax_reduction -> ch01.
function(_staged_prefix chapter out)
  if(NOT chapter MATCHES "^([0-9][0-9])_[a-z0-9_]+$")
    message(FATAL_ERROR "chapter folder '${chapter}' must look like NN_snake_case")
  endif()
  set(${out} ch${CMAKE_MATCH_1} PARENT_SCOPE)
endfunction()

# staged_add_chapter_executable(NAME <exe> CHAPTER <folder> SOURCES <files...>
#   [LIBRARIES <libs...>] [DEFINES <defs...>] [SMOKE_ARGS <args...>] [NO_SMOKE])
# One executable in build/bin plus three tests: <exe>.smoke (a small verified run; exit 77 = skip
# without a GPU), <exe>.help (--help exits 0) and <exe>.usage (an unknown flag exits 2). The last
# two need no GPU.
function(staged_add_chapter_executable)
  cmake_parse_arguments(PARSE_ARGV 0 ARG "NO_SMOKE" "NAME;CHAPTER"
                        "SOURCES;LIBRARIES;DEFINES;SMOKE_ARGS")
  _staged_reject_unparsed(staged_add_chapter_executable ${ARG_UNPARSED_ARGUMENTS})
  if(NOT ARG_NAME OR NOT ARG_CHAPTER OR NOT ARG_SOURCES)
    message(FATAL_ERROR "staged_add_chapter_executable: NAME, CHAPTER and SOURCES are required")
  endif()
  add_executable(${ARG_NAME} ${ARG_SOURCES})
  target_link_libraries(${ARG_NAME} PRIVATE staged::common ${ARG_LIBRARIES})
  target_compile_definitions(${ARG_NAME} PRIVATE ${ARG_DEFINES})
  staged_target_warnings(${ARG_NAME})
  if(NOT (STAGED_BUILD_TESTS AND BUILD_TESTING))
    return()
  endif()
  if(NOT ARG_NO_SMOKE)
    add_test(NAME ${ARG_NAME}.smoke COMMAND ${ARG_NAME} ${ARG_SMOKE_ARGS})
    set_tests_properties(${ARG_NAME}.smoke PROPERTIES
      SKIP_RETURN_CODE 77 LABELS "gpu;smoke;${ARG_CHAPTER}" TIMEOUT 600)
  endif()
  add_test(NAME ${ARG_NAME}.help
    COMMAND ${CMAKE_COMMAND} -DCMD=$<TARGET_FILE:${ARG_NAME}> -DARGS=--help -DEXPECT=0
            -P ${STAGED_EXPECT_EXIT})
  add_test(NAME ${ARG_NAME}.usage
    COMMAND ${CMAKE_COMMAND} -DCMD=$<TARGET_FILE:${ARG_NAME}> -DARGS=--no-such-flag -DEXPECT=2
            -P ${STAGED_EXPECT_EXIT})
  set_tests_properties(${ARG_NAME}.help ${ARG_NAME}.usage PROPERTIES
    LABELS "host;cli;${ARG_CHAPTER}")
endfunction()

# staged_add_chapter(NAME <folder> SOURCES <kernel files...> MAIN <driver.cu>
#   VARIANTS <v...> [LIBRARIES <libs...>] [SMOKE_ARGS <args...>])
# Builds the chapter's kernels once into the library chNN_kernels, then one executable
# chNN_<v> per variant from the same driver, compiled with STAGED_VARIANT="<v>".
function(staged_add_chapter)
  cmake_parse_arguments(PARSE_ARGV 0 ARG "" "NAME;MAIN" "SOURCES;VARIANTS;LIBRARIES;SMOKE_ARGS")
  _staged_reject_unparsed(staged_add_chapter ${ARG_UNPARSED_ARGUMENTS})
  if(NOT ARG_NAME OR NOT ARG_SOURCES OR NOT ARG_MAIN OR NOT ARG_VARIANTS)
    message(FATAL_ERROR "staged_add_chapter: NAME, SOURCES, MAIN and VARIANTS are required")
  endif()
  _staged_prefix(${ARG_NAME} prefix)
  add_library(${prefix}_kernels STATIC ${ARG_SOURCES})
  target_link_libraries(${prefix}_kernels PUBLIC staged::common ${ARG_LIBRARIES})
  staged_target_warnings(${prefix}_kernels)
  foreach(variant IN LISTS ARG_VARIANTS)
    staged_add_chapter_executable(NAME ${prefix}_${variant} CHAPTER ${ARG_NAME}
      SOURCES ${ARG_MAIN} LIBRARIES ${prefix}_kernels DEFINES STAGED_VARIANT="${variant}"
      SMOKE_ARGS ${ARG_SMOKE_ARGS})
  endforeach()
endfunction()

# staged_add_chapter_tests(CHAPTER <folder> SOURCES <files relative to tests/...>
#   [HOST_SOURCES <files...>] [LIBRARIES <libs...>])
# The chapter's GoogleTest executables, linked with its kernels and discovered at test time:
# chNN_tests from SOURCES (labels gpu and <folder>; its tests skip without a device) and, when
# HOST_SOURCES is given, chNN_host_tests (labels host and <folder>) for tests that need no GPU.
function(staged_add_chapter_tests)
  cmake_parse_arguments(PARSE_ARGV 0 ARG "" "CHAPTER" "SOURCES;HOST_SOURCES;LIBRARIES")
  _staged_reject_unparsed(staged_add_chapter_tests ${ARG_UNPARSED_ARGUMENTS})
  if(NOT ARG_CHAPTER OR NOT ARG_SOURCES)
    message(FATAL_ERROR "staged_add_chapter_tests: CHAPTER and SOURCES are required")
  endif()
  if(NOT (STAGED_BUILD_TESTS AND BUILD_TESTING))
    return()
  endif()
  _staged_prefix(${ARG_CHAPTER} prefix)
  list(TRANSFORM ARG_SOURCES PREPEND ${STAGED_TESTS_DIR}/)
  staged_add_gtest(NAME ${prefix}_tests SOURCES ${ARG_SOURCES}
    LIBRARIES ${prefix}_kernels ${ARG_LIBRARIES} LABELS gpu ${ARG_CHAPTER})
  if(ARG_HOST_SOURCES)
    list(TRANSFORM ARG_HOST_SOURCES PREPEND ${STAGED_TESTS_DIR}/)
    staged_add_gtest(NAME ${prefix}_host_tests SOURCES ${ARG_HOST_SOURCES}
      LIBRARIES ${prefix}_kernels ${ARG_LIBRARIES} LABELS host ${ARG_CHAPTER})
  endif()
endfunction()

# staged_add_gtest(NAME <exe> SOURCES <files...> [LIBRARIES <libs...>] [LABELS <labels...>])
# A GoogleTest executable whose tests are registered with ctest when ctest runs, in batches
# (cmake/gtest_batches.cmake): one process runs up to STAGED_GTEST_BATCH tests of one
# `Suite.Test`, since a process and its CUDA context cost more than most tests. Its main()
# returns 77 when every test it ran was skipped, and each batch treats 77 as "skipped". Every
# batch gets LABELS, SKIP_RETURN_CODE 77 and a 900 s TIMEOUT.
#
# Tests that time the GPU and assert on the times must have it to themselves: their suite's name
# ends in "Timing" (GpuTiming.*, MinMaxTiming.*, Prefix/MeasuredTiming.*/param), and their
# batches get the label `timing` and RUN_SERIAL (a parallel ctest starts them only when nothing
# else runs). Everything else runs at full parallelism. scripts/check_test_labels.py checks the
# rule both ways (every test of a *Timing suite is labelled, and no test outside one calls the
# timer).
set(STAGED_GTEST_BATCH 16 CACHE STRING "GoogleTest tests run by one ctest test (one process)")
set(STAGED_GTEST_BATCHES ${CMAKE_CURRENT_LIST_DIR}/gtest_batches.cmake)
function(staged_add_gtest)
  cmake_parse_arguments(PARSE_ARGV 0 ARG "" "NAME" "SOURCES;LIBRARIES;LABELS")
  _staged_reject_unparsed(staged_add_gtest ${ARG_UNPARSED_ARGUMENTS})
  add_executable(${ARG_NAME} ${ARG_SOURCES})
  target_link_libraries(${ARG_NAME} PRIVATE staged_gtest_main ${ARG_LIBRARIES})
  target_include_directories(${ARG_NAME} PRIVATE ${STAGED_TESTS_DIR})
  staged_target_warnings(${ARG_NAME})
  set_target_properties(${ARG_NAME} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests)
  set(include_file ${CMAKE_CURRENT_BINARY_DIR}/${ARG_NAME}_batches_include.cmake)
  string(CONCAT content
    "set(_exe [==[$<TARGET_FILE:${ARG_NAME}>]==])\n"
    "set(_name ${ARG_NAME})\n"
    "set(_labels [==[${ARG_LABELS}]==])\n"
    "set(_batch ${STAGED_GTEST_BATCH})\n"
    "set(_cache [==[${CMAKE_CURRENT_BINARY_DIR}/${ARG_NAME}_batches.cmake]==])\n"
    "include([==[${STAGED_GTEST_BATCHES}]==])\n")
  file(GENERATE OUTPUT ${include_file} CONTENT "${content}")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${include_file})
endfunction()
