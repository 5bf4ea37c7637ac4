#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "plugin_host/plugin_registry.hpp"
#include "test_util.hpp"
#include "infer_test_paths.hpp"

namespace infer::host {
namespace {

using testing::fixture_path;
using testing::LogRecorder;
using testing::ScopedEnv;
using testing::TempDir;

DiscoveryOptions only(std::vector<std::string> dirs, LogSink sink = {}) {
  DiscoveryOptions o;
  o.search_dirs = std::move(dirs);
  o.use_env_path = false;
  o.use_install_dir = false;
  o.log_sink = std::move(sink);
  return o;
}

TEST(PluginRegistry, EarlierFolderWins) {
  TempDir a, b;
  a.add("good");
  b.add("good");
  {
    PluginRegistry reg(only({a.path(), b.path()}));
    auto lib = reg.find("good");
    ASSERT_TRUE(lib.is_ok()) << lib.status().message();
    EXPECT_EQ((*lib)->path(), a.path() + "/libinfer_plugin_good.so");
  }
  {
    PluginRegistry reg(only({b.path(), a.path()}));
    auto lib = reg.find("good");
    ASSERT_TRUE(lib.is_ok()) << lib.status().message();
    EXPECT_EQ((*lib)->path(), b.path() + "/libinfer_plugin_good.so");
  }
}

TEST(PluginRegistry, ShadowedPluginIsLoggedAtDebug) {
  TempDir a, b;
  a.add("good");
  std::string later = b.add("good");
  LogRecorder rec;
  PluginRegistry reg(only({a.path(), b.path()}, rec.sink()));
  ASSERT_TRUE(reg.find("good").is_ok());
  EXPECT_EQ(rec.count(LogLevel::kDebug, later + " is shadowed"), 1u);
  EXPECT_TRUE(reg.rejected().empty());
}

TEST(PluginRegistry, InvalidEarlierCandidateFallsThroughToALaterValidOne) {
  TempDir a, b;
  std::string bad = a.add("wrongmajor", "good");
  b.add("good");
  LogRecorder rec;
  PluginRegistry reg(only({a.path(), b.path()}, rec.sink()));
  auto lib = reg.find("good");
  ASSERT_TRUE(lib.is_ok()) << lib.status().message();
  EXPECT_EQ((*lib)->path(), b.path() + "/libinfer_plugin_good.so");
  auto rejected = reg.rejected();
  ASSERT_EQ(rejected.size(), 1u);
  EXPECT_EQ(rejected[0].path, bad);
  EXPECT_EQ(rejected[0].reason, RejectReason::kWrongAbiMajor);
  EXPECT_EQ(rec.count(LogLevel::kWarning, bad), 1u);
}

TEST(PluginRegistry, EnvironmentPathComesAfterTheCallersFoldersInItsOwnOrder) {
  TempDir a, b, c;
  a.add("good");
  b.add("good");
  c.add("good");
  {
    ScopedEnv env("INFER_PLUGIN_PATH", b.path() + "::" + a.path() + ":");
    DiscoveryOptions o = only({});
    o.use_env_path = true;
    PluginRegistry reg(o);
    EXPECT_EQ(reg.searched_dirs(), (std::vector<std::string>{b.path(), a.path()}));
    auto lib = reg.find("good");
    ASSERT_TRUE(lib.is_ok()) << lib.status().message();
    EXPECT_EQ((*lib)->path(), b.path() + "/libinfer_plugin_good.so");
  }
  {
    ScopedEnv env("INFER_PLUGIN_PATH", b.path() + ":" + a.path());
    DiscoveryOptions o = only({c.path()});
    o.use_env_path = true;
    PluginRegistry reg(o);
    EXPECT_EQ(reg.searched_dirs(), (std::vector<std::string>{c.path(), b.path(), a.path()}));
    auto lib = reg.find("good");
    ASSERT_TRUE(lib.is_ok());
    EXPECT_EQ((*lib)->path(), c.path() + "/libinfer_plugin_good.so");
  }
}

TEST(PluginRegistry, EnvDirsDropEmptyEntries) {
  ScopedEnv env("INFER_PLUGIN_PATH", ":/x::/y/z:");
  EXPECT_EQ(PluginRegistry::env_dirs(), (std::vector<std::string>{"/x", "/y/z"}));
}

TEST(PluginRegistry, InstallDirIsNextToTheExecutable) {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  ASSERT_GT(n, 0);
  std::string exe(buf, static_cast<size_t>(n));
  std::string bin_dir = exe.substr(0, exe.rfind('/'));
  std::string lib_root = bin_dir.substr(0, bin_dir.rfind('/'));
  EXPECT_EQ(PluginRegistry::install_dir(), lib_root + "/lib/infer/plugins");
  DiscoveryOptions o = only({});
  o.use_install_dir = true;
  PluginRegistry reg(o);
  EXPECT_EQ(reg.searched_dirs(), std::vector<std::string>{lib_root + "/lib/infer/plugins"});
}

TEST(PluginRegistry, NotFoundListsSearchedFolders) {
  TempDir empty;
  std::string missing = empty.path() + "/does_not_exist";
  LogRecorder rec;
  PluginRegistry reg(only({empty.path(), missing}, rec.sink()));
  auto lib = reg.find("vulkan");
  ASSERT_FALSE(lib.is_ok());
  EXPECT_EQ(lib.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(lib.status().message(),
            "no plugin 'vulkan' found (searched: " + empty.path() + ", " + missing + ")");
  EXPECT_EQ(rec.count(LogLevel::kDebug, "does not exist"), 1u);
  EXPECT_EQ(rec.count(LogLevel::kDebug, "holds no libinfer_plugin_*.so"), 1u);
  EXPECT_TRUE(reg.available().empty());
}

TEST(PluginRegistry, NotFoundListsTheRejectedCandidatesOfThatName) {
  TempDir a;
  std::string bad = a.add("wrongmajor", "vulkan");
  a.add("good");
  LogRecorder rec;
  PluginRegistry reg(only({a.path()}, rec.sink()));
  auto lib = reg.find("vulkan");
  ASSERT_FALSE(lib.is_ok());
  EXPECT_EQ(lib.status().message(), "no plugin 'vulkan' found (searched: " + a.path() +
                                        "; rejected: " + bad +
                                        ": wrong ABI major: built for ABI major 1, host speaks 0)");
  // Asking again answers from the cache without a second rejection.
  EXPECT_FALSE(reg.find("vulkan").is_ok());
  EXPECT_EQ(reg.rejected().size(), 1u);
  EXPECT_EQ(rec.count(LogLevel::kWarning, "rejected plugin candidate " + bad), 1u);
}

TEST(PluginRegistry, FixtureFolderSortsValidFromRejectedPlugins) {
  LogRecorder rec;
  PluginRegistry reg(only({INFER_FIXTURE_PLUGIN_DIR}, rec.sink()));
  EXPECT_EQ(reg.available(), (std::vector<std::string>{"good", "nodevices", "nulls", "oldminor"}));
  auto rejected = reg.rejected();
  std::map<std::string, RejectReason> by_name;
  for (const auto& r : rejected) by_name[r.name] = r.reason;
  std::map<std::string, RejectReason> expected = {
      {"entrynull", RejectReason::kEntryReturnedNull},
      {"junk", RejectReason::kDlopenFailed},
      {"mismatch", RejectReason::kNameMismatch},
      {"newerminor", RejectReason::kNeedsNewerMinor},
      {"nocompile", RejectReason::kMissingEntry},
      {"noentry", RejectReason::kNoEntrySymbol},
      {"wrongmajor", RejectReason::kWrongAbiMajor},
  };
  EXPECT_EQ(by_name, expected);
  for (const auto& r : rejected) EXPECT_EQ(rec.count(LogLevel::kWarning, r.path), 1u) << r.path;
  for (const auto& r : rejected) {
    if (r.name == "noentry") {
      EXPECT_EQ(r.message, "not a plugin (no infer_plugin_entry symbol)");
    } else if (r.name == "junk") {
      EXPECT_EQ(r.message.rfind("dlopen failed: ", 0), 0u) << r.message;
    } else if (r.name == "entrynull") {
      EXPECT_EQ(r.message.rfind("entry point returned NULL", 0), 0u) << r.message;
    }
  }
}

TEST(PluginRegistry, FindIsCachedAndNamesAreExact) {
  PluginRegistry reg(only({INFER_FIXTURE_PLUGIN_DIR}));
  auto a = reg.find("good");
  auto b = reg.find("good");
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  EXPECT_EQ(a->get(), b->get());
  EXPECT_FALSE(reg.find("goo").is_ok());
  EXPECT_FALSE(reg.find("GOOD").is_ok());
}

TEST(PluginRegistry, CandidatesAreInFolderThenFileNameOrder) {
  TempDir a, b;
  a.add("good", "zeta");
  a.add("good", "alpha");
  b.add("good", "beta");
  PluginRegistry reg(only({a.path(), b.path()}));
  EXPECT_EQ(reg.candidates(), (std::vector<std::string>{a.path() + "/libinfer_plugin_alpha.so",
                                                        a.path() + "/libinfer_plugin_zeta.so",
                                                        b.path() + "/libinfer_plugin_beta.so"}));
}

}  // namespace
}  // namespace infer::host
