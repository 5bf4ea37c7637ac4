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
# (core/plugin_host/tsan_annotations.hpp); tools/tsan.supp suppresses only races inside
# oneTBB's own code, each entry with its reason. A race in infer's code fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-tsan}
targets=(test_core_runtime_scheduler test_core_plugin_host test_sdk_example)

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS=-O1 -DCMAKE_C_FLAGS=-O1 \
  -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DCMAKE_C_FLAGS_DEBUG=-g1 \
  -DINFER_SANITIZE=thread -DINFER_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build "$build" -j2 --target "${targets[@]}"
TSAN_OPTIONS="suppressions=$PWD/tools/tsan.supp:halt_on_error=1:second_deadlock_stack=1:history_size=4" \
  ctest --test-dir "$build" --output-on-failure -j2 -L concurrency
