#include <gtest/gtest.h>

#include <cstddef>

#include "plugin_host/plugin_library.hpp"
#include "test_util.hpp"

namespace infer::host {
namespace {

using testing::fixture_path;

Status refusal(const std::string& fixture, RejectReason expected, HostVersion host = {}) {
  RejectReason reason = RejectReason::kNone;
  auto lib = PluginLibrary::open(fixture_path(fixture), host, &reason);
  EXPECT_FALSE(lib.is_ok()) << fixture;
  EXPECT_EQ(reason, expected) << fixture << ": " << lib.status().message();
  return lib.status();
}

bool contains(const Status& s, const std::string& needle) {
  return s.message().find(needle) != std::string::npos;
}

TEST(PluginLibrary, LoadsACompletePlugin) {
  auto lib = PluginLibrary::open(fixture_path("good"));
  ASSERT_TRUE(lib.is_ok()) << lib.status().message();
  const PluginLibrary& l = **lib;
  EXPECT_EQ(l.name(), "good");
  EXPECT_EQ(l.version(), "1.2.3-fixture");
  EXPECT_EQ(l.description(), "plugin host test fixture");
  EXPECT_EQ(l.abi_major(), INFER_ABI_VERSION_MAJOR);
  EXPECT_EQ(l.abi_minor(), INFER_ABI_VERSION_MINOR);
  EXPECT_EQ(l.table_size(), sizeof(infer_plugin_api));
  EXPECT_EQ(l.path(), fixture_path("good"));
  EXPECT_NE(l.api().compile, nullptr);
  EXPECT_NE(l.api().prepack_constant, nullptr);
  EXPECT_NE(l.api().buffer_map, nullptr);
}

TEST(PluginLibrary, OlderMinorLoadsAndFieldsPastItsTableReadAsNull) {
  auto lib = PluginLibrary::open(fixture_path("oldminor"));
  ASSERT_TRUE(lib.is_ok()) << lib.status().message();
  const PluginLibrary& l = **lib;
  EXPECT_EQ(l.abi_minor(), 0u);
  EXPECT_EQ(l.table_size(), offsetof(infer_plugin_api, prepack_constant));
  // The fixture's static table does hold a prepack_constant pointer past its
  // struct_size; the host must not see it.
  EXPECT_EQ(l.api().prepack_constant, nullptr);
  EXPECT_FALSE(INFER_HAS_FIELD(&l.api(), infer_plugin_api, prepack_constant));
  EXPECT_EQ(l.api().prepack_flags, 0u) << "set in the static table, but past struct_size";
  EXPECT_NE(l.api().execute, nullptr);
  EXPECT_NE(l.api().copy_cost, nullptr);
}

TEST(PluginLibrary, RefusesAWrongMajor) {
  Status s = refusal("wrongmajor", RejectReason::kWrongAbiMajor);
  EXPECT_TRUE(contains(s, "wrong ABI major: built for ABI major 1, host speaks 0")) << s.message();
  EXPECT_TRUE(contains(s, fixture_path("wrongmajor"))) << s.message();
}

TEST(PluginLibrary, RefusesAPluginNeedingANewerMinor) {
  Status s = refusal("newerminor", RejectReason::kNeedsNewerMinor);
  EXPECT_TRUE(contains(s, "requires a newer ABI minor: requires ABI minor " +
                              std::to_string(INFER_ABI_VERSION_MINOR + 2) + ", host has " +
                              std::to_string(INFER_ABI_VERSION_MINOR)))
      << s.message();
  // A newer host satisfies it.
  auto lib = PluginLibrary::open(fixture_path("newerminor"),
                                 HostVersion{INFER_ABI_VERSION_MAJOR, INFER_ABI_VERSION_MINOR + 2});
  EXPECT_TRUE(lib.is_ok()) << lib.status().message();
}

TEST(PluginLibrary, RefusesALibraryWithoutTheEntrySymbol) {
  Status s = refusal("noentry", RejectReason::kNoEntrySymbol);
  EXPECT_TRUE(contains(s, "not a plugin (no infer_plugin_entry symbol)")) << s.message();
}

TEST(PluginLibrary, RefusesAFileThatIsNotAnElfObject) {
  Status s = refusal("junk", RejectReason::kDlopenFailed);
  EXPECT_TRUE(contains(s, "dlopen failed: ")) << s.message();
}

TEST(PluginLibrary, RefusesAMissingFile) {
  RejectReason reason = RejectReason::kNone;
  auto lib = PluginLibrary::open("/nonexistent/libinfer_plugin_ghost.so", {}, &reason);
  ASSERT_FALSE(lib.is_ok());
  EXPECT_EQ(reason, RejectReason::kDlopenFailed);
  EXPECT_TRUE(contains(lib.status(), "dlopen failed")) << lib.status().message();
}

TEST(PluginLibrary, RefusesAnEntryReturningNull) {
  Status s = refusal("entrynull", RejectReason::kEntryReturnedNull);
  EXPECT_TRUE(contains(s, "entry point returned NULL")) << s.message();
}

TEST(PluginLibrary, RefusesANameThatDoesNotMatchTheFile) {
  Status s = refusal("mismatch", RejectReason::kNameMismatch);
  EXPECT_TRUE(contains(s, "'somebody_else'")) << s.message();
  EXPECT_TRUE(contains(s, "'mismatch'")) << s.message();
}

TEST(PluginLibrary, RefusesATableMissingARequiredEntry) {
  Status s = refusal("nocompile", RejectReason::kMissingEntry);
  EXPECT_TRUE(contains(s, "missing required entry (NULL): compile")) << s.message();
}

TEST(PluginLibrary, RefusesAFileNotNamedLikeAPlugin) {
  RejectReason reason = RejectReason::kNone;
  auto lib = PluginLibrary::open("/tmp/libsomething.so", {}, &reason);
  ASSERT_FALSE(lib.is_ok());
  EXPECT_EQ(reason, RejectReason::kBadFileName);
}

TEST(PluginLibrary, NameFromFileName) {
  EXPECT_EQ(PluginLibrary::name_from_file_name("/a/b/libinfer_plugin_cpu.so"), "cpu");
  EXPECT_EQ(PluginLibrary::name_from_file_name("libinfer_plugin_x_y.so"), "x_y");
  EXPECT_EQ(PluginLibrary::name_from_file_name("/a/libinfer_plugin_.so"), "");
  EXPECT_EQ(PluginLibrary::name_from_file_name("/a/libinfer_plugin_cpu.so.1"), "");
  EXPECT_EQ(PluginLibrary::name_from_file_name("/a/infer_plugin_cpu.so"), "");
}

TEST(PluginLibrary, ReopeningTheSameFileWorks) {
  for (int i = 0; i < 3; ++i) {
    auto lib = PluginLibrary::open(fixture_path("good"));
    ASSERT_TRUE(lib.is_ok()) << lib.status().message();
  }
  auto a = PluginLibrary::open(fixture_path("good"));
  auto b = PluginLibrary::open(fixture_path("good"));
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  EXPECT_EQ((*a)->api().compile, (*b)->api().compile);  // one mapping, refcounted by dlopen
}

}  // namespace
}  // namespace infer::host
