// infer-run: everything lives in the infer_cli library so tests can call the pieces;
// this file only connects it to the process's streams.
#include <iostream>

#include "runner.hpp"

int main(int argc, char** argv) { return infer::cli::run_main(argc, argv, std::cout, std::cerr); }
