// The link probe: where the cache lives, its file format (written, read back, rejected
// when broken), and a real measurement through the example plugin, whose copies sleep
// for the copy_latency_us option.
#include <gtest/gtest.h>
#include <oneapi/tbb/task_arena.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "env_guard.hpp"
#include "runtime/backend_set.hpp"
#include "runtime/link_probe.hpp"
#include "session_fixture.hpp"

namespace infer::runtime {
namespace {

using partitioner::testing::EnvGuard;

std::string temp_dir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/infer_part_" + std::to_string(::getpid()) +
                          "_" + name;
  std::filesystem::remove_all(dir);
  return dir;
}

void write_file(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << text;
}

TEST(LinkCache, LocationComesFromTheEnvironment) {
  EnvGuard env;
  env.set("INFER_LINK_CACHE", "/tmp/x/links.json");
  env.set("XDG_CACHE_HOME", "/xdg");
  env.set("HOME", "/home/u");
  LinkCacheSetting s = link_cache_setting();
  EXPECT_TRUE(s.enabled);
  EXPECT_EQ(s.path, "/tmp/x/links.json");

  env.set("INFER_LINK_CACHE", "off");
  s = link_cache_setting();
  EXPECT_FALSE(s.enabled);

  env.set("INFER_LINK_CACHE", std::nullopt);
  EXPECT_EQ(link_cache_setting().path, "/xdg/infer/links.json");
  env.set("XDG_CACHE_HOME", "");
  EXPECT_EQ(link_cache_setting().path, "/home/u/.cache/infer/links.json");
  env.set("HOME", std::nullopt);
  s = link_cache_setting();
  EXPECT_TRUE(s.enabled);
  EXPECT_EQ(s.path, "");
}

TEST(LinkCache, KeysNameBackendDeviceAndSortedOptions) {
  EXPECT_EQ(link_cache_key("example", "example discrete device", {}),
            "example|example discrete device|");
  EXPECT_EQ(link_cache_key("vulkan", "GPU 0", {{"z", "1"}, {"device", "0"}}),
            "vulkan|GPU 0|device=0,z=1");
}

TEST(LinkCache, WrittenFilesReadBackAndAMissingFileIsEmpty) {
  const std::string dir = temp_dir("roundtrip");
  const std::string path = dir + "/sub/links.json";
  auto empty = read_link_cache(path);
  ASSERT_TRUE(empty.is_ok()) << empty.status().message();
  EXPECT_TRUE(empty->empty());

  std::map<std::string, LinkFigures> entries;
  entries["example|dev \"1\"|a=b"] = {{1234.5, 7.25}, {2000, 0}};
  entries["vulkan|GPU|"] = {{0.125, 1e6}, {3e5, 12}};
  ASSERT_TRUE(write_link_cache(path, entries).is_ok());
  auto back = read_link_cache(path);
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  ASSERT_EQ(back->size(), 2u);
  const LinkFigures& f = back->at("example|dev \"1\"|a=b");
  EXPECT_EQ(f.host_to_device.bandwidth_bytes_per_us, 1234.5);
  EXPECT_EQ(f.host_to_device.latency_us, 7.25);
  EXPECT_EQ(f.device_to_host.bandwidth_bytes_per_us, 2000);
  EXPECT_EQ(f.device_to_host.latency_us, 0);
  EXPECT_EQ(back->at("vulkan|GPU|").host_to_device.bandwidth_bytes_per_us, 0.125);
  EXPECT_EQ(back->at("vulkan|GPU|").host_to_device.latency_us, 1e6);
  // No temporary file is left next to it.
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir + "/sub")) files += e.is_regular_file();
  EXPECT_EQ(files, 1u);
  std::filesystem::remove_all(dir);
}

TEST(LinkCache, BrokenFilesAreErrorsNamingTheFileAndTheProblem) {
  const std::string dir = temp_dir("broken");
  const std::string path = dir + "/links.json";
  write_file(path, "{\"version\": 1, \"links\": {\"k\": {\"host_to_device\": "
                   "{\"bandwidth_bytes_per_us\": 0, \"latency_us\": 1}}}}");
  auto r = read_link_cache(path);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(), "link cache '" + path +
                                      "': entry 'k': 'host_to_device': 'bandwidth_bytes_per_us' "
                                      "must be a positive number");
  write_file(path, "{\"version\": 2, \"links\": {}}");
  r = read_link_cache(path);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().message(), "link cache '" + path + "': expected \"version\": 1");
  write_file(path, "{\"version\": 1, \"links\": {");
  r = read_link_cache(path);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().message(), "link cache '" + path + "': expected a string at offset 25");
  std::filesystem::remove_all(dir);
}

class ExampleDevice : public ::testing::Test {
 protected:
  Backend open(const std::vector<std::pair<std::string, std::string>>& options) {
    arena_ = std::make_shared<tbb::task_arena>(2);
    arena_->initialize();
    SessionOptions o = infer::testing::tree_options({"example"});
    o.backend_options = {{"example", options}};
    Logger log(o.log_sink, LogLevel::kError);
    auto backends = open_backends({"example"}, o, arena_, log);
    EXPECT_TRUE(backends.is_ok()) << backends.status().message();
    return backends.is_ok() ? std::move((*backends)[0]) : Backend{};
  }
  std::shared_ptr<tbb::task_arena> arena_;
};

TEST_F(ExampleDevice, MeasuringFindsTheSimulatedLatency) {
  // Every copy of the example device sleeps 2 ms before copying: the fitted latency is at
  // least that (less the small copy's transfer time), and far from ten times it.
  Backend b = open({{"copy_latency_us", "2000"}});
  ASSERT_TRUE(b.device.valid());
  auto f = measure_link(b.device);
  ASSERT_TRUE(f.is_ok()) << f.status().message();
  for (const partitioner::LinkCost& c : {f->host_to_device, f->device_to_host}) {
    EXPECT_GE(c.latency_us, 1900.0);
    EXPECT_LT(c.latency_us, 20000.0);
    EXPECT_GT(c.bandwidth_bytes_per_us, 0.0);
  }
}

TEST_F(ExampleDevice, FiguresComeFromTheCacheElseAreMeasuredAndStored) {
  const std::string dir = temp_dir("figures");
  const std::string path = dir + "/links.json";
  EnvGuard env;
  env.set("INFER_LINK_CACHE", path);
  Backend b = open({{"copy_latency_us", "1000"}});
  ASSERT_TRUE(b.device.valid());
  Logger log(nullptr, LogLevel::kError);
  const std::vector<std::pair<std::string, std::string>> options = {{"copy_latency_us", "1000"}};
  auto measured = link_figures("example", b.device, options, log);
  ASSERT_TRUE(measured.has_value());
  EXPECT_GE(measured->host_to_device.latency_us, 900.0);
  auto stored = read_link_cache(path);
  ASSERT_TRUE(stored.is_ok()) << stored.status().message();
  const std::string key = "example|example discrete device|copy_latency_us=1000";
  ASSERT_EQ(stored->count(key), 1u);
  EXPECT_EQ(stored->at(key).host_to_device.latency_us, measured->host_to_device.latency_us);

  // A cached entry is used as is, without measuring.
  std::map<std::string, LinkFigures> fixed = {{key, {{111, 2}, {333, 4}}}};
  ASSERT_TRUE(write_link_cache(path, fixed).is_ok());
  auto cached = link_figures("example", b.device, options, log);
  ASSERT_TRUE(cached.has_value());
  EXPECT_EQ(cached->host_to_device.bandwidth_bytes_per_us, 111);
  EXPECT_EQ(cached->device_to_host.latency_us, 4);

  // "off": the plugin's copy_cost (16 GB/s, 10 us set-up + the 1000 us option).
  env.set("INFER_LINK_CACHE", "off");
  auto estimate = link_figures("example", b.device, options, log);
  ASSERT_TRUE(estimate.has_value());
  EXPECT_EQ(estimate->host_to_device.bandwidth_bytes_per_us, 16000);
  EXPECT_EQ(estimate->host_to_device.latency_us, 1010);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace infer::runtime
