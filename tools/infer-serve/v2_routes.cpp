#include "v2_routes.hpp"

#include <vector>

#ifndef INFER_VERSION
#define INFER_VERSION "0"
#endif

namespace infer::serve {
namespace {

HttpReply json_reply(int status, std::string body) {
  HttpReply r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

HttpReply error_reply(int status, std::string_view message) {
  return json_reply(status, error_body(message));
}

HttpReply error_reply(const Status& status) {
  return error_reply(http_status_of(status), status.message());
}

std::vector<std::string_view> split_path(std::string_view path) {
  std::vector<std::string_view> parts;
  size_t i = 0;
  while (i < path.size()) {
    if (path[i] == '/') {
      ++i;
      continue;
    }
    const size_t end = path.find('/', i);
    parts.push_back(
        path.substr(i, end == std::string_view::npos ? std::string_view::npos : end - i));
    if (end == std::string_view::npos) break;
    i = end;
  }
  return parts;
}

std::string tensor_metadata(const TensorInfo& info) {
  std::string out = "{\"name\":" + json_string(info.name) + ",\"datatype\":";
  const std::string_view dt = v2_datatype(info.dtype);
  out += json_string(dt.empty() ? std::string(dtype_name(info.dtype)) : std::string(dt));
  out += ",\"shape\":[";
  for (size_t i = 0; i < info.dims.size(); ++i)
    out += (i ? "," : "") + std::to_string(info.dims[i] < 0 ? -1 : info.dims[i]);
  return out + "]}";
}

std::string model_metadata(const ServedModel& model, const std::vector<std::string>& versions) {
  std::string out = "{\"name\":" + json_string(model.name()) + ",\"versions\":[";
  for (size_t i = 0; i < versions.size(); ++i) out += (i ? "," : "") + json_string(versions[i]);
  out += "],\"platform\":\"onnx_onnxv1\",\"inputs\":[";
  for (size_t i = 0; i < model.inputs().size(); ++i)
    out += (i ? "," : "") + tensor_metadata(model.inputs()[i]);
  out += "],\"outputs\":[";
  for (size_t i = 0; i < model.outputs().size(); ++i)
    out += (i ? "," : "") + tensor_metadata(model.outputs()[i]);
  out += "]";
  if (model.max_batch_size() > 0) {
    out += ",\"parameters\":{\"max_batch_size\":" + std::to_string(model.max_batch_size()) + "}";
  }
  return out + "}";
}

double seconds_since(TimePoint start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// 503 is a refusal (queue full, timed out, stopping); 500 a failed run; any other error,
// 501 included, is a request the server cannot take as sent.
Outcome outcome_of(int http_status) {
  if (http_status < 300) return Outcome::kSuccess;
  if (http_status == 503) return Outcome::kRejected;
  if (http_status == 500) return Outcome::kFailed;
  return Outcome::kBadRequest;
}

}  // namespace

int http_status_of(const Status& status) {
  switch (status.code()) {
    case StatusCode::kOk:
      return 200;
    case StatusCode::kInvalidArgument:
      return 400;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kUnavailable:
      return 503;
    case StatusCode::kUnsupported:
      return 501;
    default:
      return 500;
  }
}

V2Router::V2Router(const ModelTable& models, ServerState& state, const Metrics& metrics)
    : models_(models), state_(state), metrics_(metrics) {}

void V2Router::handle(std::string_view method, std::string_view target,
                      std::optional<size_t> header_length, std::shared_ptr<std::string> body,
                      ReplyFn reply) const {
  const std::string_view path = target.substr(0, target.find('?'));
  const std::vector<std::string_view> parts = split_path(path);
  auto only = [&](std::string_view allowed) {
    if (method == allowed) return true;
    HttpReply r = error_reply(405, std::string(method) + " is not allowed on " + std::string(path) +
                                       " (use " + std::string(allowed) + ")");
    r.allow = std::string(allowed);
    reply(std::move(r));
    return false;
  };

  if (parts.size() == 1 && parts[0] == "metrics") {
    if (!only("GET")) return;
    HttpReply r = json_reply(200, metrics_.render());
    r.content_type = "text/plain; version=0.0.4; charset=utf-8";
    return reply(std::move(r));
  }
  if (parts.empty() || parts[0] != "v2") {
    return reply(error_reply(
        404, "no endpoint at '" + std::string(path) + "' (the KServe v2 API is under /v2)"));
  }
  if (parts.size() == 1) {
    if (!only("GET")) return;
    return reply(json_reply(200, "{\"name\":\"infer\",\"version\":\"" INFER_VERSION
                                 "\",\"extensions\":[\"binary_tensor_data\"]}"));
  }
  if (parts[1] == "health" && parts.size() == 3 && (parts[2] == "live" || parts[2] == "ready")) {
    if (!only("GET")) return;
    if (parts[2] == "live") return reply(json_reply(200, "{\"live\":true}"));
    if (state_.ready.load()) return reply(json_reply(200, "{\"ready\":true}"));
    return reply(error_reply(
        503, state_.stopping.load() ? "the server is stopping" : "the models are still loading"));
  }
  if (parts[1] == "models" && parts.size() >= 3) {
    const std::string name(parts[2]);
    size_t next = 3;
    std::string version;
    if (parts.size() >= 5 && parts[3] == "versions") {
      version = std::string(parts[4]);
      next = 5;
    }
    const std::string_view action = parts.size() > next ? parts[next] : std::string_view();
    if (parts.size() <= next + 1 && (action.empty() || action == "ready" || action == "infer")) {
      Result<ServedModel*> found = models_.find(name, version);
      if (!found.is_ok()) return reply(error_reply(found.status()));
      ServedModel& model = *found.value();
      if (action.empty()) {
        if (!only("GET")) return;
        return reply(json_reply(200, model_metadata(model, models_.versions(name))));
      }
      if (action == "ready") {
        if (!only("GET")) return;
        const bool ready = state_.ready.load();
        std::string out =
            "{\"name\":" + json_string(name) + ",\"ready\":" + (ready ? "true" : "false") + "}";
        return reply(json_reply(ready ? 200 : 503, std::move(out)));
      }
      if (!only("POST")) return;
      return infer(model, header_length, std::move(body), std::move(reply));
    }
  }
  reply(error_reply(404, "no endpoint at '" + std::string(path) + "'"));
}

void V2Router::infer(ServedModel& model, std::optional<size_t> header_length,
                     std::shared_ptr<std::string> body, ReplyFn reply) const {
  const TimePoint received = Clock::now();
  ModelMetrics& metrics = model.metrics();
  auto finish = [&metrics, received](const ReplyFn& reply, HttpReply r) {
    const Outcome outcome = outcome_of(r.status);
    metrics.count(outcome);
    if (outcome == Outcome::kSuccess) metrics.request_seconds.observe(seconds_since(received));
    reply(std::move(r));
  };
  if (state_.stopping.load()) {
    return finish(reply,
                  error_reply(503, "the server is stopping: not accepting new inference requests"));
  }
  const std::string_view bytes(*body);
  Result<InferRequest> parsed = parse_infer_request(bytes, header_length, body);
  if (!parsed.is_ok()) return finish(reply, error_reply(parsed.status()));
  InferRequest request = std::move(parsed).value();
  std::string id = request.id;
  std::vector<RequestedOutput> requested = request.outputs;
  const bool binary_default = request.binary_data_output;
  ServedModel* m = &model;
  model.infer(std::move(request), [m, finish, reply, id, requested, binary_default](
                                      const Status& status, std::vector<NamedTensor> outputs) {
    if (!status.is_ok()) return finish(reply, error_reply(status));
    // The requested outputs in the order asked for, or every output in the model's order.
    std::vector<ResponseOutput> chosen;
    if (requested.empty()) {
      for (NamedTensor& out : outputs)
        chosen.push_back(ResponseOutput{out.name, std::move(out.tensor), binary_default});
    } else {
      for (const RequestedOutput& want : requested) {
        for (NamedTensor& out : outputs) {
          if (out.name == want.name) {
            chosen.push_back(
                ResponseOutput{out.name, out.tensor, want.binary_data.value_or(binary_default)});
          }
        }
      }
    }
    Result<EncodedResponse> encoded = encode_infer_response(m->name(), m->version(), id, chosen);
    if (!encoded.is_ok()) return finish(reply, error_reply(encoded.status()));
    HttpReply r = json_reply(200, std::move(encoded.value().body));
    r.header_length = encoded.value().header_length;
    if (r.header_length) r.content_type = "application/octet-stream";
    finish(reply, std::move(r));
  });
}

}  // namespace infer::serve
