# Cross toolchain for AArch64 Linux with Debian's cross compilers
# (apt-get install -y g++-aarch64-linux-gnu qemu-user-static).
#
# Used by cmake/simd-cross (tools/test-aarch64.sh) to build the CPU plugin's SIMD
# library and its unit tests for AArch64, so the NEON variants are compiled and tested
# on an x86-64 machine. Test executables run through qemu-aarch64-static: CMake passes
# CMAKE_CROSSCOMPILING_EMULATOR to ctest and to gtest_discover_tests, so nothing else
# needs to know it is emulated (no binfmt_misc registration is needed either).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(INFER_AARCH64_TRIPLE aarch64-linux-gnu)
set(CMAKE_C_COMPILER ${INFER_AARCH64_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${INFER_AARCH64_TRIPLE}-g++)

# Debian installs the AArch64 C/C++ runtime (libc, libstdc++, the dynamic loader) under
# /usr/aarch64-linux-gnu. Libraries and headers come only from there; programs (cmake's
# own helpers, python) still come from the host.
set(CMAKE_FIND_ROOT_PATH /usr/${INFER_AARCH64_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# -L tells qemu where the AArch64 dynamic loader and shared libraries live, so the
# dynamically linked test binaries run as they are.
find_program(INFER_QEMU_AARCH64 qemu-aarch64-static qemu-aarch64)
if(INFER_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR "${INFER_QEMU_AARCH64};-L;/usr/${INFER_AARCH64_TRIPLE}")
endif()
