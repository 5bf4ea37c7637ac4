// One served model: its sessions (instances), its dynamic batcher, the checks a request
// passes before it is queued, and the joining of a batch's inputs along dim 0 and the
// splitting of the outputs back to the requests.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "batcher.hpp"
#include "infer/infer.hpp"
#include "metrics.hpp"
#include "v2_protocol.hpp"

namespace infer::serve {

struct ModelSettings {
  std::string name;
  int64_t version = 1;
  std::string model_path;
  std::string source;      // the deployment file, for messages
  SessionOptions session;  // threads already sized per instance
  int instances = 1;
  BatchingPolicy batching;  // max_batch_size 0: off
};

// Called exactly once per request, on a batcher or worker thread (or at once, on the
// caller's thread, when the request is refused before queueing). On success `outputs`
// holds every model output in declaration order, for this request's rows only.
using Completion = std::function<void(const Status& status, std::vector<NamedTensor> outputs)>;

class ServedModel {
 public:
  // Creates the sessions, checks that batching fits the model (every input and output
  // needs a symbolic dim 0), runs one warm-up inference on each instance, and starts the
  // batcher. Errors name the model and the deployment file.
  static Result<std::unique_ptr<ServedModel>> load(ModelSettings settings, ModelMetrics& metrics);
  ~ServedModel();

  const std::string& name() const { return settings_.name; }
  std::string version() const { return std::to_string(settings_.version); }
  const std::vector<TensorInfo>& inputs() const { return sessions_.front()->inputs(); }
  const std::vector<TensorInfo>& outputs() const { return sessions_.front()->outputs(); }
  const ModelSettings& settings() const { return settings_; }
  std::vector<std::string> backends() const { return sessions_.front()->active_backends(); }
  ModelMetrics& metrics() const { return metrics_; }
  // max_batch_size when batching is on, else 0.
  int64_t max_batch_size() const { return settings_.batching.max_batch_size; }

  // Checks `request` against the model (input names, datatypes, shapes, requested
  // outputs, batch size) and queues it. `done` is called exactly once.
  void infer(InferRequest request, Completion done);

  // Shutdown in steps: refuse new requests, wait for queued and running ones, stop.
  void stop_accepting();
  bool drain(std::chrono::milliseconds timeout);
  void stop();

  // "digits v1: backends cpu, 2 instances x 1 thread, batching max 8, preferred [4,8], delay 500
  // us"
  std::string describe() const;

 private:
  struct Job;
  ServedModel(ModelSettings settings, ModelMetrics& metrics);
  Status check(const InferRequest& request, int64_t& rows, std::string& shape_key) const;
  void execute(int instance, std::vector<ItemPtr> batch);

  ModelSettings settings_;
  ModelMetrics& metrics_;
  std::vector<std::unique_ptr<Session>> sessions_;
  std::unique_ptr<DynamicBatcher> batcher_;
};

// The CPUs this process may use: the cgroup CPU quota (cgroup v2 cpu.max, or v1
// cfs_quota/period) rounded up, capped by the affinity mask; oneTBB itself does not read
// the quota.
int available_cpus();

}  // namespace infer::serve
