#include "runtime/trace.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <tuple>
#include <utility>

namespace infer::runtime {
namespace {

void append_escaped(std::string& out, const std::string& s) {
  out += '"';
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out += buf;
        } else {
          out += ch;
        }
    }
  }
  out += '"';
}

// Microseconds with nanosecond resolution: the unit of the format's "ts" and "dur".
std::string micros(int64_t ns) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.3f", static_cast<double>(ns) / 1000.0);
  return buf;
}

int64_t ns_between(TraceClock::time_point from, TraceClock::time_point to) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(to - from).count();
}

void metadata(std::string& out, const char* what, int pid, int tid, const std::string& key,
              const std::string& value) {
  out += "{\"name\":\"";
  out += what;
  out += "\",\"ph\":\"M\",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) +
         ",\"args\":{";
  append_escaped(out, key);
  out += ':';
  out += value;
  out += "}},\n";
}

}  // namespace

TraceRecorder::TraceRecorder(std::string path, size_t max_intervals)
    : path_(std::move(path)), max_intervals_(max_intervals), epoch_(TraceClock::now()) {}

void TraceRecorder::record(std::vector<TraceInterval> intervals) {
  std::lock_guard lock(mu_);
  dirty_ = true;
  if (intervals_.size() + intervals.size() > max_intervals_) {
    dropped_ += intervals.size();
    return;
  }
  for (TraceInterval& i : intervals) intervals_.push_back(std::move(i));
}

bool TraceRecorder::dirty() const {
  std::lock_guard lock(mu_);
  return dirty_;
}

std::string TraceRecorder::to_json() const {
  std::vector<TraceInterval> all;
  size_t dropped = 0;
  {
    std::lock_guard lock(mu_);
    all = intervals_;
    dropped = dropped_;
  }
  return render(std::move(all), dropped);
}

std::string TraceRecorder::render(std::vector<TraceInterval> all, size_t dropped) const {
  std::stable_sort(all.begin(), all.end(), [](const TraceInterval& a, const TraceInterval& b) {
    return std::tie(a.start, a.end) < std::tie(b.start, b.end);
  });

  // Processes (devices) and their tracks, numbered in name order so that the same plan
  // always gives the same ids; the host comes last.
  std::map<std::pair<bool, std::string>, int> pids;
  for (const TraceInterval& i : all) pids.emplace(std::make_pair(i.device == "host", i.device), 0);
  int next_pid = 1;
  for (auto& [key, pid] : pids) pid = next_pid++;

  // Lanes: the first lane of the queue whose last interval ended by this one's start.
  std::map<std::pair<std::string, std::string>, std::vector<TraceClock::time_point>> lane_ends;
  std::vector<size_t> lane_of(all.size());
  for (size_t k = 0; k < all.size(); ++k) {
    std::vector<TraceClock::time_point>& ends = lane_ends[{all[k].device, all[k].queue}];
    size_t lane = 0;
    while (lane < ends.size() && ends[lane] > all[k].start) ++lane;
    if (lane == ends.size()) ends.emplace_back();
    ends[lane] = all[k].end;
    lane_of[k] = lane;
  }
  std::map<std::tuple<std::string, std::string, size_t>, int> tids;
  for (const auto& [key, ends] : lane_ends)
    for (size_t lane = 0; lane < ends.size(); ++lane) tids.emplace(std::tuple(key.first, key.second, lane), 0);
  std::map<std::string, int> next_tid;
  for (auto& [key, tid] : tids) tid = ++next_tid[std::get<0>(key)];

  std::string out = "{\"traceEvents\":[\n";
  for (const auto& [key, pid] : pids) {
    std::string name;
    append_escaped(name, key.second);
    metadata(out, "process_name", pid, 0, "name", name);
    metadata(out, "process_sort_index", pid, 0, "sort_index", std::to_string(pid));
  }
  for (const auto& [key, tid] : tids) {
    const auto& [device, queue, lane] = key;
    const int pid = pids.at({device == "host", device});
    std::string name;
    append_escaped(name, lane == 0 ? queue : queue + " #" + std::to_string(lane + 1));
    metadata(out, "thread_name", pid, tid, "name", name);
    metadata(out, "thread_sort_index", pid, tid, "sort_index", std::to_string(tid));
  }
  for (size_t k = 0; k < all.size(); ++k) {
    const TraceInterval& i = all[k];
    const int pid = pids.at({i.device == "host", i.device});
    const int tid = tids.at({i.device, i.queue, lane_of[k]});
    out += "{\"name\":";
    append_escaped(out, i.name);
    out += ",\"cat\":";
    append_escaped(out, i.category);
    out += ",\"ph\":\"X\",\"ts\":" + micros(ns_between(epoch_, i.start)) +
           ",\"dur\":" + micros(std::max<int64_t>(0, ns_between(i.start, i.end))) +
           ",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) +
           ",\"args\":{\"run\":" + std::to_string(i.run);
    if (i.micro_batch >= 0) out += ",\"micro_batch\":" + std::to_string(i.micro_batch);
    if (i.bytes >= 0) out += ",\"bytes\":" + std::to_string(i.bytes);
    out += "}},\n";
  }
  // Every element above ends in ",\n"; the array must not end in a comma.
  if (out.ends_with(",\n")) out.resize(out.size() - 2);
  // How to read the times, where the format keeps data for the reader's eyes only.
  out +=
      "\n],\"displayTimeUnit\":\"ms\",\"otherData\":{"
      "\"clock\":\"host steady clock, microseconds since the session was created\","
      "\"start\":\"when the host began enqueueing the step, or learned that everything it "
      "waits for had completed, whichever is later\","
      "\"end\":\"when the step's completion reached the host\","
      "\"dropped_intervals\":\"" +
      std::to_string(dropped) + "\"}}\n";
  return out;
}

Status TraceRecorder::write() {
  std::vector<TraceInterval> all;
  size_t dropped = 0;
  {
    std::lock_guard lock(mu_);
    all = intervals_;
    dropped = dropped_;
    dirty_ = false;
  }
  const std::string json = render(std::move(all), dropped);
  std::ofstream f(path_, std::ios::binary | std::ios::trunc);
  if (!f) return unavailable("trace: cannot open '" + path_ + "' for writing");
  f << json;
  f.close();
  if (!f) return unavailable("trace: cannot write '" + path_ + "'");
  return Status::ok();
}

}  // namespace infer::runtime
