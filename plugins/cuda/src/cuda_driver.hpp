// The CUDA driver, reached at run time: dlopen("libcuda.so.1"), one table of resolved
// entry points (cu_symbols.def), and the probe that says which GPUs there are or,
// precisely, why there are none. Nothing here links a CUDA library or needs cuda.h.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace infer::cuda {

// The driver API's own types and the few values the probe reads (cuda.h's numbering).
using CUresult = int;
using CUdevice = int;
inline constexpr CUresult kCudaSuccess = 0;
inline constexpr CUresult kCudaErrorStubLibrary = 34;         // CUDA_ERROR_STUB_LIBRARY
inline constexpr CUresult kCudaErrorInsufficientDriver = 35;  // CUDA_ERROR_INSUFFICIENT_DRIVER
inline constexpr CUresult kCudaErrorNoDevice = 100;           // CUDA_ERROR_NO_DEVICE
inline constexpr int kAttrMultiprocessorCount = 16;  // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
inline constexpr int kAttrComputeCapabilityMajor = 75;
inline constexpr int kAttrComputeCapabilityMinor = 76;

// The oldest driver API the plugin accepts: what CUDA 13 (its kernels' toolkit) needs.
inline constexpr int kRequiredDriverVersion = 13000;

struct DriverTable {
#define CU_SYMBOL(field, name, ret, params) ret(*field) params = nullptr;
#include "cu_symbols.def"
#undef CU_SYMBOL
};

struct GpuInfo {
  int ordinal = 0;
  std::string name;
  uint64_t memory_bytes = 0;
  int cc_major = 0;
  int cc_minor = 0;
  int multiprocessors = 0;
};

// What probing found: a usable driver with its GPUs, or the reason there is none.
struct DriverProbe {
  bool usable = false;       // driver loaded, initialized, new enough
  std::string reason;        // why not usable, for the ABI's UNAVAILABLE status
  std::string library_path;  // the file dlopen found ("" when none)
  int driver_version = 0;    // cuDriverGetVersion, e.g. 13000 for 13.0
  std::vector<GpuInfo> gpus;
  DriverTable table;
  std::shared_ptr<void> handle;  // the dlopen handle; dlclose'd with the last copy
};

// Probes once per call: INFER_CUDA_DRIVER (a file path, for tests and unusual installs)
// or else libcuda.so.1 then libcuda.so, then cuInit, the driver version and every device.
// Never throws; every failure ends in `reason`, e.g. "NVIDIA driver not installed
// (libcuda.so.1: cannot open shared object file: No such file or directory)".
DriverProbe probe_driver();

// "13.0" from 13000.
std::string version_text(int driver_version);

// "NVIDIA H200 (sm_90, 132 SMs, 139.8 GiB)".
std::string describe(const GpuInfo& gpu);

}  // namespace infer::cuda
