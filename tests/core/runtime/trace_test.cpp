// The run trace (SessionOptions::trace_path): valid Chrome trace JSON with one named
// track per device queue, intervals that never overlap on a track, and - the point of
// micro-batching - a pipelined run on the example discrete device whose trace shows the
// upload of micro-batch i+1 running while micro-batch i computes. The overlap is read
// from the trace's intervals, not from wall time.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "mini_json.hpp"
#include "onnx_model_writer.hpp"
#include "runtime/trace.hpp"
#include "session_fixture.hpp"

namespace infer {
namespace {

using cli::testing::JsonParser;
using cli::testing::JsonValue;
using testing::OnnxModelWriter;
using testing::tree_options;

constexpr int64_t kK = 256;  // features: big enough that a micro-batch's compute takes a while

std::vector<float> weights(int seed) {
  std::vector<float> w(kK * kK);
  for (int64_t i = 0; i < kK * kK; ++i)
    w[i] = 0.004f * static_cast<float>((i * 13 + seed) % 17) - 0.03f;
  return w;
}

// x[batch,256] -> Relu(x @ W1) @ W2 -> y: all on the example device.
std::string write_device_model() {
  OnnxModelWriter w;
  w.input("x", {-1, kK}, {"batch"});
  w.initializer("W1", {kK, kK}, weights(1));
  w.initializer("W2", {kK, kK}, weights(2));
  w.node("mm1", "MatMul", {"x", "W1"}, {"a"});
  w.node("relu", "Relu", {"a"}, {"h"});
  w.node("mm2", "MatMul", {"h", "W2"}, {"y"});
  w.output("y", {-1, kK}, {"batch"});
  const std::string path = testing::temp_path("infer_trace_device.onnx");
  EXPECT_TRUE(w.save(path));
  return path;
}

// x[batch,4] -> Relu(x @ W) (example) -> Softmax (cpu) -> * x (example) -> y.
std::string write_mixed_model() {
  OnnxModelWriter w;
  w.input("x", {-1, 4}, {"batch"});
  std::vector<float> wv(16);
  for (int i = 0; i < 16; ++i) wv[i] = 0.25f * static_cast<float>(i % 5) - 0.5f;
  w.initializer("W", {4, 4}, wv);
  w.node("mm", "MatMul", {"x", "W"}, {"a"});
  w.node("relu", "Relu", {"a"}, {"r"});
  auto* sm = w.node("softmax", "Softmax", {"r"}, {"s"});
  OnnxModelWriter::int_attr(sm, "axis", -1);
  w.node("mul", "Mul", {"s", "x"}, {"y"});
  w.output("y", {-1, 4}, {"batch"});
  const std::string path = testing::temp_path("infer_trace_mixed.onnx");
  EXPECT_TRUE(w.save(path));
  return path;
}

Tensor input(int64_t batch, int64_t features, float phase) {
  Tensor t = Tensor::zeros(DataType::kFloat32, {batch, features});
  float* p = t.mutable_data_as<float>();
  for (int64_t i = 0; i < batch * features; ++i) p[i] = std::sin(0.3f * static_cast<float>(i) + phase);
  return t;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// One "X" event of the trace.
struct Interval {
  std::string name, category, track, process;
  double ts = 0, dur = 0;
  int64_t run = -1, micro_batch = -1, bytes = -1;
  double end() const { return ts + dur; }
};

// ts and dur are printed in microseconds with 3 decimals; each rounding moves an end by
// at most 0.0005 us.
constexpr double kRounding = 0.002;

bool overlap(const Interval& a, const Interval& b) {
  return a.ts + kRounding < b.end() && b.ts + kRounding < a.end();
}

// Parses the trace and checks its structure: the envelope, metadata naming every process
// and track used, unique track names within a process, and no two intervals overlapping
// on one track. Returns the intervals.
std::vector<Interval> parse_trace(const std::string& text) {
  std::vector<Interval> out;
  std::optional<JsonValue> doc = JsonParser::parse(text);
  EXPECT_TRUE(doc.has_value()) << "the trace is not valid JSON";
  if (!doc) return out;
  const JsonValue* events = doc->get("traceEvents");
  EXPECT_TRUE(events != nullptr && events->is_array());
  if (events == nullptr || !events->is_array()) return out;

  std::map<int, std::string> processes;
  std::map<std::pair<int, int>, std::string> tracks;
  std::vector<std::pair<std::pair<int, int>, Interval>> xs;
  for (const JsonValue& e : events->array) {
    const JsonValue* ph = e.get("ph");
    const JsonValue* pid = e.get("pid");
    const JsonValue* tid = e.get("tid");
    const JsonValue* name = e.get("name");
    EXPECT_TRUE(ph && ph->is_string() && pid && pid->is_number() && tid && tid->is_number() && name &&
                name->is_string());
    if (!(ph && pid && tid && name)) continue;
    const std::pair<int, int> key{static_cast<int>(pid->number), static_cast<int>(tid->number)};
    const JsonValue* args = e.get("args");
    if (ph->string == "M") {
      const JsonValue* value = args ? args->get("name") : nullptr;
      const bool named = value != nullptr && value->is_string();
      if (name->string == "process_name") {
        EXPECT_TRUE(named);
        if (named) {
          EXPECT_TRUE(processes.emplace(key.first, value->string).second) << "process named twice";
        }
      } else if (name->string == "thread_name") {
        EXPECT_TRUE(named);
        if (named) {
          EXPECT_TRUE(tracks.emplace(key, value->string).second) << "track named twice";
        }
      }
      continue;
    }
    EXPECT_EQ(ph->string, "X");
    Interval i;
    i.name = name->string;
    const JsonValue* cat = e.get("cat");
    const JsonValue* ts = e.get("ts");
    const JsonValue* dur = e.get("dur");
    EXPECT_TRUE(cat && cat->is_string() && ts && ts->is_number() && dur && dur->is_number() && args &&
                args->is_object());
    if (!(cat && ts && dur && args)) continue;
    i.category = cat->string;
    i.ts = ts->number;
    i.dur = dur->number;
    EXPECT_GE(i.dur, 0.0) << i.name;
    auto number = [&](const char* key) -> int64_t {
      const JsonValue* v = args->get(key);
      return v && v->is_number() ? static_cast<int64_t>(v->number) : -1;
    };
    i.run = number("run");
    i.micro_batch = number("micro_batch");
    i.bytes = number("bytes");
    EXPECT_GE(i.run, 0) << i.name;
    xs.emplace_back(key, i);
  }

  std::set<std::pair<int, std::string>> names_in_process;
  for (const auto& [key, track] : tracks)
    EXPECT_TRUE(names_in_process.emplace(key.first, track).second)
        << "two tracks of one process are both named '" << track << "'";
  std::map<std::pair<int, int>, std::vector<Interval>> by_track;
  for (auto& [key, i] : xs) {
    EXPECT_TRUE(processes.count(key.first)) << "unnamed process " << key.first;
    EXPECT_TRUE(tracks.count(key)) << "unnamed track " << key.first << "/" << key.second;
    i.process = processes[key.first];
    i.track = tracks[key];
    by_track[key].push_back(i);
    out.push_back(i);
  }
  for (auto& [key, list] : by_track) {
    std::sort(list.begin(), list.end(), [](const Interval& a, const Interval& b) { return a.ts < b.ts; });
    for (size_t k = 1; k < list.size(); ++k)
      EXPECT_GE(list[k].ts + kRounding, list[k - 1].end())
          << "'" << list[k - 1].name << "' and '" << list[k].name << "' overlap on track '"
          << list[k].track << "'";
  }
  return out;
}

const Interval* find(const std::vector<Interval>& all, const std::string& category,
                     const std::string& name_prefix, int64_t micro_batch) {
  const Interval* found = nullptr;
  for (const Interval& i : all)
    if (i.category == category && i.name.rfind(name_prefix, 0) == 0 && i.micro_batch == micro_batch) {
      EXPECT_EQ(found, nullptr) << "two intervals '" << name_prefix << "' in micro-batch " << micro_batch;
      found = &i;
    }
  return found;
}

TEST(TraceTest, PipelinedRunShowsTheUploadOfTheNextMicroBatchOverlappingCompute) {
  const std::string model = write_device_model();
  const std::string trace = testing::temp_path("infer_trace_pipelined.json");
  std::remove(trace.c_str());
  constexpr int kMicro = 4;
  constexpr int64_t kBatch = 4 * 96;

  SessionOptions o = tree_options({"example"});
  o.micro_batches = kMicro;
  o.trace_path = trace;
  // Each copy batch takes 1 ms on the example's copy engine, about what a micro-batch's
  // two 96x256x256 matrix products take, so neither hides the other in the trace.
  o.backend_options = {{"example", {{"copy_latency_us", "1000"}}}};
  auto session = Session::create(model, o);
  ASSERT_TRUE(session.is_ok()) << session.status().message();
  ASSERT_EQ((*session)->plan().partitions.size(), 1u);
  ASSERT_EQ((*session)->plan().partitions[0].backend, "example");
  const std::string part = (*session)->plan().partitions[0].name;

  const Tensor x = input(kBatch, kK, 0.25f);
  RunStats stats;
  auto split = (*session)->run({{"x", x}}, &stats);
  ASSERT_TRUE(split.is_ok()) << split.status().message();
  EXPECT_EQ(stats.micro_batches, static_cast<size_t>(kMicro));
  ASSERT_TRUE((*session)->write_trace().is_ok());

  // The split run gives exactly what an unsplit run gives: the example's kernels compute
  // each row on its own.
  auto whole_session = Session::create(model, tree_options({"example"}));
  ASSERT_TRUE(whole_session.is_ok());
  auto whole = (*whole_session)->run({{"x", x}});
  ASSERT_TRUE(whole.is_ok()) << whole.status().message();
  ASSERT_EQ((*split)[0].tensor.shape(), (std::vector<int64_t>{kBatch, kK}));
  EXPECT_EQ(std::memcmp((*split)[0].tensor.data(), (*whole)[0].tensor.data(),
                        (*whole)[0].tensor.size_bytes()),
            0);

  const std::vector<Interval> all = parse_trace(read_file(trace));
  std::set<std::string> example_tracks;
  for (const Interval& i : all) {
    EXPECT_EQ(i.run, 0);
    if (i.process == "example") example_tracks.insert(i.track);
  }
  // Each step's micro-batches queue behind each other, so every queue needs one track.
  EXPECT_EQ(example_tracks,
            (std::set<std::string>{"example compute", "example copy h2d", "example copy d2h"}));

  int overlaps = 0;
  for (int m = 0; m < kMicro; ++m) {
    const Interval* up = find(all, "copy", "copy 'x' (host -> example)", m);
    const Interval* compute = find(all, "compute", part, m);
    const Interval* down = find(all, "copy", "copy 'y' (example -> host)", m);
    ASSERT_TRUE(up && compute && down) << "micro-batch " << m << " is missing a step";
    EXPECT_EQ(up->track, "example copy h2d");
    EXPECT_EQ(compute->track, "example compute");
    EXPECT_EQ(down->track, "example copy d2h");
    EXPECT_EQ(up->bytes, 96 * kK * 4);
    // Causality: compute starts once its input has arrived, the download once the
    // compute is done.
    EXPECT_GE(compute->ts + kRounding, up->end()) << m;
    EXPECT_GE(down->ts + kRounding, compute->end()) << m;
    if (m + 1 < kMicro) {
      const Interval* next_up = find(all, "copy", "copy 'x' (host -> example)", m + 1);
      const Interval* next_compute = find(all, "compute", part, m + 1);
      ASSERT_TRUE(next_up && next_compute);
      // Micro-batch order on each queue.
      EXPECT_GE(next_up->ts + kRounding, up->end()) << m;
      EXPECT_GE(next_compute->ts + kRounding, compute->end()) << m;
      if (overlap(*next_up, *compute)) ++overlaps;
    }
  }
  EXPECT_GE(overlaps, 1) << "no upload of micro-batch i+1 overlaps the compute of micro-batch i";
}

TEST(TraceTest, ConcurrentRunsAreAllRecordedOnValidTracks) {
  const std::string model = write_mixed_model();
  const std::string trace = testing::temp_path("infer_trace_concurrent.json");
  std::remove(trace.c_str());
  SessionOptions o = tree_options({"example", "cpu"});
  o.trace_path = trace;
  o.backend_options = {{"example", {{"copy_latency_us", "100"}}}};
  constexpr int kThreads = 4;
  constexpr int kRuns = 10;
  {
    auto session = Session::create(model, o);
    ASSERT_TRUE(session.is_ok()) << session.status().message();
    ASSERT_EQ((*session)->plan().partitions.size(), 3u);
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        for (int r = 0; r < kRuns; ++r)
          if (!(*session)->run({{"x", input(1 + t, 4, static_cast<float>(t))}}).is_ok()) ++failures;
      });
    for (auto& th : threads) th.join();
    EXPECT_EQ(failures.load(), 0);
    // No write_trace: destroying the session writes what it recorded.
  }
  const std::vector<Interval> all = parse_trace(read_file(trace));
  std::map<int64_t, int> computes, copies;
  std::set<std::string> processes;
  for (const Interval& i : all) {
    (i.category == "compute" ? computes : copies)[i.run]++;
    processes.insert(i.process);
    EXPECT_EQ(i.micro_batch, -1);
    // Tracks are the queue's name, or a numbered lane of it when runs overlapped there.
    const std::string base = i.track.substr(0, i.track.find(" #"));
    if (i.category == "compute") {
      EXPECT_EQ(base, i.process + " compute");
    }
  }
  EXPECT_EQ(processes, (std::set<std::string>{"cpu", "example"}));
  ASSERT_EQ(computes.size(), static_cast<size_t>(kThreads * kRuns));
  for (int64_t run = 0; run < kThreads * kRuns; ++run) {
    EXPECT_EQ(computes[run], 3) << run;  // example, cpu, example
    EXPECT_EQ(copies[run], 4) << run;    // x up, r down, s up, y down
  }
}

TEST(TraceRecorderTest, OverlapsGoToLanesNamesAreEscapedAndTheCapHolds) {
  using runtime::TraceClock;
  using runtime::TraceInterval;
  runtime::TraceRecorder empty("unused.json");
  const std::vector<Interval> none = parse_trace(empty.to_json());
  EXPECT_TRUE(none.empty());

  // Capacity 3: the first run's 3 intervals are kept, the second run's 2 are dropped.
  runtime::TraceRecorder rec("unused.json", 3);
  const TraceClock::time_point t0 = TraceClock::now();
  auto at = [&](int us) { return t0 + std::chrono::microseconds(us); };
  auto make = [&](std::string queue, std::string name, int from, int to) {
    TraceInterval i;
    i.device = "dev";
    i.queue = std::move(queue);
    i.category = "compute";
    i.name = std::move(name);
    i.start = at(from);
    i.end = at(to);
    return i;
  };
  rec.record({make("dev compute", "a \"quoted\"\\name\n", 0, 10), make("dev compute", "b", 5, 15),
              make("dev compute", "c", 10, 20)});
  rec.record({make("dev compute", "d", 30, 40), make("dev compute", "e", 30, 40)});
  const std::string json = rec.to_json();
  const std::vector<Interval> all = parse_trace(json);
  ASSERT_EQ(all.size(), 3u);
  std::map<std::string, std::string> track_of;
  for (const Interval& i : all) track_of[i.name] = i.track;
  // b overlaps a, so it takes a second lane; c starts when a ends and reuses the first.
  EXPECT_EQ(track_of["a \"quoted\"\\name\n"], "dev compute");
  EXPECT_EQ(track_of["b"], "dev compute #2");
  EXPECT_EQ(track_of["c"], "dev compute");
  EXPECT_NE(json.find("\"dropped_intervals\":\"2\""), std::string::npos) << json;
  for (const Interval& i : all) EXPECT_EQ(i.dur, 10.0) << i.name;
}

TEST(TraceTest, WriteTraceNeedsATracePath) {
  auto session = Session::create(write_mixed_model(), tree_options({"cpu"}));
  ASSERT_TRUE(session.is_ok()) << session.status().message();
  const Status s = (*session)->write_trace();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "write_trace: no trace_path was set");

  SessionOptions o = tree_options({"cpu"});
  o.trace_path = "/nonexistent-dir/trace.json";
  auto unwritable = Session::create(write_mixed_model(), o);
  ASSERT_TRUE(unwritable.is_ok()) << unwritable.status().message();
  const Status w = (*unwritable)->write_trace();
  EXPECT_EQ(w.code(), StatusCode::kUnavailable);
  EXPECT_EQ(w.message(), "trace: cannot open '/nonexistent-dir/trace.json' for writing");
}

}  // namespace
}  // namespace infer
