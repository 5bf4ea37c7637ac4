// Output file names under --output-dir.
#include <gtest/gtest.h>

#include "output_files.hpp"

namespace infer::cli {
namespace {

TEST(SanitizeOutputName, KeepsSafeCharacters) {
  EXPECT_EQ(sanitize_output_name("logits"), "logits");
  EXPECT_EQ(sanitize_output_name("Out-1.final_v2"), "Out-1.final_v2");
}

TEST(SanitizeOutputName, ReplacesEveryOtherCharacter) {
  EXPECT_EQ(sanitize_output_name("scores/relu:0"), "scores_relu_0");
  EXPECT_EQ(sanitize_output_name("a b\tc"), "a_b_c");
  EXPECT_EQ(sanitize_output_name("../../etc/passwd"), ".._.._etc_passwd");
  // "é" is two UTF-8 bytes, each replaced.
  EXPECT_EQ(sanitize_output_name("caf\xc3\xa9"), "caf__");
}

TEST(SanitizeOutputName, NeverYieldsAPathComponent) {
  EXPECT_EQ(sanitize_output_name(""), "_");
  EXPECT_EQ(sanitize_output_name("."), "_.");
  EXPECT_EQ(sanitize_output_name(".."), "_..");
}

TEST(OutputFileNames, AppendsNpyAndDisambiguatesCollisions) {
  EXPECT_EQ(output_file_names({"logits", "scores/relu:0"}),
            (std::vector<std::string>{"logits.npy", "scores_relu_0.npy"}));
  EXPECT_EQ(output_file_names({"a/b", "a_b", "a:b"}),
            (std::vector<std::string>{"a_b.npy", "a_b_2.npy", "a_b_3.npy"}));
}

}  // namespace
}  // namespace infer::cli
