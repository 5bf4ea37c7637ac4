// Error messages are printed as one line whatever the status held.
#include <gtest/gtest.h>

#include "runner.hpp"

namespace infer::cli {
namespace {

TEST(OneLine, KeepsSingleLines) {
  EXPECT_EQ(one_line("input 'image': expected dtype float32, got int64"),
            "input 'image': expected dtype float32, got int64");
  EXPECT_EQ(one_line(""), "");
}

TEST(OneLine, JoinsListsAndDropsBlankLines) {
  EXPECT_EQ(one_line("strict mode: 2 nodes are not supported (example):\n  node 'a' (Conv)\n  node 'b' (MaxPool)\n"),
            "strict mode: 2 nodes are not supported (example): node 'a' (Conv); node 'b' (MaxPool)");
  EXPECT_EQ(one_line("first\r\n\n\nsecond\n\n"), "first; second");
  EXPECT_EQ(one_line("\n  leading\ttrailing  \n"), "leading\ttrailing");
}

}  // namespace
}  // namespace infer::cli
