#!/usr/bin/env bash
# Cross-builds the CPU plugin's SIMD library (plugins/cpu/simd) and its unit tests
# (tests/plugins/cpu/simd) for AArch64 and runs the tests under qemu-aarch64-static, so
# the NEON variants are compiled and checked against the scalar reference on an x86-64
# machine. Only that library and its tests are built (cmake/simd-cross): the rest of
# infer needs protobuf/ONNX/oneTBB/yaml-cpp, which have no AArch64 build here.
#
# Usage: tools/test-aarch64.sh [BUILD_DIR] [-- GTEST_ARGS...]
#   BUILD_DIR  defaults to build-aarch64 (relative to the repository root)
#   GTEST_ARGS are passed to the test binary, e.g. -- --gtest_filter='Gemm*'
#   JOBS=N     build parallelism (default 2)
# Needs: apt-get install -y g++-aarch64-linux-gnu qemu-user-static
# (plus cmake, ninja-build and libgtest-dev, which tools/install-deps.sh installs).
# Exits non-zero when a tool is missing, the build fails, a NEON source was not compiled
# for AArch64, or any test fails.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
build="build-aarch64"
gtest_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --) shift; gtest_args=("$@"); break ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "test-aarch64: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) build="$1"; shift ;;
  esac
done
case "$build" in /*) ;; *) build="$root/$build" ;; esac
jobs="${JOBS:-2}"
triple=aarch64-linux-gnu
sysroot="/usr/$triple"
start=$SECONDS

say() { echo "test-aarch64: $*"; }
fail() { echo "test-aarch64: FAILED: $*" >&2; exit 1; }

# 1. Tools.
missing=()
for tool in "$triple-gcc" "$triple-g++" qemu-aarch64-static cmake ninja; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "test-aarch64: missing ${missing[*]}; install the cross tools with" >&2
  echo "  apt-get install -y g++-aarch64-linux-gnu qemu-user-static" >&2
  echo "(and cmake/ninja with tools/install-deps.sh)" >&2
  exit 1
fi
[ -f /usr/src/googletest/CMakeLists.txt ] ||
  fail "GoogleTest sources missing in /usr/src/googletest: apt-get install -y libgtest-dev"
[ -d "$sysroot/lib" ] || fail "$sysroot/lib missing (it comes with g++-aarch64-linux-gnu)"

# 2. Configure and build. The toolchain sets qemu as the emulator, so ctest in the
# build dir runs the tests under qemu as well.
say "configuring $build ($("$triple-g++" -dumpfullversion), $(qemu-aarch64-static --version | head -n1))"
mkdir -p "$build"
cmake -S "$root/cmake/simd-cross" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_TOOLCHAIN_FILE="$root/cmake/toolchains/aarch64-linux-gnu.cmake" >"$build/configure.log" 2>&1 ||
  { cat "$build/configure.log" >&2; fail "cmake configure (log above)"; }
say "building infer_cpu_simd and test_plugins_cpu_simd with -j$jobs"
cmake --build "$build" -j"$jobs" || fail "cross build"

# 3. Every NEON source must have become an AArch64 object (the simd CMakeLists builds
# *__neon.cpp only when the target is AArch64: this catches a toolchain that silently
# builds for the host), and no x86 variant may be in the build.
objdir="$build/simd/CMakeFiles/infer_cpu_simd.dir"
neon_sources=()
for src in "$root"/plugins/cpu/simd/*__neon.cpp; do
  [ -e "$src" ] && neon_sources+=("$(basename "$src")")
done
say "NEON sources compiled for AArch64: ${#neon_sources[@]}"
for src in "${neon_sources[@]}"; do
  obj="$objdir/$src.o"
  [ -f "$obj" ] || fail "$src was not compiled (no $obj)"
  machine="$("$triple-readelf" -h "$obj" | sed -n 's/^ *Machine: *//p')"
  [ "$machine" = "AArch64" ] || fail "$obj is for '$machine', not AArch64"
  echo "  $src.o  ($(stat -c %s "$obj") bytes, $machine)"
done
if find "$objdir" -name '*__avx*.o' | grep -q .; then
  fail "x86 variants were compiled into the AArch64 build: $(find "$objdir" -name '*__avx*.o')"
fi
test_bin="$build/bin/test_plugins_cpu_simd"
[ -x "$test_bin" ] || fail "$test_bin was not built"
machine="$("$triple-readelf" -h "$test_bin" | sed -n 's/^ *Machine: *//p')"
[ "$machine" = "AArch64" ] || fail "$test_bin is for '$machine', not AArch64"

# 4. Run the tests: one qemu process per shard (GoogleTest's own sharding), $jobs shards
# side by side. ctest would start qemu once per test case, which is much slower; it
# still works in the build dir for a single case (ctest --test-dir BUILD_DIR -R name).
# -L points qemu at the AArch64 dynamic loader and libraries.
log="$build/test_plugins_cpu_simd.log"
say "running $(basename "$test_bin") under qemu-aarch64-static in $jobs shards ${gtest_args[*]}"
pids=()
for ((i = 0; i < jobs; i++)); do
  GTEST_TOTAL_SHARDS="$jobs" GTEST_SHARD_INDEX="$i" timeout 900 \
    qemu-aarch64-static -L "$sysroot" "$test_bin" --gtest_color=no "${gtest_args[@]}" \
    >"$log.$i" 2>&1 &
  pids+=($!)
done
rc=0
for ((i = 0; i < jobs; i++)); do
  shard_rc=0
  wait "${pids[$i]}" || shard_rc=$?
  if [ $shard_rc -ne 0 ]; then
    [ $shard_rc -eq 124 ] && say "shard $i timed out after 900 s"
    say "shard $i exited with $shard_rc; its last lines:"
    tail -n 40 "$log.$i" >&2
    rc=1
  fi
done
for ((i = 0; i < jobs; i++)); do cat "$log.$i"; done >"$log"
rm -f "$log".[0-9]*
passed="$(grep -cE '^\[       OK \]' "$log" || true)"
failed="$(grep -E '^\[  FAILED  \] [^ ]+\.[^ ]+' "$log" | awk '{sub(/,$/, "", $4); print $4}' | sort -u || true)"
# Failures with the assertion text that explains them.
grep -E 'Failure$|^\[  FAILED  \] [^ ]+\.' -A6 "$log" | head -n 200 || true
say "$passed test cases passed, $(printf '%s' "$failed" | grep -c . || true) failed"
if [ $rc -ne 0 ] || [ -n "$failed" ]; then
  [ -n "$failed" ] && printf '%s\n' "$failed" >&2
  fail "test_plugins_cpu_simd under qemu (full log: $log)"
fi
[ "$passed" -gt 0 ] || fail "no test case ran (full log: $log)"

# 5. Which ISA variants ran: parameterized tests are named <suite>/<test>/<isa>
# (isa_param_name), so count the passed cases by their last name part.
say "ISA variants tested (passed cases per variant):"
for isa in scalar neon avx2 avx512; do
  n="$(grep -cE "^\[       OK \] [^ ]+/${isa}( |$)" "$log" || true)"
  if [ "$n" -gt 0 ]; then echo "  $isa: $n"; fi
done
neon_cases="$(grep -cE '^\[       OK \] [^ ]+/neon( |$)' "$log" || true)"
if [ ${#neon_sources[@]} -gt 0 ] && [ "$neon_cases" -eq 0 ] && [ ${#gtest_args[@]} -eq 0 ]; then
  fail "there are NEON sources but no test case ran a /neon variant"
fi
if grep -qE '^\[       OK \] Isa\.ArchitectureSpecificSetsAreExclusive' "$log"; then
  say "Isa.ArchitectureSpecificSetsAreExclusive passed: NEON is supported and best_isa() is neon"
fi
say "OK in $((SECONDS - start)) s (log: $log)"
