# Builds the Doxygen site (run by the `docs` target as `cmake -P`, so that Doxygen is looked for
# when the site is built: installing it needs no reconfigure).
# In: STAGED_DOC_ROOT (the repository), STAGED_DOC_OUT (the site goes to <it>/html),
#     STAGED_DOC_VERSION. Fails on any Doxygen warning (WARN_AS_ERROR in Doxyfile.in).
cmake_minimum_required(VERSION 3.25)
foreach(var STAGED_DOC_ROOT STAGED_DOC_OUT STAGED_DOC_VERSION)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "build_site.cmake: ${var} is not set")
  endif()
endforeach()

find_program(staged_doxygen doxygen NO_CACHE)
find_program(staged_python python3 NO_CACHE)
find_program(staged_dot dot NO_CACHE)
if(NOT staged_doxygen)
  message(FATAL_ERROR "docs: Doxygen is not installed. scripts/docs.sh installs it (Debian/Ubuntu), "
                      "or install doxygen with your package manager; no reconfigure is needed.")
endif()
if(NOT staged_python)
  message(FATAL_ERROR "docs: python3 is needed (it translates the Markdown pages for Doxygen)")
endif()
set(STAGED_HAVE_DOT NO)
if(staged_dot)
  set(STAGED_HAVE_DOT YES)
endif()

# Only paths that exist go into the Doxyfile: a fresh clone has no empty folders.
# Order matters: the navigation tree lists pages in INPUT order.
function(staged_existing out)
  set(found "")
  foreach(path IN LISTS ARGN)
    if(EXISTS ${STAGED_DOC_ROOT}/${path})
      string(APPEND found " \"${path}\"")
    endif()
  endforeach()
  set(${out} "${found}" PARENT_SCOPE)
endfunction()
staged_existing(STAGED_DOC_INPUT
  README.md docs/pages/learning_path.md docs/pages/gpu.md chapters docs/results/README.md
  docs/pages/pitfalls.md
  docs/pages/measuring.md docs/pages/glossary.md docs/pages/references.md
  docs/pages/instructors.md docs/pages/making_pages.md common)
staged_existing(STAGED_DOC_IMAGES docs/plots docs/diagrams)
staged_existing(STAGED_DOC_EXAMPLES chapters common tests docs/results)
# Files a page links to that are neither pages nor images: copied next to the pages.
file(GLOB staged_extra RELATIVE ${STAGED_DOC_ROOT}
     ${STAGED_DOC_ROOT}/docs/results/*.csv ${STAGED_DOC_ROOT}/docs/results/*.txt)
list(SORT staged_extra)
set(STAGED_DOC_EXTRA_FILES "")
foreach(path IN LISTS staged_extra)
  string(APPEND STAGED_DOC_EXTRA_FILES " \"${path}\"")
endforeach()
set(STAGED_DOC_FILTER "${staged_python} ${STAGED_DOC_ROOT}/docs/tools/doxygen_filter.py")

configure_file(${CMAKE_CURRENT_LIST_DIR}/Doxyfile.in ${STAGED_DOC_OUT}/Doxyfile @ONLY)
file(REMOVE_RECURSE ${STAGED_DOC_OUT}/html)
execute_process(COMMAND ${staged_doxygen} ${STAGED_DOC_OUT}/Doxyfile
                WORKING_DIRECTORY ${STAGED_DOC_ROOT} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "docs: Doxygen failed (exit ${rc}); every warning above is an error")
endif()
# Code links on a chapter's pages go to that chapter's symbols; no link of the site is dead.
execute_process(COMMAND ${staged_python} ${CMAKE_CURRENT_LIST_DIR}/tools/site_links.py
                        --html ${STAGED_DOC_OUT}/html --tag ${STAGED_DOC_OUT}/staged.tag
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "docs: the site has dead links (listed above)")
endif()
message(STATUS "docs: ${STAGED_DOC_OUT}/html/index.html")
