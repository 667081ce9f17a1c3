# One helper per component, so every component is declared the same way and its dependency rule
# is enforced by the build rather than promised in a README.
#
#   leadflow_component(<name>
#     SOURCES  a.cpp b.cpp ...          explicit: a new file is added here, never globbed
#     DEPS     base domain ...          the leadflow components it may include and links (PUBLIC)
#     LIBS     nlohmann_json::... ...   third-party targets its public headers need (PUBLIC)
#     DRIVERS  PkgConfig::SQLITE3 ...   third-party targets only its sources use (PRIVATE)
#     DRIVER_HEADERS sqlite3.h ...      the driver headers its sources may include)
#
# Makes the library leadflow_<name> (static; shared with LEADFLOW_SHARED_COMPONENTS) with the
# alias leadflow::<name>, `include/` PUBLIC and `src/` PRIVATE. A check runs before the library compiles: every `#include "leadflow/X/..."`
# in the component must name the component itself or one of its DEPS, and a driver header
# (sqlite3.h, libpq-fe.h, librdkafka/, curl/, nghttp2/, openssl/, httplib.h, simdjson.h,
# sodium.h, zlib.h) may appear only where DRIVER_HEADERS allows it. A wrong include fails the build with the file and the line.
include_guard(GLOBAL)

set(LEADFLOW_DRIVER_HEADERS sqlite3.h libpq-fe.h librdkafka/ curl/ nghttp2/ openssl/ httplib.h
  simdjson.h sodium.h zlib.h
  CACHE INTERNAL "Headers of the drivers only some components may include")

function(leadflow_component name)
  cmake_parse_arguments(C "" "" "SOURCES;DEPS;LIBS;DRIVERS;DRIVER_HEADERS" ${ARGN})
  set(target leadflow_${name})
  add_library(${target} ${LEADFLOW_LIBRARY_KIND} ${C_SOURCES})
  add_library(leadflow::${name} ALIAS ${target})
  target_include_directories(${target} PUBLIC include PRIVATE src)
  set(deps)
  foreach(d IN LISTS C_DEPS)
    list(APPEND deps leadflow::${d})
  endforeach()
  target_link_libraries(${target} PUBLIC ${deps} ${C_LIBS} PRIVATE ${C_DRIVERS})
  set_property(TARGET ${target} PROPERTY LEADFLOW_DEPS "${C_DEPS}")

  file(GLOB_RECURSE headers CONFIGURE_DEPENDS
    ${CMAKE_CURRENT_SOURCE_DIR}/include/*.hpp ${CMAKE_CURRENT_SOURCE_DIR}/src/*.hpp)
  set(files)
  foreach(f IN LISTS C_SOURCES headers)
    get_filename_component(abs ${f} ABSOLUTE)
    list(APPEND files ${abs})
  endforeach()
  leadflow_include_check(${name} "${files}" "${C_DEPS}" "${C_DRIVER_HEADERS}" ${target})
endfunction()

# The include check of one component (or executable): `files` may include leadflow/<name>/ and
# leadflow/<dep>/ for each of `deps`, and the driver headers in `drivers`.
function(leadflow_include_check name files deps drivers target)
  set(list_file ${CMAKE_CURRENT_BINARY_DIR}/${name}.include-check.files)
  file(WRITE ${list_file} "${files}")
  set(stamp ${CMAKE_CURRENT_BINARY_DIR}/${name}.include-check.ok)
  add_custom_command(OUTPUT ${stamp}
    COMMAND ${CMAKE_COMMAND} -DCOMPONENT=${name} "-DALLOWED=${deps}" "-DDRIVERS=${drivers}"
      "-DFORBIDDEN=${LEADFLOW_DRIVER_HEADERS}" -DFILES=${list_file} -DSTAMP=${stamp}
      -P ${PROJECT_SOURCE_DIR}/scripts/cmake/check_includes.cmake
    DEPENDS ${files} ${list_file} ${PROJECT_SOURCE_DIR}/scripts/cmake/check_includes.cmake
    COMMENT "Checking the includes of ${name}" VERBATIM)
  add_custom_target(${target}_include_check DEPENDS ${stamp})
  add_dependencies(${target} ${target}_include_check)
endfunction()

# Fails configuration if `target` reaches any of `forbidden` (targets) through its link graph.
function(leadflow_forbid_links target)
  set(seen)
  set(todo ${target})
  while(todo)
    list(POP_FRONT todo t)
    if(t IN_LIST seen OR NOT TARGET ${t})
      continue()
    endif()
    list(APPEND seen ${t})
    get_target_property(aliased ${t} ALIASED_TARGET)
    if(aliased)
      list(APPEND todo ${aliased})
      continue()
    endif()
    get_target_property(libs ${t} LINK_LIBRARIES)
    get_target_property(ilibs ${t} INTERFACE_LINK_LIBRARIES)
    foreach(l IN LISTS libs ilibs)
      string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" l "${l}")
      if(l AND NOT l MATCHES "NOTFOUND$")
        list(APPEND todo ${l})
      endif()
    endforeach()
  endwhile()
  foreach(f IN LISTS ARGN)
    if(f IN_LIST seen)
      message(FATAL_ERROR "dependency rule: ${target} must not link ${f} (see docs/architecture.md)")
    endif()
  endforeach()
endfunction()
