// The gRPC transport of infer-serve: inference.GRPCInferenceService (grpc_inference.proto)
// on gRPC++'s callback API, over the same models, state and metrics as the HTTP
// endpoints. Inputs come as typed contents or raw_input_contents; outputs always go back
// as raw_output_contents, the form every v2 client reads and the only one for FP16/BF16.
#pragma once

#include <memory>
#include <string>

#include "infer/status.hpp"
#include "model_table.hpp"

namespace infer::serve {

struct GrpcSettings {
  std::string host = "127.0.0.1";
  int port = 8001;  // 0: any free port
  size_t max_message_bytes = size_t{64} << 20;
};

class GrpcServer {
 public:
  GrpcServer(GrpcSettings settings, const ModelTable& models, ServerState& state);
  ~GrpcServer();
  // Listens and serves on gRPC's own threads. Fails naming the address when it cannot.
  Status start();
  int port() const;
  // Finishes the calls in progress (up to a second), then stops. Idempotent.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace infer::serve
