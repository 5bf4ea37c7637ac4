# ccache, when installed, for every compiled language (CUDA too, once a plugin enables
# it). Included by the main build and by cmake/simd-cross with INFER_CCACHE_BASE_DIR set
# to the repository's root.
#
# base_dir is the repository's root, so a clone in another folder (CI's fresh clone)
# hits what the developer's own build cached: absolute paths under it are hashed relative
# to the build folder (and the tests' paths live in one generated file, not in -D flags:
# tests/support/paths/infer_test_paths.hpp). hash_dir off lets objects with debug info
# (Debug and sanitizer builds, whose debug info names the build folder) be shared the
# same way. -DINFER_CCACHE=OFF, or a launcher the user sets, turns this off.
option(INFER_CCACHE "Compile through ccache when it is installed" ON)
find_program(INFER_CCACHE_PROGRAM ccache)
if(INFER_CCACHE AND INFER_CCACHE_PROGRAM)
  foreach(lang C CXX CUDA)
    if(NOT CMAKE_${lang}_COMPILER_LAUNCHER)
      set(CMAKE_${lang}_COMPILER_LAUNCHER
          env CCACHE_BASEDIR=${INFER_CCACHE_BASE_DIR} CCACHE_NOHASHDIR=1 ${INFER_CCACHE_PROGRAM})
    endif()
  endforeach()
endif()
