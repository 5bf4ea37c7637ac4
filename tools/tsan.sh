#!/usr/bin/env bash
# Builds the concurrency tests with ThreadSanitizer and runs them: the scheduler (many
# threads on one session, micro-batch pipelining, traces), the plugin host's thread
# services and task groups, and the example plugin's concurrent queues. These are the
# tests labelled `concurrency` (ctest -L concurrency); only what they need is built.
#
#   bash tools/tsan.sh [BUILD_DIR]      (default build-tsan)
#
# oneTBB is Debian's uninstrumented library, so the happens-before its scheduler gives
# (a task spawned, then run on another thread; a wait that returns after the tasks ran)
# is invisible to TSan. The host declares it where it hands work to oneTBB
# (core/plugin_host/tsan_annotations.hpp). oneTBB's header templates, compiled into our
# objects, are left uninstrumented like the library (clang's -fsanitize-ignorelist,
# tools/tsan.ignorelist); tools/tsan.supp may suppress only races inside oneTBB's own
# code, each entry with its reason. A race in infer's code fails the run.
# Not yet a CI phase (README "CI").
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-tsan}
targets=(test_core_runtime_scheduler test_core_plugin_host test_sdk_example)

# clang, for -fsanitize-ignorelist: oneTBB's header templates stay uninstrumented, like
# the library that orders them (tools/tsan.ignorelist).
ignorelist="-fsanitize-ignorelist=$PWD/tools/tsan.ignorelist"
# Plugins are shared modules linked with --no-undefined: clang links its sanitizer
# runtime into them only as the shared library, which the binaries then find by rpath.
runtime_dir=$(dirname "$(clang -print-file-name=libclang_rt.tsan-x86_64.so)")
linkflags="-shared-libsan -Wl,-rpath,$runtime_dir"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CXX_FLAGS="-O1 $ignorelist" -DCMAKE_C_FLAGS="-O1 $ignorelist" \
  -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DCMAKE_C_FLAGS_DEBUG=-g1 \
  -DCMAKE_EXE_LINKER_FLAGS="$linkflags" -DCMAKE_SHARED_LINKER_FLAGS="$linkflags" \
  -DCMAKE_MODULE_LINKER_FLAGS="$linkflags" \
  -DINFER_SANITIZE=thread -DINFER_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build "$build" -j2 --target "${targets[@]}"
TSAN_OPTIONS="suppressions=$PWD/tools/tsan.supp:halt_on_error=1:second_deadlock_stack=1:history_size=4" \
  ctest --test-dir "$build" --output-on-failure -j2 -L concurrency
