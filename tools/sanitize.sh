#!/usr/bin/env bash
# Builds the suite with clang's sanitizers and runs it; CI's asan and tsan phases.
#
#   bash tools/sanitize.sh asan [build|test|all] [BUILD_DIR]   (default all, build-asan)
#   bash tools/sanitize.sh tsan [build|test|all] [BUILD_DIR]   (default all, build-tsan)
#
# asan: ASan + UBSan over the whole suite (core, loader, optimizer, partitioner, runtime,
#       every plugin and tool), less the tests labelled slow_under_asan (README "CI").
# tsan: ThreadSanitizer over the tests labelled `concurrency`: the scheduler (many
#       threads on one session, micro-batch pipelining, traces), the plugin host's thread
#       services and task groups, the example plugin's concurrent queues. Only what they
#       need is built. Also the dynamic batcher of infer-serve (its queue and threads).
#
# Both use clang: it compiles this code with ASan + UBSan in 1.8 times less CPU time than
# GCC 12 (whose UBSan at -O1 doubles its compile time). Debug with -O1 -g1: line tables
# are all a report needs. The cpu plugin's kernels are the exception, at -O0
# (plugins/cpu/CMakeLists.txt says why). (-O0 everywhere compiles single files 2-2.7
# times faster, but made the ASan tests 56 % slower; not adopted.) Each test executable runs as one ctest test
# (INFER_TEST_PER_EXECUTABLE): a sanitized process takes a quarter of a second to start.
#
# oneTBB is Debian's uninstrumented library, so the happens-before its scheduler gives (a
# task spawned, then run on another thread; a wait that returns after its tasks ran) is
# invisible to TSan. The host states it where it hands work to oneTBB
# (core/plugin_host/tsan_annotations.hpp). tools/tsan.supp may list only races inside
# oneTBB's own header code, each with its reason; a race in infer's code fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:?usage: tools/sanitize.sh asan|tsan [build|test|all] [BUILD_DIR]}
step=${2:-all}
case $mode in
  asan) sanitize=address,undefined; extra_flags=""
        targets=(all) ;;
  tsan) sanitize=thread; extra_flags=""
        targets=(test_core_runtime_scheduler test_core_plugin_host test_sdk_example
                 test_tools_infer_serve_batcher) ;;
  *) echo "tools/sanitize.sh: unknown mode '$mode' (asan or tsan)" >&2; exit 2 ;;
esac
case $step in build|test|all) ;; *)
  echo "tools/sanitize.sh: unknown step '$step' (build, test or all)" >&2; exit 2 ;;
esac
build=${3:-build-$mode}
for tool in clang clang++; do
  command -v $tool >/dev/null || {
    echo "tools/sanitize.sh: $tool is not installed (bash tools/install-deps.sh --ci)" >&2
    exit 1
  }
done

if [ "$step" != test ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_C_FLAGS="-O1 $extra_flags" -DCMAKE_CXX_FLAGS="-O1 $extra_flags" \
    -DCMAKE_C_FLAGS_DEBUG=-g1 -DCMAKE_CXX_FLAGS_DEBUG=-g1 \
    -DINFER_SANITIZE=$sanitize -DINFER_BUILD_BENCHMARKS=OFF -DINFER_TEST_PER_EXECUTABLE=ON \
    >/dev/null
  cmake --build "$build" -j2 --target "${targets[@]}"
fi
if [ "$step" != build ]; then
  if [ "$mode" = asan ]; then
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      ctest --test-dir "$build" --output-on-failure -j2 -LE slow_under_asan
  else
    TSAN_OPTIONS="suppressions=$PWD/tools/tsan.supp:halt_on_error=1:second_deadlock_stack=1" \
      ctest --test-dir "$build" --output-on-failure -j2 -L concurrency
  fi
fi
