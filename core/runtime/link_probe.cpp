#include "runtime/link_probe.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

namespace infer::runtime {
namespace {

constexpr int kCacheVersion = 1;
constexpr size_t kSmallCopy = 4 << 10;
constexpr size_t kBigCopy = 4 << 20;
// The smallest large copy worth fitting a bandwidth on; a device with less memory than
// four times this is not measured.
constexpr size_t kMinBigCopy = 64 << 10;
constexpr int kSmallRepetitions = 8;
constexpr int kBigRepetitions = 3;

// ---- A JSON reader for the cache's own format: objects, strings and numbers (anything
// else is skipped over). The cache is written by write_link_cache only, but a person may
// edit it, so errors name the file and the offset.
struct Json {
  enum class Kind { kObject, kString, kNumber, kOther } kind = Kind::kOther;
  std::map<std::string, Json> members;
  std::string text;
  double number = 0;
};

class JsonReader {
 public:
  explicit JsonReader(const std::string& s) : s_(s) {}

  Result<Json> document() {
    INFER_ASSIGN_OR_RETURN(Json v, value(0));
    skip_space();
    if (pos_ != s_.size()) return fail("unexpected text after the JSON value");
    return v;
  }

 private:
  Status fail(const std::string& what) const {
    return invalid_argument(what + " at offset " + std::to_string(pos_));
  }
  void skip_space() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool eat(char c) {
    skip_space();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  Result<std::string> string() {
    if (!eat('"')) return fail("expected a string");
    std::string out;
    while (pos_ < s_.size() && s_[pos_] != '"') {
      char c = s_[pos_++];
      if (c == '\\') {
        if (pos_ >= s_.size()) break;
        const char e = s_[pos_++];
        switch (e) {
          case 'n': c = '\n'; break;
          case 't': c = '\t'; break;
          case 'r': c = '\r'; break;
          case 'b': c = '\b'; break;
          case 'f': c = '\f'; break;
          case 'u': {
            // Keys are device names and options; code points above ASCII are kept as '?'.
            if (pos_ + 4 > s_.size()) return fail("truncated \\u escape");
            const unsigned long code = std::strtoul(s_.substr(pos_, 4).c_str(), nullptr, 16);
            pos_ += 4;
            c = code < 0x80 ? static_cast<char>(code) : '?';
            break;
          }
          default: c = e;
        }
      }
      out += c;
    }
    if (pos_ >= s_.size()) return fail("unterminated string");
    ++pos_;
    return out;
  }

  Result<Json> value(int depth) {
    if (depth > 32) return fail("nesting too deep");
    skip_space();
    if (pos_ >= s_.size()) return fail("unexpected end of file");
    Json v;
    const char c = s_[pos_];
    if (c == '{') {
      ++pos_;
      v.kind = Json::Kind::kObject;
      if (eat('}')) return v;
      do {
        INFER_ASSIGN_OR_RETURN(std::string key, string());
        if (!eat(':')) return fail("expected ':'");
        INFER_ASSIGN_OR_RETURN(Json member, value(depth + 1));
        v.members[key] = std::move(member);
      } while (eat(','));
      if (!eat('}')) return fail("expected ',' or '}'");
      return v;
    }
    if (c == '[') {
      ++pos_;
      if (eat(']')) return v;
      do {
        INFER_ASSIGN_OR_RETURN(Json ignored, value(depth + 1));
        (void)ignored;
      } while (eat(','));
      if (!eat(']')) return fail("expected ',' or ']'");
      return v;
    }
    if (c == '"') {
      v.kind = Json::Kind::kString;
      INFER_ASSIGN_OR_RETURN(v.text, string());
      return v;
    }
    for (const char* word : {"true", "false", "null"}) {
      const std::string w(word);
      if (s_.compare(pos_, w.size(), w) == 0) {
        pos_ += w.size();
        return v;
      }
    }
    const char* begin = s_.c_str() + pos_;
    char* end = nullptr;
    v.number = std::strtod(begin, &end);
    if (end == begin) return fail("expected a value");
    pos_ += static_cast<size_t>(end - begin);
    v.kind = Json::Kind::kNumber;
    return v;
  }

  const std::string& s_;
  size_t pos_ = 0;
};

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\u%04x", u);
      out += esc;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string json_number(double v) {
  char text[64];
  std::snprintf(text, sizeof text, "%.17g", v);
  return text;
}

// One direction of an entry: {"bandwidth_bytes_per_us": ..., "latency_us": ...}.
Result<partitioner::LinkCost> read_direction(const Json& entry, const std::string& key,
                                             const std::string& direction) {
  const std::string where = "entry '" + key + "': '" + direction + "'";
  auto it = entry.members.find(direction);
  if (it == entry.members.end() || it->second.kind != Json::Kind::kObject)
    return invalid_argument(where + " is missing or not an object");
  const auto& m = it->second.members;
  auto bw = m.find("bandwidth_bytes_per_us");
  auto lat = m.find("latency_us");
  if (bw == m.end() || bw->second.kind != Json::Kind::kNumber || !(bw->second.number > 0) ||
      !std::isfinite(bw->second.number))
    return invalid_argument(where + ": 'bandwidth_bytes_per_us' must be a positive number");
  if (lat == m.end() || lat->second.kind != Json::Kind::kNumber || !(lat->second.number >= 0) ||
      !std::isfinite(lat->second.number))
    return invalid_argument(where + ": 'latency_us' must be a number >= 0");
  return partitioner::LinkCost{bw->second.number, lat->second.number};
}

std::string direction_json(const partitioner::LinkCost& c) {
  return "{\"bandwidth_bytes_per_us\": " + json_number(c.bandwidth_bytes_per_us) +
         ", \"latency_us\": " + json_number(c.latency_us) + "}";
}

// The fastest of `reps` copies of `bytes` one way, in microseconds, each waited for.
Result<double> fastest_copy(const host::Stream& stream, const host::Event& event,
                            uint64_t& counter, const infer_copy_region& region, int reps) {
  double best = -1;
  for (int r = 0; r < reps; ++r) {
    const auto start = std::chrono::steady_clock::now();
    INFER_RETURN_IF_ERROR(stream.copy({&region, 1}));
    INFER_RETURN_IF_ERROR(stream.signal(event, ++counter));
    INFER_RETURN_IF_ERROR(event.wait(counter));
    const double us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
            .count();
    if (best < 0 || us < best) best = us;
  }
  return best;
}

// latency + bytes / bandwidth through (small, t_small) and (big, t_big).
partitioner::LinkCost fit(size_t small, double t_small, size_t big, double t_big) {
  partitioner::LinkCost c;
  const double dt = t_big - t_small;
  // Timer noise can make the big copy look no slower than the small one; the big copy's
  // average rate is then the honest bandwidth, and all the time is latency.
  c.bandwidth_bytes_per_us = dt > 0 ? static_cast<double>(big - small) / dt
                                    : static_cast<double>(big) / std::max(t_big, 1e-3);
  c.latency_us = std::max(0.0, t_small - static_cast<double>(small) / c.bandwidth_bytes_per_us);
  return c;
}

}  // namespace

LinkCacheSetting link_cache_setting() {
  LinkCacheSetting s;
  if (const char* env = std::getenv("INFER_LINK_CACHE"); env != nullptr && *env != '\0') {
    if (std::string(env) == "off") {
      s.enabled = false;
    } else {
      s.path = env;
    }
    return s;
  }
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    s.path = std::string(xdg) + "/infer/links.json";
  } else if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    s.path = std::string(home) + "/.cache/infer/links.json";
  }
  return s;
}

std::string link_cache_key(const std::string& backend, const std::string& device_name,
                           const std::vector<std::pair<std::string, std::string>>& options) {
  std::vector<std::pair<std::string, std::string>> sorted = options;
  std::sort(sorted.begin(), sorted.end());
  std::string key = backend + "|" + device_name + "|";
  for (size_t i = 0; i < sorted.size(); ++i)
    key += (i ? "," : "") + sorted[i].first + "=" + sorted[i].second;
  return key;
}

Result<std::map<std::string, LinkFigures>> read_link_cache(const std::string& path) {
  std::map<std::string, LinkFigures> entries;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) return entries;
    return invalid_argument("link cache '" + path + "': cannot be read");
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  const std::string where = "link cache '" + path + "': ";
  Result<Json> doc = JsonReader(text).document();
  if (!doc.is_ok()) return invalid_argument(where + doc.status().message());
  if (doc->kind != Json::Kind::kObject) return invalid_argument(where + "expected an object");
  auto version = doc->members.find("version");
  if (version == doc->members.end() || version->second.kind != Json::Kind::kNumber ||
      version->second.number != kCacheVersion)
    return invalid_argument(where + "expected \"version\": " + std::to_string(kCacheVersion));
  auto links = doc->members.find("links");
  if (links == doc->members.end() || links->second.kind != Json::Kind::kObject)
    return invalid_argument(where + "expected a \"links\" object");
  for (const auto& [key, entry] : links->second.members) {
    if (entry.kind != Json::Kind::kObject)
      return invalid_argument(where + "entry '" + key + "' is not an object");
    LinkFigures f;
    Result<partitioner::LinkCost> h2d = read_direction(entry, key, "host_to_device");
    if (!h2d.is_ok()) return invalid_argument(where + h2d.status().message());
    Result<partitioner::LinkCost> d2h = read_direction(entry, key, "device_to_host");
    if (!d2h.is_ok()) return invalid_argument(where + d2h.status().message());
    f.host_to_device = *h2d;
    f.device_to_host = *d2h;
    entries[key] = f;
  }
  return entries;
}

Status write_link_cache(const std::string& path,
                        const std::map<std::string, LinkFigures>& entries) {
  const std::filesystem::path file(path);
  std::error_code ec;
  if (file.has_parent_path()) {
    std::filesystem::create_directories(file.parent_path(), ec);
    if (ec)
      return unavailable("link cache '" + path + "': cannot create its folder: " + ec.message());
  }
  std::string text = "{\n  \"version\": " + std::to_string(kCacheVersion) + ",\n  \"links\": {";
  bool first = true;
  for (const auto& [key, f] : entries) {
    text += std::string(first ? "" : ",") + "\n    " + json_string(key) +
            ": {\n      \"host_to_device\": " + direction_json(f.host_to_device) +
            ",\n      \"device_to_host\": " + direction_json(f.device_to_host) + "\n    }";
    first = false;
  }
  text += "\n  }\n}\n";
  // A temporary name of this process next to the file, renamed over it: rename is atomic
  // within a file system, so readers see the old or the new file, never a mix.
  const std::string temp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) {
      std::filesystem::remove(temp, ec);
      return unavailable("link cache '" + path + "': cannot write '" + temp + "'");
    }
  }
  std::filesystem::rename(temp, file, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(temp, ignored);
    return unavailable("link cache '" + path + "': cannot replace it: " + ec.message());
  }
  return Status::ok();
}

Result<LinkFigures> measure_link(const host::Device& device) {
  size_t big = kBigCopy;
  const uint64_t memory = device.props().memory_bytes;
  if (memory > 0) big = std::min<size_t>(big, static_cast<size_t>(memory / 4));
  if (big < kMinBigCopy)
    return unavailable(device.describe() + ": too little device memory to measure the link");
  INFER_ASSIGN_OR_RETURN(host::Buffer buffer, device.allocate(INFER_MEMORY_DEVICE_LOCAL, big));
  std::vector<uint8_t> host(big, 0x5a);
  INFER_ASSIGN_OR_RETURN(host::Stream stream, device.create_stream());
  INFER_ASSIGN_OR_RETURN(host::Event event, device.create_event());
  uint64_t counter = 0;

  auto direction = [&](bool to_device) -> Result<partitioner::LinkCost> {
    auto region = [&](size_t bytes) {
      return to_device ? host::host_to_device_region(host.data(), buffer, 0, bytes)
                       : host::device_to_host_region(buffer, 0, host.data(), bytes);
    };
    // One copy first: the first use of a stream or buffer may set things up.
    INFER_RETURN_IF_ERROR(fastest_copy(stream, event, counter, region(kSmallCopy), 1).status());
    INFER_ASSIGN_OR_RETURN(double t_small,
                           fastest_copy(stream, event, counter, region(kSmallCopy), kSmallRepetitions));
    INFER_ASSIGN_OR_RETURN(double t_big,
                           fastest_copy(stream, event, counter, region(big), kBigRepetitions));
    return fit(kSmallCopy, t_small, big, t_big);
  };
  LinkFigures f;
  INFER_ASSIGN_OR_RETURN(f.host_to_device, direction(true));
  INFER_ASSIGN_OR_RETURN(f.device_to_host, direction(false));
  return f;
}

std::optional<LinkFigures> plugin_link_estimate(const host::Device& device) {
  Result<host::CopyCost> h2d = device.copy_cost(INFER_COPY_HOST_TO_DEVICE);
  Result<host::CopyCost> d2h = device.copy_cost(INFER_COPY_DEVICE_TO_HOST);
  if (!h2d.is_ok() || !d2h.is_ok()) return std::nullopt;
  auto usable = [](const host::CopyCost& c) {
    return c.known && c.can_copy && c.bandwidth_bytes_per_us > 0 && c.latency_us >= 0 &&
           std::isfinite(c.bandwidth_bytes_per_us) && std::isfinite(c.latency_us);
  };
  if (!usable(*h2d) || !usable(*d2h)) return std::nullopt;
  return LinkFigures{{h2d->bandwidth_bytes_per_us, h2d->latency_us},
                     {d2h->bandwidth_bytes_per_us, d2h->latency_us}};
}

std::optional<LinkFigures> link_figures(
    const std::string& backend, const host::Device& device,
    const std::vector<std::pair<std::string, std::string>>& options, const Logger& log) {
  const LinkCacheSetting setting = link_cache_setting();
  if (!setting.enabled) return plugin_link_estimate(device);
  const std::string key = link_cache_key(backend, device.props().name, options);
  std::map<std::string, LinkFigures> cache;
  if (!setting.path.empty()) {
    Result<std::map<std::string, LinkFigures>> read = read_link_cache(setting.path);
    if (read.is_ok()) {
      cache = std::move(*read);
      if (auto it = cache.find(key); it != cache.end()) return it->second;
    } else {
      // A broken cache is rewritten below with what is measured now.
      log.log(LogLevel::kWarning, read.status().message() + "; measuring again");
    }
  }
  Result<LinkFigures> measured = measure_link(device);
  if (!measured.is_ok()) {
    log.log(LogLevel::kWarning, "backend '" + backend + "': measuring the link failed (" +
                                    measured.status().message() +
                                    "); the partitioner uses the plugin's estimate");
    return plugin_link_estimate(device);
  }
  log.log(LogLevel::kDebug,
          "backend '" + backend + "': link measured: host to device " +
              json_number(measured->host_to_device.bandwidth_bytes_per_us) + " bytes/us + " +
              json_number(measured->host_to_device.latency_us) + " us, device to host " +
              json_number(measured->device_to_host.bandwidth_bytes_per_us) + " bytes/us + " +
              json_number(measured->device_to_host.latency_us) + " us");
  if (!setting.path.empty()) {
    cache[key] = *measured;
    Status written = write_link_cache(setting.path, cache);
    if (!written.is_ok()) log.log(LogLevel::kDebug, written.message());
  }
  return *measured;
}

}  // namespace infer::runtime
