# The dashboard (ingest/web): built by Vite when Node and npm are present, then embedded in
# leadflow-ingest as a generated C++ file (embed.cmake), so the binary needs no file beside it.
# Without Node the generated file holds nothing and the dashboard answers 503 "not built".
# Included by ingest/app/CMakeLists.txt; adds the generated file to the target `target`.
option(LEADFLOW_DASHBOARD "Build the dashboard into leadflow-ingest when Node and npm are present" ON)
find_program(LEADFLOW_NODE node)
find_program(LEADFLOW_NPM npm)

function(leadflow_dashboard target)
  set(web ${PROJECT_SOURCE_DIR}/ingest/web)
  set(work ${PROJECT_BINARY_DIR}/web)
  set(out ${CMAKE_CURRENT_BINARY_DIR}/dashboard_files.cpp)
  if(LEADFLOW_DASHBOARD AND LEADFLOW_NODE AND LEADFLOW_NPM)
    file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${web}/src/* ${web}/public/*)
    add_custom_command(OUTPUT ${out}
      COMMAND ${web}/build.sh ${work}
      COMMAND ${CMAKE_COMMAND} -DDIST=${work}/dist -DOUT=${out} -P ${web}/embed.cmake
      DEPENDS ${sources} ${web}/index.html ${web}/package.json ${web}/package-lock.json
        ${web}/vite.config.ts ${web}/tsconfig.json ${web}/build.sh ${web}/embed.cmake
      COMMENT "Building the dashboard (Vite) and embedding it" VERBATIM)
    set(LEADFLOW_DASHBOARD_BUILT ON PARENT_SCOPE)
  else()
    message(STATUS "leadflow: the dashboard is not built (LEADFLOW_DASHBOARD=OFF, or no node/npm)")
    add_custom_command(OUTPUT ${out}
      COMMAND ${CMAKE_COMMAND} -DDIST= -DOUT=${out} -P ${web}/embed.cmake
      DEPENDS ${web}/embed.cmake VERBATIM)
  endif()
  target_sources(${target} PRIVATE ${out})
endfunction()
