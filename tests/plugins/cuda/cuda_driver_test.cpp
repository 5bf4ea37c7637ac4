// The cuda plugin's driver probe (plugins/cuda/src/cuda_driver.hpp) against a test double
// of libcuda (fake_libcuda.c) in every scenario, the toolkit's real stub library when it
// is installed, and the plugin itself through the host's device listing. No GPU needed:
// these prove the host logic (which reason, which devices), not kernels.
#include "cuda_driver.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "infer/infer.hpp"
#include "infer_test_paths.hpp"

namespace infer::cuda {
namespace {

// Selects the library and the fake's scenario for the next probe.
void use_driver(const std::string& path, const std::string& scenario = "") {
  setenv("INFER_CUDA_DRIVER", path.c_str(), 1);
  setenv("INFER_FAKE_CUDA", scenario.c_str(), 1);
}

const std::string kFake = std::string(test_paths::fake_libcuda_dir()) + "/libfake_libcuda.so";
const std::string kIncomplete =
    std::string(test_paths::fake_libcuda_dir()) + "/libfake_libcuda_incomplete.so";

TEST(CudaDriver, MissingLibraryIsNoDriver) {
  use_driver("/nonexistent/libcuda.so.1");
  const DriverProbe p = probe_driver();
  EXPECT_FALSE(p.usable);
  EXPECT_EQ(
      p.reason,
      "NVIDIA driver not installed (/nonexistent/libcuda.so.1: cannot open shared object file: No "
      "such file or directory)");
  EXPECT_TRUE(p.gpus.empty());
}

TEST(CudaDriver, StubLibraryIsNamedAsSuch) {
  use_driver(kFake, "stub");
  const DriverProbe p = probe_driver();
  EXPECT_FALSE(p.usable);
  EXPECT_EQ(p.reason, "no NVIDIA driver: " + kFake +
                          " is the CUDA toolkit's stub library, which only satisfies the linker");
}

TEST(CudaDriver, TheToolkitsRealStubLibrary) {
  const std::string stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  if (!std::filesystem::exists(stub))
    GTEST_SKIP() << "the CUDA toolkit is not installed on this machine (no stub library at " << stub
                 << "); the test double's 'stub' scenario above covers the same path";
  use_driver(stub);
  const DriverProbe p = probe_driver();
  EXPECT_FALSE(p.usable);
  EXPECT_EQ(p.reason, "no NVIDIA driver: " + stub +
                          " is the CUDA toolkit's stub library, which only satisfies the linker");
}

TEST(CudaDriver, DriverWithoutVisibleGpu) {
  use_driver(kFake, "nodevice");
  setenv("CUDA_VISIBLE_DEVICES", "", 1);
  DriverProbe p = probe_driver();
  EXPECT_EQ(p.reason,
            "driver 13.0 (" + kFake + ") is installed but sees no GPU (CUDA_VISIBLE_DEVICES='')");
  unsetenv("CUDA_VISIBLE_DEVICES");
  use_driver(kFake, "zero");
  p = probe_driver();
  EXPECT_FALSE(p.usable);
  EXPECT_EQ(p.reason, "driver 13.0 (" + kFake +
                          ") is installed but sees no GPU (CUDA_VISIBLE_DEVICES unset)");
}

TEST(CudaDriver, DriverOlderThanCuda13) {
  use_driver(kFake, "old");
  const DriverProbe p = probe_driver();
  EXPECT_FALSE(p.usable);
  EXPECT_EQ(p.driver_version, 12080);
  EXPECT_EQ(p.reason,
            "driver 12.8 (" + kFake +
                ") supports CUDA up to 12.8; the cuda plugin needs 13.0 (an R580 or newer driver)");
}

TEST(CudaDriver, LibraryWithoutAnEntryPoint) {
  use_driver(kIncomplete, "two");
  const DriverProbe p = probe_driver();
  EXPECT_FALSE(p.usable);
  EXPECT_EQ(p.reason, kIncomplete + " is not a usable CUDA driver: it has no cuDeviceGetAttribute");
}

TEST(CudaDriver, PropertyFailureNamesTheGpuAndTheError) {
  use_driver(kFake, "badprops");
  const DriverProbe p = probe_driver();
  EXPECT_FALSE(p.usable);
  EXPECT_EQ(p.reason, "reading GPU 0's properties failed: CUDA_ERROR_UNKNOWN (999)");
}

TEST(CudaDriver, EveryGpuWithItsProperties) {
  use_driver(kFake, "two");
  const DriverProbe p = probe_driver();
  ASSERT_TRUE(p.usable) << p.reason;
  EXPECT_EQ(p.driver_version, 13020);
  EXPECT_EQ(p.library_path, kFake);
  ASSERT_EQ(p.gpus.size(), 2u);
  EXPECT_EQ(p.gpus[0].name, "Fake H200");
  EXPECT_EQ(p.gpus[0].memory_bytes, 141ull << 30);
  EXPECT_EQ(p.gpus[0].cc_major, 9);
  EXPECT_EQ(p.gpus[0].cc_minor, 0);
  EXPECT_EQ(p.gpus[0].multiprocessors, 132);
  EXPECT_EQ(describe(p.gpus[1]), "Fake L4 (sm_89, 58 SMs, 24.0 GiB)");
}

// Through the host: the plugin loads, lists no device, and says why.
TEST(CudaPlugin, ListsNoDeviceWithTheProbesReason) {
  auto cuda_entry = [] {
    for (const BackendDevices& b :
         list_devices({INFER_PLUGIN_DIR}, [](LogLevel, const std::string&) {}))
      if (b.backend == "cuda") return b;
    return BackendDevices{};
  };
  use_driver(kFake, "old");
  BackendDevices b = cuda_entry();
  ASSERT_EQ(b.backend, "cuda");
  EXPECT_TRUE(b.devices.empty());
  EXPECT_EQ(b.unavailable,
            "driver 12.8 (" + kFake +
                ") supports CUDA up to 12.8; the cuda plugin needs 13.0 (an R580 or newer driver)");
  use_driver(kFake, "two");
  b = cuda_entry();
  EXPECT_TRUE(b.devices.empty());
  EXPECT_EQ(
      b.unavailable,
      "driver 13.2 (" + kFake +
          ") sees 2 GPUs (0: Fake H200 (sm_90, 132 SMs, 141.0 GiB); 1: Fake L4 (sm_89, 58 SMs, "
          "24.0 GiB)), but this build of the cuda plugin has no kernels yet, so it offers no "
          "device");
}

}  // namespace
}  // namespace infer::cuda
