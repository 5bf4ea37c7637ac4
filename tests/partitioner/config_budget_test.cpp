// The deployment file's backends.<name>.memory_budget_mb: read apart from the plugin's
// options (the plugin never sees it), and checked.
#include <gtest/gtest.h>

#include "config/deployment_config.hpp"

namespace infer::config {
namespace {

TEST(ConfigMemoryBudget, IsReadApartFromThePluginOptions) {
  auto c = parse_config(
      "backends:\n  - name: example\n    memory_budget_mb: 256\n    options: {memory_mb: 512}\n"
      "  - cpu\n",
      "x.yaml", "");
  ASSERT_TRUE(c.is_ok()) << c.status().message();
  ASSERT_EQ(c->backends.size(), 2u);
  EXPECT_EQ(c->backends[0].memory_budget_mb, 256);
  ASSERT_EQ(c->backends[0].options.size(), 1u);
  EXPECT_EQ(c->backends[0].options[0].first, "memory_mb");
  EXPECT_FALSE(c->backends[1].memory_budget_mb.has_value());
}

TEST(ConfigMemoryBudget, MustBeAPositiveInteger) {
  auto c = parse_config("backends:\n  - name: example\n    memory_budget_mb: 0\n", "x.yaml", "");
  ASSERT_FALSE(c.is_ok());
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(c.status().message(),
            "x.yaml:3: 'backends[0].memory_budget_mb' must be an integer >= 1, got '0'");
  c = parse_config("backends:\n  - name: example\n    memory_budget_mb: lots\n", "x.yaml", "");
  ASSERT_FALSE(c.is_ok());
  EXPECT_NE(c.status().message().find("'backends[0].memory_budget_mb'"), std::string::npos)
      << c.status().message();
}

}  // namespace
}  // namespace infer::config
