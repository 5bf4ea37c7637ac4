// Which ONNX operator schemas infer trusts. The bundled ONNX release (Debian's libonnx
// 1.12) knows the default domain up to opset 17 and ai.onnx.ml up to 3. A model that
// imports a newer opset may use operators that release has never heard of, and - worse -
// operators whose newer version changed inputs or attributes (ReduceMean-18 takes `axes`
// as an input): checking or inferring them with the older schema would reject valid
// models or, silently, compute wrong shapes. So for a domain imported at a version newer
// than the release knows, infer uses no schema at all: such nodes are checked for
// well-formedness only, and their shapes come from the file's value_info. (Shape and
// type errors in those nodes then surface when a backend compiles them.)
#pragma once

#include <optional>
#include <string>

#include <onnx/defs/schema.h>

namespace infer::onnx_io {

// The newest version of `domain` this ONNX release has schemas for; nullopt for a domain
// it does not manage (a custom domain).
std::optional<int> newest_known_opset(const std::string& domain);

// True when `domain` is managed by ONNX and `version` is newer than this release knows.
bool opset_is_newer_than_known(const std::string& domain, int64_t version);

// ONNX's registry, except that it answers "no schema" for versions newer than it knows.
class BoundedSchemaRegistry final : public onnx::ISchemaRegistry {
 public:
  const onnx::OpSchema* GetSchema(const std::string& key, const int max_inclusive_version,
                                  const std::string& domain) const override;
};

}  // namespace infer::onnx_io
