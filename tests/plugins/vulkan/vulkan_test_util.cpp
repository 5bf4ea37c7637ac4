#include "vulkan_test_util.hpp"

#include <dlfcn.h>
#include <link.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <sstream>

namespace infer::test::vk {
namespace {

constexpr const char* kValidationPrefix = "vulkan validation: ";

struct SharedPlugins {
  std::unique_ptr<PluginHandle> vk, cpu;
  std::string vk_error, cpu_error;
  infer_device* device = nullptr;
  std::string no_device_reason;
};

SharedPlugins* g_shared = nullptr;

// In sanitizer builds: keeps every library loaded so far (the Vulkan loader, lavapipe,
// LLVM, the validation layer) mapped until the process exits. The loader dlcloses
// drivers and layers when an instance is destroyed; their process-lifetime allocations
// are then reported by LeakSanitizer from an "<unknown module>" that no suppression
// (lsan.supp) can name. RTLD_NOLOAD only touches libraries that are already loaded.
void pin_loaded_libraries() {
#if defined(__SANITIZE_ADDRESS__)
  std::vector<std::string> paths;
  dl_iterate_phdr(
      [](struct dl_phdr_info* info, size_t, void* data) {
        if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0')
          static_cast<std::vector<std::string>*>(data)->push_back(info->dlpi_name);
        return 0;
      },
      &paths);
  for (const std::string& path : paths) dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
#endif
}

SharedPlugins& shared() {
  if (g_shared == nullptr) {
    auto* p = new SharedPlugins();
    p->vk = load_vulkan_plugin({{"validation", "true"}}, &p->vk_error);
    p->cpu = PluginHandle::load(plugin_path("cpu"), &p->cpu_error);
    if (p->vk) {
      size_t count = 0;
      StatusInfo st = take_status(p->vk->api()->get_devices(p->vk->plugin(), nullptr, 0, &count));
      if (count > 0) p->device = p->vk->device(0);
      else p->no_device_reason = st.message;
    }
    pin_loaded_libraries();
    g_shared = p;
  }
  return *g_shared;
}

// Destroys the shared plugins when the tests are done, while main() still runs. Not at
// exit: Mesa registers atexit handlers that stop lavapipe's queue threads, and a device
// destroyed after them (from a static destructor) waits for those threads forever.
class SharedPluginsEnvironment : public ::testing::Environment {
 public:
  void TearDown() override {
    if (g_shared == nullptr) return;
    g_shared->vk.reset();
    g_shared->cpu.reset();
    delete g_shared;
    g_shared = nullptr;
  }
};
// gtest owns the environment; registering at static initialization is what
// AddGlobalTestEnvironment allows before RUN_ALL_TESTS.
[[maybe_unused]] ::testing::Environment* const kSharedPluginsEnvironment =
    ::testing::AddGlobalTestEnvironment(new SharedPluginsEnvironment);

}  // namespace

std::unique_ptr<PluginHandle> load_vulkan_plugin(
    const std::vector<std::pair<std::string, std::string>>& options, std::string* error) {
  auto handle = PluginHandle::load(plugin_path("vulkan"), error);
  if (!handle) return nullptr;
  // The plugin initializes Vulkan on the first get_devices, so options set now apply.
  for (const auto& [key, value] : options) handle->host().set_option(key, value);
  return handle;
}

HostTensor random_f32(const std::vector<int64_t>& dims, uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(rng);
  return HostTensor::f32(dims, v);
}

std::vector<HostTensor> random_inputs(const infer_graph_view* graph, uint32_t seed) {
  std::vector<HostTensor> out;
  for (size_t i = 0; i < graph->num_inputs; ++i) {
    const infer_value_view* v = graph->inputs[i];
    std::vector<int64_t> dims(v->dims, v->dims + v->rank);
    const uint32_t s = seed + static_cast<uint32_t>(i);
    std::mt19937 rng(s);
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    switch (v->dtype) {
      case INFER_DTYPE_BOOL: {
        std::vector<uint8_t> b(static_cast<size_t>(n));
        for (auto& x : b) x = static_cast<uint8_t>(rng() & 1u);
        out.push_back(HostTensor::boolean(dims, b));
        break;
      }
      case INFER_DTYPE_INT64: {
        std::vector<int64_t> b(static_cast<size_t>(n));
        for (auto& x : b) x = static_cast<int64_t>(rng() % 4u);
        out.push_back(HostTensor::i64(dims, b));
        break;
      }
      case INFER_DTYPE_INT32: {
        std::vector<int32_t> b(static_cast<size_t>(n));
        for (auto& x : b) x = static_cast<int32_t>(rng() % 4u);
        out.push_back(HostTensor::i32(dims, b));
        break;
      }
      default:
        out.push_back(random_f32(dims, s));
        break;
    }
  }
  return out;
}

std::string compare_tensors(const HostTensor& actual, const HostTensor& expected, double atol,
                            double rtol) {
  std::ostringstream os;
  if (actual.dtype != expected.dtype || actual.dims != expected.dims) {
    os << "got " << actual.describe() << ", expected " << expected.describe();
    return os.str();
  }
  const bool floating = expected.dtype == INFER_DTYPE_FLOAT32 ||
                        expected.dtype == INFER_DTYPE_FLOAT16 ||
                        expected.dtype == INFER_DTYPE_BFLOAT16 ||
                        expected.dtype == INFER_DTYPE_FLOAT64;
  std::vector<double> a = actual.to_doubles(), e = expected.to_doubles();
  int bad = 0;
  for (size_t i = 0; i < e.size() && i < a.size(); ++i) {
    bool ok;
    if (!floating) ok = a[i] == e[i];
    else if (std::isnan(e[i])) ok = std::isnan(a[i]);
    else if (std::isinf(e[i])) ok = a[i] == e[i];
    else ok = std::fabs(a[i] - e[i]) <= atol + rtol * std::fabs(e[i]);
    if (ok) continue;
    if (bad < 8) os << (bad ? "; " : "") << "[" << i << "] got " << a[i] << ", expected " << e[i];
    ++bad;
  }
  if (bad > 8) os << "; ... " << bad << " mismatches of " << e.size();
  return os.str();
}

void VulkanTest::SetUp() {
  SharedPlugins& s = shared();
  ASSERT_TRUE(s.vk) << s.vk_error;
  ASSERT_TRUE(s.cpu) << s.cpu_error;
  if (s.device == nullptr)
    GTEST_SKIP() << "no Vulkan device on this machine (" << s.no_device_reason
                 << "); install mesa-vulkan-drivers for lavapipe";
  s.vk->host().clear_logs();
}

void VulkanTest::TearDown() {
  if (g_shared == nullptr || g_shared->device == nullptr) return;
  for (const std::string& m : validation_messages()) ADD_FAILURE() << m;
}

PluginHandle& VulkanTest::vk() { return *shared().vk; }
PluginHandle& VulkanTest::cpu() { return *shared().cpu; }
infer_device* VulkanTest::device() { return shared().device; }

infer_capability VulkanTest::capability(const infer_node_view* node) {
  infer_capability cap;
  std::memset(&cap, 0, sizeof cap);
  cap.struct_size = sizeof cap;
  cap.support = INFER_SUPPORT_NO;
  cap.est_time_us = -1;
  cap.est_memory_bytes = -1;
  infer_status* st = api()->query_capability(device(), node, &cap);
  EXPECT_EQ(st, nullptr);
  if (st != nullptr) vk().services()->status_free(st);
  return cap;
}

std::vector<std::string> VulkanTest::validation_messages() {
  std::vector<std::string> out;
  for (const LogEntry& e : vk().host().logs())
    if (e.message.rfind(kValidationPrefix, 0) == 0) out.push_back(e.message);
  return out;
}

RunResult VulkanTest::run_vk(const infer_graph_view* graph, const std::vector<HostTensor>& inputs) {
  return run_graph(vk(), graph, inputs, device());
}

RunResult VulkanTest::run_cpu(const infer_graph_view* graph, const std::vector<HostTensor>& inputs) {
  return run_graph(cpu(), graph, inputs);
}

void VulkanTest::expect_same_as_cpu(const infer_graph_view* graph,
                                    const std::vector<HostTensor>& inputs, double atol,
                                    double rtol) {
  RunResult expected = run_cpu(graph, inputs);
  ASSERT_TRUE(expected.ok()) << "cpu plugin: " << status_code_name(expected.status.code) << ": "
                             << expected.status.message;
  RunResult actual = run_vk(graph, inputs);
  ASSERT_TRUE(actual.ok()) << "vulkan plugin: " << status_code_name(actual.status.code) << ": "
                           << actual.status.message;
  ASSERT_EQ(actual.outputs.size(), expected.outputs.size());
  for (size_t i = 0; i < expected.outputs.size(); ++i) {
    std::string diff = compare_tensors(actual.outputs[i], expected.outputs[i], atol, rtol);
    EXPECT_EQ(diff, "") << "output " << i << " ('" << graph->outputs[i]->name << "') of graph '"
                        << (graph->name ? graph->name : "") << "'";
  }
}

void VulkanTest::expect_same_as_cpu(const infer_graph_view* graph, uint32_t seed, double atol,
                                    double rtol) {
  expect_same_as_cpu(graph, random_inputs(graph, seed), atol, rtol);
}

}  // namespace infer::test::vk
