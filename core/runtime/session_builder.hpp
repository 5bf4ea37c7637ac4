// Session::create's pipeline: load -> check the signature -> optimize -> open the
// backends -> ask for capabilities -> partition -> compile -> plan.
#pragma once

#include <memory>
#include <string>

#include "infer/infer.hpp"

namespace infer::runtime {

Result<std::unique_ptr<Session>> build_session(const std::string& model_path,
                                               const SessionOptions& options);

}  // namespace infer::runtime
