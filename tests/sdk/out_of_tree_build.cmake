# Builds the SDK example plugin out of tree, the way a third-party plugin author would:
# against a copy of sdk/ alone, so that nothing else of the repository can be reached.
#
# cmake -DSDK_DIR=<repo>/sdk -DWORK_DIR=<scratch> -DGENERATOR=<gen>
#       [-DCXX_COMPILER=<c++>] [-DNM=<nm>] -P out_of_tree_build.cmake
foreach(var SDK_DIR WORK_DIR GENERATOR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "out_of_tree_build.cmake: -D${var}=... is required")
  endif()
endforeach()

# A fresh copy of sdk/ each time: the test must not pass thanks to a stale build.
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
file(COPY "${SDK_DIR}" DESTINATION "${WORK_DIR}")
set(sdk_copy "${WORK_DIR}/sdk")
set(build_dir "${WORK_DIR}/build")

set(compiler_arg)
if(CXX_COMPILER)
  set(compiler_arg "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}")
endif()

# No CMAKE_BUILD_TYPE: unoptimized and fastest to compile. -Werror keeps the example as
# warning-free out of tree as in-tree. A unity build compiles the sources as one unit,
# which takes a third of the CPU time; the in-tree build still compiles every file on
# its own, and what this test proves (the CMake path and that sdk/ is self-contained)
# does not depend on it.
execute_process(
  COMMAND "${CMAKE_COMMAND}" -S "${sdk_copy}/examples/discrete_device" -B "${build_dir}"
          -G "${GENERATOR}" "-DINFER_SDK_DIR=${sdk_copy}" ${compiler_arg}
          "-DCMAKE_CXX_FLAGS=-Werror" -DCMAKE_UNITY_BUILD=ON
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring the example out of tree failed (${rc}):\n${out}\n${err}")
endif()

execute_process(
  COMMAND "${CMAKE_COMMAND}" --build "${build_dir}" --parallel 2
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building the example out of tree failed (${rc}):\n${out}\n${err}")
endif()

set(plugin "${build_dir}/libinfer_plugin_example.so")
if(NOT EXISTS "${plugin}")
  file(GLOB produced "${build_dir}/*.so")
  message(FATAL_ERROR "the out-of-tree build did not produce ${plugin} (found: ${produced})")
endif()

# Exactly one exported symbol: infer_plugin_entry.
if(NM)
  execute_process(COMMAND "${NM}" -D --defined-only "${plugin}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE symbols ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NM} failed on ${plugin}: ${err}")
  endif()
  string(REGEX MATCHALL "[^\n]+" lines "${symbols}")
  list(LENGTH lines count)
  if(NOT count EQUAL 1 OR NOT symbols MATCHES " T infer_plugin_entry\n?$")
    message(FATAL_ERROR "expected exactly one exported symbol (infer_plugin_entry), got:\n${symbols}")
  endif()
endif()

message(STATUS "out-of-tree build OK: ${plugin}")
