#include "served_model.hpp"

#include <sched.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

namespace infer::serve {

struct ServedModel::Job : BatchItem {
  std::vector<NamedTensor> inputs;  // in the model's declared order
  Completion done;
  TimePoint received;
};

namespace {

double seconds_between(TimePoint a, TimePoint b) {
  return std::chrono::duration<double>(b - a).count();
}

std::string dims_text(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

std::string v2_name(DataType dtype) {
  const std::string_view n = v2_datatype(dtype);
  return n.empty() ? std::string(dtype_name(dtype)) : std::string(n);
}

// Zeros of the declared shape, symbolic dims as 1: the warm-up input.
Tensor warmup_tensor(const TensorInfo& info) {
  std::vector<int64_t> shape = info.dims;
  for (int64_t& d : shape) {
    if (d < 0) d = 1;
  }
  return Tensor::zeros(info.dtype, shape);
}

bool batchable(const TensorInfo& info) {
  return info.rank_known && !info.dims.empty() && info.dims[0] < 0;
}

}  // namespace

int available_cpus() {
  int cpus = static_cast<int>(std::thread::hardware_concurrency());
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) cpus = CPU_COUNT(&set);
  double quota = 0;
  std::ifstream v2("/sys/fs/cgroup/cpu.max");
  std::string max_text;
  double period = 0;
  if (v2 >> max_text >> period && max_text != "max" && period > 0) {
    quota = std::stod(max_text) / period;
  } else {
    std::ifstream q("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"),
        p("/sys/fs/cgroup/cpu/cpu.cfs_period_us");
    double qv = -1, pv = 0;
    if (q >> qv && p >> pv && qv > 0 && pv > 0) quota = qv / pv;
  }
  if (quota > 0) cpus = std::min(cpus, std::max(1, static_cast<int>(std::ceil(quota))));
  return std::max(1, cpus);
}

ServedModel::ServedModel(ModelSettings settings, ModelMetrics& metrics)
    : settings_(std::move(settings)), metrics_(metrics) {}

ServedModel::~ServedModel() { stop(); }

Result<std::unique_ptr<ServedModel>> ServedModel::load(ModelSettings settings,
                                                       ModelMetrics& metrics) {
  const auto start = Clock::now();
  const std::string where = "model '" + settings.name + "'" +
                            (settings.source.empty() ? "" : " (" + settings.source + ")");
  std::unique_ptr<ServedModel> model(new ServedModel(std::move(settings), metrics));
  ModelSettings& s = model->settings_;
  for (int i = 0; i < s.instances; ++i) {
    Result<std::unique_ptr<Session>> session = Session::create(s.model_path, s.session);
    if (!session.is_ok()) return session.status().with_context(where);
    model->sessions_.push_back(std::move(session).value());
  }
  const Session& first = *model->sessions_.front();
  if (s.batching.max_batch_size > 0) {
    // A batch is split back by dim 0, so every input and output must have the same
    // symbolic dim 0: a fixed size, another symbol, or an output whose dim 0 is some
    // other dim (a transpose) would hand one request another's rows.
    const std::string batch_dim = first.inputs().empty() || first.inputs()[0].dim_params.empty()
                                      ? std::string()
                                      : first.inputs()[0].dim_params[0];
    for (const std::vector<TensorInfo>* list : {&first.inputs(), &first.outputs()}) {
      for (const TensorInfo& info : *list) {
        const bool same = batchable(info) && !info.dim_params.empty() && !batch_dim.empty() &&
                          info.dim_params[0] == batch_dim;
        if (!same) {
          return invalid_argument(
              where + ": batching.max_batch_size is " + std::to_string(s.batching.max_batch_size) +
              " but " + (list == &first.inputs() ? "input '" : "output '") + info.name +
              "' has shape " + info.shape_string() + ", whose dim 0 is not the batch dim" +
              (batch_dim.empty() ? std::string() : " '" + batch_dim + "'") +
              " shared by every input and output; set max_batch_size: 0");
        }
      }
    }
    if (s.batching.preferred_batch_sizes.empty())
      s.batching.preferred_batch_sizes = {s.batching.max_batch_size};
  }
  // Warm-up: the first run of a session pays for its arenas and kernel selection; a
  // model is ready only after each instance has run once.
  for (size_t i = 0; i < model->sessions_.size(); ++i) {
    std::vector<NamedTensor> feeds;
    for (const TensorInfo& info : first.inputs())
      feeds.push_back(NamedTensor{info.name, warmup_tensor(info)});
    Result<std::vector<NamedTensor>> out = model->sessions_[i]->run(feeds);
    if (!out.is_ok())
      return out.status().with_context(where + ": the warm-up run (zeros, symbolic dims 1) failed");
  }
  ServedModel* self = model.get();
  model->batcher_ = std::make_unique<DynamicBatcher>(
      s.batching, s.instances,
      [self](int instance, std::vector<ItemPtr> batch) {
        self->execute(instance, std::move(batch));
      },
      [self](const ItemPtr& item, const Status& why) {
        auto* job = static_cast<Job*>(item.get());
        self->metrics_.inflight.fetch_sub(1);
        job->done(why, {});
      });
  metrics.queue_depth = [self] { return self->batcher_ ? self->batcher_->queue_depth() : 0; };
  metrics.load_seconds = seconds_between(start, Clock::now());
  return model;
}

Status ServedModel::check(const InferRequest& request, int64_t& rows,
                          std::string& shape_key) const {
  const std::vector<TensorInfo>& declared = inputs();
  std::string expected_names;
  for (const TensorInfo& info : declared)
    expected_names += (expected_names.empty() ? "" : ", ") + info.name;
  for (const NamedTensor& given : request.inputs) {
    bool known = false;
    for (const TensorInfo& info : declared) known = known || info.name == given.name;
    if (!known) {
      return invalid_argument("input '" + given.name + "' is not an input of model '" + name() +
                              "' (its inputs: " + expected_names + ")");
    }
  }
  rows = 1;
  shape_key.clear();
  const bool batching = max_batch_size() > 0;
  for (const TensorInfo& info : declared) {
    const NamedTensor* given = nullptr;
    for (const NamedTensor& t : request.inputs) {
      if (t.name == info.name) given = &t;
    }
    if (given == nullptr)
      return invalid_argument("input '" + info.name + "' is missing (model '" + name() +
                              "' needs " + expected_names + ")");
    const Tensor& t = given->tensor;
    if (t.dtype() != info.dtype) {
      return invalid_argument("input '" + info.name + "' is " + v2_name(t.dtype()) +
                              " but model '" + name() + "' expects " + v2_name(info.dtype));
    }
    bool fits = !info.rank_known || t.shape().size() == info.dims.size();
    for (size_t d = 0; fits && info.rank_known && d < info.dims.size(); ++d) {
      fits = info.dims[d] < 0 || info.dims[d] == t.shape()[d];
    }
    if (!fits) {
      return invalid_argument("input '" + info.name + "' has shape " + dims_text(t.shape()) +
                              " but model '" + name() + "' expects " + info.shape_string());
    }
    if (batching) {
      const int64_t r = t.shape()[0];
      if (&info == &declared.front()) rows = r;
      if (r != rows) {
        return invalid_argument("input '" + info.name + "' has " + std::to_string(r) +
                                " rows in dim 0 but another input has " + std::to_string(rows) +
                                ": every input of a request carries the same batch");
      }
      // Requests join a batch only when every input agrees beyond dim 0.
      shape_key += dims_text(std::vector<int64_t>(t.shape().begin() + 1, t.shape().end())) + ";";
    }
  }
  if (batching) {
    if (rows < 1)
      return invalid_argument(
          "the request's batch (dim 0 of its inputs) is 0; at least 1 row is needed");
    if (rows > max_batch_size()) {
      return invalid_argument("the request's batch of " + std::to_string(rows) +
                              " rows exceeds model '" + name() + "''s batching.max_batch_size of " +
                              std::to_string(max_batch_size()));
    }
  }
  for (const RequestedOutput& out : request.outputs) {
    bool known = false;
    for (const TensorInfo& info : outputs()) known = known || info.name == out.name;
    if (!known) {
      std::string names;
      for (const TensorInfo& info : outputs()) names += (names.empty() ? "" : ", ") + info.name;
      return invalid_argument("output '" + out.name + "' is not an output of model '" + name() +
                              "' (its outputs: " + names + ")");
    }
  }
  return Status::ok();
}

void ServedModel::infer(InferRequest request, Completion done) {
  auto job = std::make_shared<Job>();
  job->received = Clock::now();
  Status ok = check(request, job->rows, job->shape_key);
  if (!ok.is_ok()) {
    done(ok, {});
    return;
  }
  // The declared order, so that a batch joins input k of every request.
  for (const TensorInfo& info : inputs()) {
    for (NamedTensor& t : request.inputs) {
      if (t.name == info.name) job->inputs.push_back(std::move(t));
    }
  }
  if (request.timeout_us)
    job->deadline = job->received + std::chrono::microseconds(*request.timeout_us);
  job->done = std::move(done);
  metrics_.inflight.fetch_add(1);
  ItemPtr item = job;
  if (batcher_->run_now(item)) return;
  Status queued = batcher_->submit(std::move(item));
  if (!queued.is_ok()) {
    metrics_.inflight.fetch_sub(1);
    job->done(queued.with_context("model '" + name() + "'"), {});
  }
}

void ServedModel::execute(int instance, std::vector<ItemPtr> batch) {
  const TimePoint start = Clock::now();
  std::vector<Job*> jobs;
  int64_t total_rows = 0;
  for (const ItemPtr& item : batch) {
    jobs.push_back(static_cast<Job*>(item.get()));
    total_rows += jobs.back()->rows;
  }
  // One request runs on its own tensors; a batch joins each input along dim 0, which for
  // row-major tensors is the concatenation of their bytes.
  std::vector<NamedTensor> feeds;
  if (jobs.size() == 1) {
    feeds = jobs.front()->inputs;
  } else {
    for (size_t k = 0; k < inputs().size(); ++k) {
      std::vector<int64_t> shape = jobs.front()->inputs[k].tensor.shape();
      shape[0] = total_rows;
      Tensor joined = Tensor::zeros(jobs.front()->inputs[k].tensor.dtype(), shape);
      auto* dst = static_cast<uint8_t*>(joined.mutable_data());
      for (Job* job : jobs) {
        const Tensor& t = job->inputs[k].tensor;
        std::memcpy(dst, t.data(), t.size_bytes());
        dst += t.size_bytes();
      }
      feeds.push_back(NamedTensor{inputs()[k].name, std::move(joined)});
    }
  }
  Result<std::vector<NamedTensor>> result = sessions_[static_cast<size_t>(instance)]->run(feeds);
  const TimePoint end = Clock::now();
  metrics_.batch_size.observe(static_cast<double>(max_batch_size() > 0 ? total_rows : 1));

  Status failed = result.is_ok() ? Status::ok() : result.status();
  if (failed.is_ok() && jobs.size() > 1) {
    for (const NamedTensor& out : result.value()) {
      const std::vector<int64_t>& shape = out.tensor.shape();
      if (shape.empty() || shape[0] != total_rows) {
        failed = internal_error(
            "output '" + out.name + "' has shape " + dims_text(shape) + ", not the batch's " +
            std::to_string(total_rows) +
            " rows in dim 0, so it cannot be split between the requests; serve this model "
            "with batching.max_batch_size: 0");
        break;
      }
    }
  }
  if (!failed.is_ok()) failed = failed.with_context("model '" + name() + "'");
  int64_t row = 0;
  for (Job* job : jobs) {
    metrics_.queue_seconds.observe(seconds_between(job->enqueued, start));
    metrics_.compute_seconds.observe(seconds_between(start, end));
    std::vector<NamedTensor> mine;
    if (failed.is_ok() && jobs.size() == 1) {
      mine = std::move(result).value();
    } else if (failed.is_ok()) {
      // Each request's rows are a contiguous byte range of every output; the slices
      // borrow the batch's output and keep it alive.
      for (const NamedTensor& out : result.value()) {
        std::vector<int64_t> shape = out.tensor.shape();
        const size_t row_bytes = out.tensor.size_bytes() / static_cast<size_t>(total_rows);
        shape[0] = job->rows;
        Result<Tensor> slice =
            Tensor::borrow(out.tensor.dtype(), shape,
                           static_cast<const uint8_t*>(out.tensor.data()) + row * row_bytes,
                           row_bytes * static_cast<size_t>(job->rows), out.tensor.keep_alive());
        mine.push_back(NamedTensor{out.name, slice.is_ok() ? std::move(slice).value() : Tensor()});
      }
    }
    row += job->rows;
    metrics_.inflight.fetch_sub(1);
    job->done(failed, std::move(mine));
  }
}

void ServedModel::stop_accepting() {
  if (batcher_) batcher_->stop_accepting();
}

bool ServedModel::drain(std::chrono::milliseconds timeout) {
  return !batcher_ || batcher_->drain(timeout);
}

void ServedModel::stop() {
  if (batcher_) batcher_->stop();
}

std::string ServedModel::describe() const {
  std::ostringstream s;
  s << name() << " v" << version() << ": backends ";
  const std::vector<std::string> active = backends();
  for (size_t i = 0; i < active.size(); ++i) s << (i ? "," : "") << active[i];
  s << ", " << settings_.instances << (settings_.instances == 1 ? " instance" : " instances")
    << " x " << settings_.session.threads
    << (settings_.session.threads == 1 ? " thread" : " threads");
  const BatchingPolicy& b = settings_.batching;
  if (b.max_batch_size == 0) {
    s << ", batching off";
  } else {
    s << ", batching max " << b.max_batch_size << ", preferred [";
    for (size_t i = 0; i < b.preferred_batch_sizes.size(); ++i)
      s << (i ? "," : "") << b.preferred_batch_sizes[i];
    s << "], delay " << b.max_queue_delay.count() << " us";
  }
  s << ", queue " << b.max_queue_size;
  if (b.default_timeout.count() > 0) s << ", timeout " << b.default_timeout.count() << " us";
  return s.str();
}

}  // namespace infer::serve
