// Runs a program as a child process and captures its exit status, stdout and stderr,
// for the tests that drive the built infer-run binary like a user's script would.
#pragma once

#include <string>
#include <vector>

namespace infer::cli::testing {

struct ProcessResult {
  int exit_code = -1;    // the status passed to exit(), or -1 when killed by a signal
  int term_signal = 0;   // the signal that killed it, 0 if it exited
  std::string out;
  std::string err;
};

// Runs `program` with `args` in `working_dir` ("" = the test's own). INFER_PLUGIN_PATH
// is removed from the child's environment so only the folders a test names are searched.
// The child is killed after `timeout_s` seconds (SIGALRM) so a hang fails the test.
ProcessResult run_process(const std::string& program, const std::vector<std::string>& args,
                          const std::string& working_dir = "", unsigned timeout_s = 120);

// The lines of `text` (without their '\n'); a trailing newline adds no empty line.
std::vector<std::string> split_lines(const std::string& text);

}  // namespace infer::cli::testing
