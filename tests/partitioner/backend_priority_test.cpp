#include <gtest/gtest.h>

#include "partitioner/partitioner.hpp"

namespace infer::partitioner {
namespace {

using Names = std::vector<std::string>;

Names order(const Names& requested, bool strict) {
  auto r = backend_priority(requested, strict);
  EXPECT_TRUE(r.is_ok()) << r.status().message();
  return r.is_ok() ? *r : Names{};
}

TEST(BackendPriority, AppendsCpuAsImplicitFallback) {
  EXPECT_EQ(order({"example"}, false), Names({"example", "cpu"}));
  EXPECT_EQ(order({"vulkan", "example"}, false), Names({"vulkan", "example", "cpu"}));
}

TEST(BackendPriority, KeepsCpuWhereTheUserListedIt) {
  EXPECT_EQ(order({"cpu", "example"}, false), Names({"cpu", "example"}));
  EXPECT_EQ(order({"example", "cpu"}, false), Names({"example", "cpu"}));
}

TEST(BackendPriority, StrictModeAddsNoFallback) {
  EXPECT_EQ(order({"example"}, true), Names({"example"}));
  EXPECT_EQ(order({"example", "cpu"}, true), Names({"example", "cpu"}));
}

TEST(BackendPriority, EmptyListMeansCpu) {
  EXPECT_EQ(order({}, false), Names({"cpu"}));
  EXPECT_EQ(order({}, true), Names({"cpu"}));
}

TEST(BackendPriority, DuplicatesAndEmptyNamesAreErrors) {
  auto dup = backend_priority({"example", "cpu", "example"}, false);
  ASSERT_FALSE(dup.is_ok());
  EXPECT_EQ(dup.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(dup.status().message(), "backends: 'example' is listed twice");

  auto empty = backend_priority({"example", ""}, false);
  ASSERT_FALSE(empty.is_ok());
  EXPECT_EQ(empty.status().message(), "backends: an entry is empty");
}

}  // namespace
}  // namespace infer::partitioner
