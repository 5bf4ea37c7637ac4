#include "cuda_driver.hpp"

#include <dlfcn.h>
#include <link.h>

#include <cstdio>
#include <cstdlib>
#include <utility>

namespace infer::cuda {
namespace {

std::string error_name(const DriverTable& t, CUresult r) {
  const char* name = nullptr;
  // The stub library answers cuGetErrorName with an error of its own: keep the number.
  if (t.get_error_name != nullptr && t.get_error_name(r, &name) == kCudaSuccess && name != nullptr)
    return std::string(name) + " (" + std::to_string(r) + ")";
  return "CUresult " + std::to_string(r);
}

// The file a handle came from (dlopen was given a bare name).
std::string loaded_path(void* handle, const std::string& fallback) {
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr &&
      map->l_name[0] != '\0')
    return map->l_name;
  return fallback;
}

std::string visible_devices() {
  const char* v = std::getenv("CUDA_VISIBLE_DEVICES");
  return v == nullptr ? "CUDA_VISIBLE_DEVICES unset"
                      : "CUDA_VISIBLE_DEVICES='" + std::string(v) + "'";
}

}  // namespace

std::string version_text(int v) {
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

std::string describe(const GpuInfo& gpu) {
  char mem[32];
  std::snprintf(mem, sizeof mem, "%.1f GiB",
                static_cast<double>(gpu.memory_bytes) / (1024.0 * 1024 * 1024));
  return gpu.name + " (sm_" + std::to_string(gpu.cc_major) + std::to_string(gpu.cc_minor) + ", " +
         std::to_string(gpu.multiprocessors) + " SMs, " + mem + ")";
}

DriverProbe probe_driver() {
  DriverProbe p;
  std::vector<std::string> names;
  if (const char* forced = std::getenv("INFER_CUDA_DRIVER"); forced != nullptr && forced[0] != '\0')
    names = {forced};
  else
    names = {"libcuda.so.1", "libcuda.so"};
  std::string first_error;
  void* handle = nullptr;
  for (const std::string& name : names) {
    handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) {
      p.library_path = loaded_path(handle, name);
      break;
    }
    if (first_error.empty()) first_error = dlerror();
  }
  if (handle == nullptr) {
    p.reason = "NVIDIA driver not installed (" + first_error + ")";
    return p;
  }
  p.handle = std::shared_ptr<void>(handle, [](void* h) { dlclose(h); });

#define CU_SYMBOL(field, name, ret, params)                                        \
  p.table.field = reinterpret_cast<ret(*) params>(dlsym(handle, name));            \
  if (p.table.field == nullptr) {                                                  \
    p.reason = p.library_path + " is not a usable CUDA driver: it has no " + name; \
    return p;                                                                      \
  }
#include "cu_symbols.def"
#undef CU_SYMBOL

  const CUresult init = p.table.init(0);
  if (init == kCudaErrorStubLibrary) {
    p.reason = "no NVIDIA driver: " + p.library_path +
               " is the CUDA toolkit's stub library, which only satisfies the linker";
    return p;
  }
  int version = 0;
  const bool have_version = p.table.driver_get_version(&version) == kCudaSuccess;
  if (have_version) p.driver_version = version;
  const std::string driver = have_version ? "driver " + version_text(version) : "the driver";
  if (init == kCudaErrorNoDevice) {
    p.reason = driver + " (" + p.library_path + ") is installed but sees no GPU (" +
               visible_devices() + ")";
    return p;
  }
  if (init == kCudaErrorInsufficientDriver ||
      (init == kCudaSuccess && have_version && version < kRequiredDriverVersion)) {
    p.reason = driver + " (" + p.library_path + ") supports CUDA up to " +
               (have_version ? version_text(version) : std::string("an older version")) +
               "; the cuda plugin needs " + version_text(kRequiredDriverVersion) +
               " (an R580 or newer driver)";
    return p;
  }
  if (init != kCudaSuccess) {
    p.reason = "cuInit failed in " + p.library_path + ": " + error_name(p.table, init);
    return p;
  }
  int count = 0;
  if (const CUresult r = p.table.device_get_count(&count); r != kCudaSuccess) {
    p.reason = "cuDeviceGetCount failed: " + error_name(p.table, r);
    return p;
  }
  if (count <= 0) {
    p.reason = driver + " (" + p.library_path + ") is installed but sees no GPU (" +
               visible_devices() + ")";
    return p;
  }
  for (int i = 0; i < count; ++i) {
    GpuInfo g;
    g.ordinal = i;
    CUdevice dev = 0;
    char name[256] = {};
    size_t bytes = 0;
    CUresult r = p.table.device_get(&dev, i);
    if (r == kCudaSuccess) r = p.table.device_get_name(name, sizeof name - 1, dev);
    if (r == kCudaSuccess) r = p.table.device_total_mem(&bytes, dev);
    if (r == kCudaSuccess)
      r = p.table.device_get_attribute(&g.cc_major, kAttrComputeCapabilityMajor, dev);
    if (r == kCudaSuccess)
      r = p.table.device_get_attribute(&g.cc_minor, kAttrComputeCapabilityMinor, dev);
    if (r == kCudaSuccess)
      r = p.table.device_get_attribute(&g.multiprocessors, kAttrMultiprocessorCount, dev);
    if (r != kCudaSuccess) {
      p.reason =
          "reading GPU " + std::to_string(i) + "'s properties failed: " + error_name(p.table, r);
      p.gpus.clear();
      return p;
    }
    g.name = name;
    g.memory_bytes = bytes;
    p.gpus.push_back(std::move(g));
  }
  p.usable = true;
  return p;
}

}  // namespace infer::cuda
