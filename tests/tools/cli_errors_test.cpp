// infer-run as a user's script sees it: every bad input ends the process with a non-zero
// status and exactly one line "infer-run: error: <message>" on stderr that names what is
// wrong. (The suite also runs under ASan, so a crash or leak on these paths fails it.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "cli_binary.hpp"
#include "test_data.hpp"
#include "infer_test_paths.hpp"

namespace infer::cli::testing {
namespace {

const std::string kDigits = source_path("models/digits_cnn.onnx");

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

#define EXPECT_CONTAINS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

TEST(CliErrors, MissingModelFile) {
  const std::string missing = "/nonexistent/folder/missing_model.onnx";
  const std::string message = expect_one_line_error(infer_run({missing}));
  EXPECT_CONTAINS(message, missing);
}

TEST(CliErrors, NotAnOnnxFile) {
  const std::string message = expect_one_line_error(infer_run({data_path("not_onnx.onnx")}));
  EXPECT_CONTAINS(message, "not_onnx.onnx");
}

TEST(CliErrors, TruncatedProtobuf) {
  const std::string message = expect_one_line_error(infer_run({data_path("truncated.onnx")}));
  EXPECT_CONTAINS(message, "truncated.onnx");
}

TEST(CliErrors, UnknownOpNamesNodeOpAndDomain) {
  const std::string message = expect_one_line_error(infer_run({data_path("unknown_op.onnx")}));
  EXPECT_CONTAINS(message, "acme_node");
  EXPECT_CONTAINS(message, "FooBar");
  EXPECT_CONTAINS(message, "com.acme");
  EXPECT_CONTAINS(lower(message), "no backend");
}

// A node name holding invalid UTF-8, a terminal escape and a newline (raw_bytes_name.onnx,
// gen_model_fixtures.py): the error line names the node with those bytes escaped as \xNN
// and carries no byte that is a control character or not valid UTF-8.
TEST(CliErrors, RawBytesInNamesAreEscaped) {
  const ProcessResult r = infer_run({data_path("raw_bytes_name.onnx")});
  const std::string message = expect_one_line_error(r);
  EXPECT_CONTAINS(message, "node 'bad\\xFF\\x1B[31m\\x0AE\\xC3(' (FooBar, domain 'com.acme')");
  for (const char c : r.err) {
    const auto byte = static_cast<unsigned char>(c);
    EXPECT_TRUE(byte == '\n' || (byte >= 0x20 && byte < 0x7F)) << "byte " << int(byte) << " in: " << r.err;
  }
}

TEST(CliErrors, StringInputIsUnsupported) {
  const std::string message = expect_one_line_error(infer_run({data_path("string_input.onnx")}));
  EXPECT_CONTAINS(message, "string");
}

TEST(CliErrors, WrongInputDtype) {
  const std::string message =
      expect_one_line_error(infer_run({kDigits, "--input", "image=" + data_path("int64_1x1x8x8.npy")}));
  EXPECT_CONTAINS(message, "image");
  EXPECT_CONTAINS(message, "int64");
  EXPECT_CONTAINS(message, "float32");
}

TEST(CliErrors, WrongInputShape) {
  const std::string message =
      expect_one_line_error(infer_run({kDigits, "--input", "image=" + data_path("float32_1x1x7x7.npy")}));
  EXPECT_CONTAINS(message, "image");
  EXPECT_CONTAINS(message, "7");
}

TEST(CliErrors, StrictSymbolicDimNeedsAShape) {
  const std::string message = expect_one_line_error(infer_run({kDigits, "--strict"}));
  EXPECT_EQ(message, "input 'image' has symbolic dim 'batch': give its shape with --shape image=1x1x8x8");
}

TEST(CliErrors, ShapeContradictingTheModel) {
  const std::string message = expect_one_line_error(infer_run({kDigits, "--shape", "image=1x1x8"}));
  EXPECT_EQ(message,
            "input 'image': the shape 1x1x8 from --shape has 3 dims but the model declares 4 ([batch,1,8,8])");
  const std::string dim = expect_one_line_error(infer_run({kDigits, "--shape", "image=2x3x8x8"}));
  EXPECT_EQ(dim, "input 'image': the shape 2x3x8x8 from --shape has 3 in dim 1 but the model declares 1 ([batch,1,8,8])");
}

TEST(CliErrors, UnknownInputName) {
  const std::string message = expect_one_line_error(infer_run({kDigits, "--shape", "imgae=1x1x8x8"}));
  EXPECT_EQ(message, "input 'imgae' (from --shape) is not an input of the model; its inputs are: image");
}

TEST(CliErrors, CorruptNpy) {
  const std::string file = data_path("truncated_data.npy");
  const std::string message = expect_one_line_error(infer_run({kDigits, "--input", "image=" + file}));
  EXPECT_EQ(message.rfind("cannot read '" + file + "': truncated", 0), 0u) << message;
}

TEST(CliErrors, FortranOrderNpy) {
  const std::string file = data_path("fortran_2x3.npy");
  const std::string message = expect_one_line_error(infer_run({kDigits, "--input", "image=" + file}));
  EXPECT_EQ(message.rfind("cannot read '" + file + "': Fortran-order", 0), 0u) << message;
}

TEST(CliErrors, UnknownYamlKeyNamesFileAndLine) {
  const std::string file = data_path("unknown_key.yaml");
  const std::string message = expect_one_line_error(infer_run({"--config", file}));
  EXPECT_CONTAINS(message, file + ":4");
  EXPECT_CONTAINS(message, "thread");
}

TEST(CliErrors, MissingConfigFile) {
  const std::string message = expect_one_line_error(infer_run({"--config", "/nonexistent/deploy.yaml"}));
  EXPECT_CONTAINS(message, "/nonexistent/deploy.yaml");
}

TEST(CliErrors, EmptyPluginFolderNamesBackendAndFolders) {
  // The runtime also searches <binary>/../lib/infer/plugins, which in the build tree holds
  // every plugin; a copy of the binary in a scratch bin/ folder has no such sibling, so
  // the empty folder given here is all there is to search.
  ScratchDir scratch("empty_plugins");
  std::filesystem::create_directories(scratch.file("bin"));
  std::filesystem::create_directories(scratch.file("plugins"));
  const std::string binary = scratch.file("bin/infer-run");
  std::filesystem::copy_file(kInferRun, binary);
  std::filesystem::permissions(binary, std::filesystem::perms::owner_all);
  const ProcessResult r = run_process(
      binary, {kDigits, "--shape", "image=1x1x8x8", "--plugin-dir", scratch.file("plugins"), "--backends", "example"});
  const std::string message = expect_one_line_error(r);
  EXPECT_CONTAINS(message, "'example'");
  EXPECT_CONTAINS(message, scratch.file("plugins"));
}

TEST(CliErrors, UnknownBackend) {
  const std::string message =
      expect_one_line_error(infer_run({kDigits, "--shape", "image=1x1x8x8", "--backends", "nosuchbackend"}));
  EXPECT_CONTAINS(message, "nosuchbackend");
}

TEST(CliErrors, StrictListsWhatTheBackendsLack) {
  // The example backend implements Add/Sub/Mul/Relu/MatMul/Gemm only, so the digits
  // model's Conv nodes have no backend once cpu is not an implicit fallback.
  const std::string message = expect_one_line_error(
      infer_run({kDigits, "--shape", "image=1x1x8x8", "--backends", "example", "--strict"}));
  EXPECT_CONTAINS(message, "Conv");
}

TEST(CliErrors, BadFlagsExitWithStatus2) {
  EXPECT_CONTAINS(expect_one_line_error(run_process(kInferRun, {kDigits, "--frobnicate"}), 2), "--frobnicate");
  EXPECT_CONTAINS(expect_one_line_error(run_process(kInferRun, {}), 2), "no model given");
  EXPECT_CONTAINS(expect_one_line_error(run_process(kInferRun, {kDigits, "--threads", "many"}), 2), "--threads");
  EXPECT_CONTAINS(expect_one_line_error(run_process(kInferRun, {kDigits, "--shape", "image=1xzx8x8"}), 2),
                  "--shape 'image=1xzx8x8'");
}

TEST(CliErrors, OutputFolderThatCannotBeCreated) {
  const ProcessResult r = infer_run({data_path("odd_names.onnx"), "--output-dir", "/proc/infer_run_cannot_write_here"});
  EXPECT_CONTAINS(expect_one_line_error(r), "/proc/infer_run_cannot_write_here");
}

// Sets an environment variable for the child processes of one test and restores it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_.empty()) {
      ::unsetenv(name_);
    } else {
      ::setenv(name_, old_.c_str(), 1);
    }
  }

 private:
  const char* name_;
  std::string old_;
};

TEST(CliErrors, UnknownCpuIsaIsRefusedNotIgnored) {
  ScopedEnv env("INFER_CPU_ISA", "avx9");
  const std::string message =
      expect_one_line_error(infer_run({kDigits, "--shape", "image=1x1x8x8"}));
  EXPECT_CONTAINS(message, "INFER_CPU_ISA='avx9'");
  EXPECT_CONTAINS(message, "scalar, avx2, avx512, neon");
}

TEST(CliErrors, ScalarCpuIsaRunsTheSamePredictions) {
  // The scalar reference kernels and the default (best SIMD) ones classify the shipped
  // samples alike; the labels are the ones README.md documents.
  const std::vector<std::string> args = {"--config", source_path("configs/default.yaml")};
  ProcessResult best = infer_run(args, INFER_SOURCE_DIR);
  ScopedEnv env("INFER_CPU_ISA", "scalar");
  ProcessResult scalar = infer_run(args, INFER_SOURCE_DIR);
  ASSERT_EQ(best.exit_code, 0) << best.err;
  ASSERT_EQ(scalar.exit_code, 0) << scalar.err;
  for (const char* row : {"row 0: top-1 class 0", "row 1: top-1 class 7", "row 3: top-1 class 3",
                          "row 6: top-1 class 8", "row 7: top-1 class 4"}) {
    EXPECT_CONTAINS(best.out, row);
    EXPECT_CONTAINS(scalar.out, row);
  }
}

}  // namespace
}  // namespace infer::cli::testing
