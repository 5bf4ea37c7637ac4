// The whole of infer-run: parse the command line, merge the deployment file, create the
// session, feed it, run or benchmark it, and report. main() only forwards to run_main.
#pragma once

#include <ostream>
#include <string>

namespace infer::cli {

// Runs infer-run with `argv`, printing results to `out` and diagnostics to `err`.
// Returns the process exit status: 0 success, 1 failure, 2 bad command line. Never
// throws; every failure is one line "infer-run: error: <message>" on `err`.
int run_main(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

// `message` on one line, so multi-line statuses (a list of unsupported nodes) still print
// as the single error line scripts expect: each line is trimmed, empty lines dropped, and
// lines are joined with "; " (just " " after a line ending in ':').
std::string one_line(const std::string& message);

}  // namespace infer::cli
