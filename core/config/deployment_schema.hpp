// The deployment-file schema: which keys exist, what each must hold, and how it lands in
// DeploymentConfig. Private to infer_config; configs/README.md documents it for users.
#pragma once

#include "config/deployment_config.hpp"
#include "config/schema_reader.hpp"
#include "infer/status.hpp"

namespace infer::config::detail {

// Validates the document's top-level node and builds the config from it. `source` is
// left for the caller to fill.
Result<DeploymentConfig> read_deployment(const SchemaReader& reader, const Field& root);

}  // namespace infer::config::detail
