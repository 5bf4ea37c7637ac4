// The REST endpoints of the KServe v2 protocol (and /metrics), apart from the HTTP
// transport: a request's method, target, header length and body go in, a status and a
// body come out. Inference answers later, from the model's worker thread.
//
//   GET  /v2                                   server metadata
//   GET  /v2/health/live | /v2/health/ready
//   GET  /v2/models/{m}[/versions/{v}]         model metadata
//   GET  /v2/models/{m}[/versions/{v}]/ready
//   POST /v2/models/{m}[/versions/{v}]/infer   JSON or binary tensor data
//   GET  /metrics                              Prometheus text format
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "metrics.hpp"
#include "model_table.hpp"

namespace infer::serve {

struct HttpReply {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  std::optional<size_t> header_length;  // Inference-Header-Content-Length, binary outputs
  std::string allow;                    // the Allow header of a 405
};
using ReplyFn = std::function<void(HttpReply)>;

class V2Router {
 public:
  V2Router(const ModelTable& models, ServerState& state, const Metrics& metrics);

  // Calls `reply` exactly once: at once, or for an accepted inference on the thread that
  // finishes it. `header_length` is the request's Inference-Header-Content-Length.
  void handle(std::string_view method, std::string_view target, std::optional<size_t> header_length,
              std::shared_ptr<std::string> body, ReplyFn reply) const;

 private:
  void infer(ServedModel& model, std::optional<size_t> header_length,
             std::shared_ptr<std::string> body, ReplyFn reply) const;
  const ModelTable& models_;
  ServerState& state_;
  const Metrics& metrics_;
};

// The HTTP status for a failed Status: InvalidArgument 400, NotFound 404, Unavailable
// 503, Unsupported 501, anything else 500.
int http_status_of(const Status& status);

}  // namespace infer::serve
