#include "grpc_server.hpp"

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstring>

#include "grpc_inference.grpc.pb.h"
#include "v2_protocol.hpp"

#ifndef INFER_VERSION
#define INFER_VERSION "0"
#endif

namespace infer::serve {
namespace {

grpc::Status to_grpc(const Status& status) {
  switch (status.code()) {
    case StatusCode::kOk:
      return grpc::Status::OK;
    case StatusCode::kInvalidArgument:
      return {grpc::StatusCode::INVALID_ARGUMENT, status.message()};
    case StatusCode::kNotFound:
      return {grpc::StatusCode::NOT_FOUND, status.message()};
    case StatusCode::kUnavailable:
      return {grpc::StatusCode::UNAVAILABLE, status.message()};
    case StatusCode::kUnsupported:
      return {grpc::StatusCode::UNIMPLEMENTED, status.message()};
    case StatusCode::kCancelled:
      return {grpc::StatusCode::CANCELLED, status.message()};
    default:
      return {grpc::StatusCode::INTERNAL, status.message()};
  }
}

Outcome outcome_of(const Status& status) {
  switch (status.code()) {
    case StatusCode::kOk:
      return Outcome::kSuccess;
    case StatusCode::kUnavailable:
      return Outcome::kRejected;
    case StatusCode::kInvalidArgument:
    case StatusCode::kNotFound:
    case StatusCode::kUnsupported:
      return Outcome::kBadRequest;
    default:
      return Outcome::kFailed;
  }
}

template <typename T, typename Field>
Result<Tensor> typed_tensor(DataType dtype, const std::vector<int64_t>& shape, const Field& values,
                            int64_t count, const std::string& where, const char* field_name) {
  if (static_cast<int64_t>(values.size()) != count) {
    return invalid_argument(where + ": contents." + field_name + " holds " +
                            std::to_string(values.size()) + " values but the shape has " +
                            std::to_string(count) + " elements");
  }
  Tensor t = Tensor::zeros(dtype, shape);
  T* out = t.mutable_data_as<T>();
  for (int64_t i = 0; i < count; ++i) {
    const auto v = values.Get(static_cast<int>(i));
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      if (v < static_cast<decltype(v)>(std::numeric_limits<T>::min()) ||
          v > static_cast<decltype(v)>(std::numeric_limits<T>::max())) {
        return invalid_argument(where + ": contents." + field_name + "[" + std::to_string(i) +
                                "] is " + std::to_string(v) + ", outside the range of " +
                                std::string(v2_datatype(dtype)));
      }
    }
    out[i] = static_cast<T>(v);
  }
  return t;
}

Result<Tensor> contents_tensor(DataType dtype, const std::vector<int64_t>& shape, int64_t count,
                               const inference::InferTensorContents& c, const std::string& where) {
  switch (dtype) {
    case DataType::kBool:
      return typed_tensor<bool>(dtype, shape, c.bool_contents(), count, where, "bool_contents");
    case DataType::kInt8:
      return typed_tensor<int8_t>(dtype, shape, c.int_contents(), count, where, "int_contents");
    case DataType::kInt16:
      return typed_tensor<int16_t>(dtype, shape, c.int_contents(), count, where, "int_contents");
    case DataType::kInt32:
      return typed_tensor<int32_t>(dtype, shape, c.int_contents(), count, where, "int_contents");
    case DataType::kInt64:
      return typed_tensor<int64_t>(dtype, shape, c.int64_contents(), count, where,
                                   "int64_contents");
    case DataType::kUInt8:
      return typed_tensor<uint8_t>(dtype, shape, c.uint_contents(), count, where, "uint_contents");
    case DataType::kUInt16:
      return typed_tensor<uint16_t>(dtype, shape, c.uint_contents(), count, where, "uint_contents");
    case DataType::kUInt32:
      return typed_tensor<uint32_t>(dtype, shape, c.uint_contents(), count, where, "uint_contents");
    case DataType::kUInt64:
      return typed_tensor<uint64_t>(dtype, shape, c.uint64_contents(), count, where,
                                    "uint64_contents");
    case DataType::kFloat32:
      return typed_tensor<float>(dtype, shape, c.fp32_contents(), count, where, "fp32_contents");
    case DataType::kFloat64:
      return typed_tensor<double>(dtype, shape, c.fp64_contents(), count, where, "fp64_contents");
    default:
      return invalid_argument(where + ": " + std::string(v2_datatype(dtype)) +
                              " data has no typed contents field; send it in raw_input_contents");
  }
}

// The gRPC request in the form the models take, checked like the HTTP body.
Result<InferRequest> from_grpc(const inference::ModelInferRequest& in) {
  InferRequest request;
  request.id = in.id();
  if (const auto it = in.parameters().find("timeout"); it != in.parameters().end()) {
    if (it->second.parameter_choice_case() != inference::InferParameter::kInt64Param ||
        it->second.int64_param() < 0) {
      return invalid_argument(
          "the request: parameter 'timeout' must be an int64_param >= 0 (microseconds)");
    }
    if (it->second.int64_param() > 0) request.timeout_us = it->second.int64_param();
  }
  const bool raw = in.raw_input_contents_size() > 0;
  if (raw && in.raw_input_contents_size() != in.inputs_size()) {
    return invalid_argument("raw_input_contents has " +
                            std::to_string(in.raw_input_contents_size()) + " entries for " +
                            std::to_string(in.inputs_size()) +
                            " inputs: when used it holds every input's data, in order");
  }
  for (int i = 0; i < in.inputs_size(); ++i) {
    const auto& input = in.inputs(i);
    const std::string where = "input '" + input.name() + "'";
    if (input.name().empty())
      return invalid_argument("inputs[" + std::to_string(i) + "] has no name");
    for (const NamedTensor& seen : request.inputs) {
      if (seen.name == input.name()) return invalid_argument(where + " is given twice");
    }
    const std::optional<DataType> dtype = dtype_from_v2(input.datatype());
    if (!dtype) {
      return invalid_argument(
          where + ": datatype '" + input.datatype() +
          "' is not one infer serves (BOOL, UINT8..UINT64, INT8..INT64, FP16, BF16, FP32, FP64)");
    }
    std::vector<int64_t> shape(input.shape().begin(), input.shape().end());
    int64_t count = 1;
    for (int64_t d : shape) {
      if (d < 0)
        return invalid_argument(where + ": shape dims must be >= 0, got " + std::to_string(d));
      if (d != 0 && count > (int64_t{1} << 40) / d)
        return invalid_argument(where + ": the shape has too many elements");
      count *= d;
    }
    if (raw) {
      if (input.has_contents())
        return invalid_argument(where + " has contents although raw_input_contents is used");
      const std::string& bytes = in.raw_input_contents(i);
      if (bytes.size() != storage_bytes(*dtype, count)) {
        return invalid_argument(where + ": raw_input_contents[" + std::to_string(i) + "] has " +
                                std::to_string(bytes.size()) + " bytes but " + input.datatype() +
                                " of this shape needs " +
                                std::to_string(storage_bytes(*dtype, count)));
      }
      INFER_ASSIGN_OR_RETURN(Tensor t,
                             Tensor::from_bytes(*dtype, shape, bytes.data(), bytes.size()));
      request.inputs.push_back(NamedTensor{input.name(), std::move(t)});
    } else {
      INFER_ASSIGN_OR_RETURN(Tensor t,
                             contents_tensor(*dtype, shape, count, input.contents(), where));
      request.inputs.push_back(NamedTensor{input.name(), std::move(t)});
    }
  }
  for (const auto& out : in.outputs()) {
    for (const RequestedOutput& seen : request.outputs) {
      if (seen.name == out.name())
        return invalid_argument("output '" + out.name() + "' is requested twice");
    }
    request.outputs.push_back(RequestedOutput{out.name(), std::nullopt});
  }
  return request;
}

void set_tensor_metadata(inference::ModelMetadataResponse::TensorMetadata* out,
                         const TensorInfo& info) {
  out->set_name(info.name);
  const std::string_view dt = v2_datatype(info.dtype);
  out->set_datatype(dt.empty() ? std::string(dtype_name(info.dtype)) : std::string(dt));
  for (int64_t d : info.dims) out->add_shape(d < 0 ? -1 : d);
}

class Service final : public inference::GRPCInferenceService::CallbackService {
 public:
  Service(const ModelTable& models, ServerState& state) : models_(models), state_(state) {}

  grpc::ServerUnaryReactor* ServerLive(grpc::CallbackServerContext* context,
                                       const inference::ServerLiveRequest*,
                                       inference::ServerLiveResponse* response) override {
    response->set_live(true);
    return finish(context, grpc::Status::OK);
  }

  grpc::ServerUnaryReactor* ServerReady(grpc::CallbackServerContext* context,
                                        const inference::ServerReadyRequest*,
                                        inference::ServerReadyResponse* response) override {
    response->set_ready(state_.ready.load());
    return finish(context, grpc::Status::OK);
  }

  grpc::ServerUnaryReactor* ModelReady(grpc::CallbackServerContext* context,
                                       const inference::ModelReadyRequest* request,
                                       inference::ModelReadyResponse* response) override {
    Result<ServedModel*> model = models_.find(request->name(), request->version());
    if (!model.is_ok()) return finish(context, to_grpc(model.status()));
    response->set_ready(state_.ready.load());
    return finish(context, grpc::Status::OK);
  }

  grpc::ServerUnaryReactor* ServerMetadata(grpc::CallbackServerContext* context,
                                           const inference::ServerMetadataRequest*,
                                           inference::ServerMetadataResponse* response) override {
    response->set_name("infer");
    response->set_version(INFER_VERSION);
    return finish(context, grpc::Status::OK);
  }

  grpc::ServerUnaryReactor* ModelMetadata(grpc::CallbackServerContext* context,
                                          const inference::ModelMetadataRequest* request,
                                          inference::ModelMetadataResponse* response) override {
    Result<ServedModel*> found = models_.find(request->name(), request->version());
    if (!found.is_ok()) return finish(context, to_grpc(found.status()));
    const ServedModel& model = *found.value();
    response->set_name(model.name());
    for (const std::string& v : models_.versions(model.name())) response->add_versions(v);
    response->set_platform("onnx_onnxv1");
    for (const TensorInfo& info : model.inputs()) set_tensor_metadata(response->add_inputs(), info);
    for (const TensorInfo& info : model.outputs())
      set_tensor_metadata(response->add_outputs(), info);
    return finish(context, grpc::Status::OK);
  }

  grpc::ServerUnaryReactor* ModelInfer(grpc::CallbackServerContext* context,
                                       const inference::ModelInferRequest* in,
                                       inference::ModelInferResponse* response) override {
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    Result<ServedModel*> found = models_.find(in->model_name(), in->model_version());
    if (!found.is_ok()) {
      reactor->Finish(to_grpc(found.status()));
      return reactor;
    }
    ServedModel* model = found.value();
    ModelMetrics& metrics = model->metrics();
    const auto received = Clock::now();
    auto answer = [reactor, &metrics, received](const Status& status) {
      metrics.count(outcome_of(status));
      if (status.is_ok()) {
        metrics.request_seconds.observe(
            std::chrono::duration<double>(Clock::now() - received).count());
      }
      reactor->Finish(to_grpc(status));
    };
    if (state_.stopping.load()) {
      answer(unavailable("the server is stopping: not accepting new inference requests"));
      return reactor;
    }
    Result<InferRequest> parsed = from_grpc(*in);
    if (!parsed.is_ok()) {
      answer(parsed.status());
      return reactor;
    }
    std::vector<RequestedOutput> requested = parsed.value().outputs;
    response->set_model_name(model->name());
    response->set_model_version(model->version());
    response->set_id(parsed.value().id);
    model->infer(
        std::move(parsed).value(),
        [answer, response, requested](const Status& status, std::vector<NamedTensor> outputs) {
          if (!status.is_ok()) return answer(status);
          auto add = [response](const NamedTensor& out) {
            auto* o = response->add_outputs();
            o->set_name(out.name);
            o->set_datatype(std::string(v2_datatype(out.tensor.dtype())));
            for (int64_t d : out.tensor.shape()) o->add_shape(d);
            response->add_raw_output_contents(static_cast<const char*>(out.tensor.data()),
                                              out.tensor.size_bytes());
          };
          for (const NamedTensor& out : outputs) {
            if (v2_datatype(out.tensor.dtype()).empty()) {
              return answer(unsupported("output '" + out.name + "' is " +
                                        std::string(dtype_name(out.tensor.dtype())) +
                                        ", which the v2 protocol cannot carry"));
            }
          }
          if (requested.empty()) {
            for (const NamedTensor& out : outputs) add(out);
          } else {
            for (const RequestedOutput& want : requested) {
              for (const NamedTensor& out : outputs) {
                if (out.name == want.name) add(out);
              }
            }
          }
          answer(Status::ok());
        });
    return reactor;
  }

 private:
  static grpc::ServerUnaryReactor* finish(grpc::CallbackServerContext* context,
                                          const grpc::Status& status) {
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    reactor->Finish(status);
    return reactor;
  }

  const ModelTable& models_;
  ServerState& state_;
};

}  // namespace

struct GrpcServer::Impl {
  Impl(GrpcSettings s, const ModelTable& m, ServerState& st)
      : settings(std::move(s)), service(m, st) {}
  GrpcSettings settings;
  Service service;
  std::unique_ptr<grpc::Server> server;
  int port = 0;
  bool stopped = false;
};

GrpcServer::GrpcServer(GrpcSettings settings, const ModelTable& models, ServerState& state)
    : impl_(std::make_unique<Impl>(std::move(settings), models, state)) {}

GrpcServer::~GrpcServer() { stop(); }

Status GrpcServer::start() {
  Impl& s = *impl_;
  const std::string address = s.settings.host + ":" + std::to_string(s.settings.port);
  grpc::ServerBuilder builder;
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &s.port);
  builder.RegisterService(&s.service);
  builder.SetMaxReceiveMessageSize(
      static_cast<int>(std::min<size_t>(s.settings.max_message_bytes, INT32_MAX)));
  builder.SetMaxSendMessageSize(-1);
  s.server = builder.BuildAndStart();
  if (!s.server || s.port == 0) {
    s.server.reset();
    return unavailable("cannot listen on gRPC address " + address +
                       " (in use, or not an address of this machine)");
  }
  return Status::ok();
}

int GrpcServer::port() const { return impl_->port; }

void GrpcServer::stop() {
  Impl& s = *impl_;
  if (s.stopped || !s.server) return;
  s.stopped = true;
  s.server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  s.server->Wait();
}

}  // namespace infer::serve
