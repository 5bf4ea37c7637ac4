#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz with clang (ASan + UBSan) and runs each for a
# bounded time, all at once, on a seed corpus made from the repository's own models, samples and
# configs.
#
#   bash tests/fuzz/fuzz.sh [BUILD_DIR] [SECONDS_PER_TARGET] [TARGET...]
#
# Defaults: build-fuzz, 60 seconds, all targets (onnx_loader npy_reader deployment_config
# v2_request).
# Needs clang and libclang-rt-14-dev (tools/install-deps.sh --ci installs them). A crash,
# leak, timeout or out-of-memory is kept in BUILD_DIR/crashes/<target>/ and fails the
# script; fix it, then copy the input to tests/fuzz/regressions/<target>/ so that ctest
# replays it in every build (fuzz_replay.<target>). The grown corpus stays in
# BUILD_DIR/corpus/<target>/, so a later run (or a longer campaign) starts from it.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build-fuzz}
seconds=${2:-60}
shift $(( $# > 2 ? 2 : $# ))
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(onnx_loader npy_reader deployment_config v2_request)

clang_cc=$(command -v clang || true)
clang_cxx=$(command -v clang++ || true)
if [ -z "$clang_cc" ] || [ -z "$clang_cxx" ]; then
  echo "fuzz.sh: clang is not installed (apt-get install clang libclang-rt-14-dev)" >&2
  exit 1
fi

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER="$clang_cc" -DCMAKE_CXX_COMPILER="$clang_cxx" \
  -DCMAKE_C_FLAGS="-fsanitize=fuzzer-no-link" -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link" \
  -DINFER_SANITIZE=address,undefined -DINFER_FUZZ=ON >/dev/null
cmake --build "$build" -j2 --target "${targets[@]/#/fuzz_}"

# Seeds: every file of the repository that the parser reads for real, by kind; for the
# deployment parser also the YAML examples of the READMEs.
seed() {
  local target=$1 dir=$build/corpus/$1
  mkdir -p "$dir"
  local folders=(models tests/tools/data) pattern
  case $target in
    onnx_loader) pattern='*.onnx' ;;
    npy_reader) pattern='*.npy' ;;
    deployment_config) pattern='*.yaml'; folders=(configs tests/tools/data) ;;
    v2_request) pattern='request_*'; folders=(tests/tools/infer-serve/data) ;;
  esac
  [ ! -d "tests/fuzz/regressions/$target" ] || folders+=("tests/fuzz/regressions/$target")
  find "${folders[@]}" -type f -name "$pattern" | while read -r f; do cp "$f" "$dir/seed_$(basename "$f")"; done
  if [ "$target" = deployment_config ]; then
    for md in README.md configs/README.md; do
      awk -v dir="$dir" -v base="$(basename "$(dirname "$md")")" '
        /^```yaml/ { inside = 1; n++; file = dir "/seed_readme_" base "_" n ".yaml"; next }
        /^```/ { inside = 0; next }
        inside { print > file }' "$md"
    done
  fi
}

# The targets run at the same time (SECONDS of wall time in all, not per target one after
# the other): on CI's two cores each gets about two thirds of a core.
run_target() {
  local t=$1 log=$build/fuzz_$1.log
  # -timeout: one input taking 10 s is a hang; -rss_limit_mb: more than 2 GiB is a
  # runaway allocation; both count as findings.
  if ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
     "$build/bin/fuzz_$t" "$build/corpus/$t" -max_total_time="$seconds" -timeout=10 \
       -rss_limit_mb=2048 -max_len=1048576 -print_final_stats=1 \
       -artifact_prefix="$build/crashes/$t/" >"$log" 2>&1; then
    echo ok >"$build/fuzz_$t.result"
  else
    echo failed >"$build/fuzz_$t.result"
  fi
}
pids=()
for t in "${targets[@]}"; do
  seed "$t"
  mkdir -p "$build/crashes/$t"
  rm -f "$build/fuzz_$t.result"
  run_target "$t" &
  pids+=($!)
done
wait "${pids[@]}"

status=0
printf '%-20s %10s %8s %8s %s\n' target executions exec/s coverage result
for t in "${targets[@]}"; do
  log=$build/fuzz_$t.log
  if [ "$(cat "$build/fuzz_$t.result" 2>/dev/null)" = ok ]; then
    result=ok
  else
    result="FAILED (see $log and $build/crashes/$t/)"
    status=1
  fi
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  printf '%-20s %10s %8s %8s %s\n' "$t" "${execs:-?}" "${rate:-?}" "${cov:-?}" "$result"
  [ "$result" = ok ] || tail -40 "$log" >&2
done
exit $status
