// The link between the host and a device the host cannot address: its bandwidth and
// latency each way, measured once per device (a 4 KiB and a 4 MiB copy each way through
// the plugin host) and cached on disk, so that later sessions start without measuring.
//
// The cache is a JSON file: $INFER_LINK_CACHE when set, else
// $XDG_CACHE_HOME/infer/links.json, else $HOME/.cache/infer/links.json. Setting
// INFER_LINK_CACHE to "off" disables it entirely: no file is read or written, nothing is
// measured, and the partitioner gets the plugin's own copy_cost estimate (the cheap and
// reproducible choice, e.g. for tests).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "infer/status.hpp"
#include "partitioner/capability.hpp"
#include "plugin_host/device.hpp"
#include "runtime/logger.hpp"

namespace infer::runtime {

struct LinkFigures {
  partitioner::LinkCost host_to_device;
  partitioner::LinkCost device_to_host;
};

struct LinkCacheSetting {
  bool enabled = true;  // false: INFER_LINK_CACHE=off
  std::string path;     // "" when enabled but no location is known (no HOME): measure only
};

// From the environment, as described above.
LinkCacheSetting link_cache_setting();

// The cache key of a device: the backend name, the device's name and the options the
// plugin was given ("example|example discrete device|copy_latency_us=200"): options may
// change the link (a simulated latency, another device index).
std::string link_cache_key(const std::string& backend, const std::string& device_name,
                           const std::vector<std::pair<std::string, std::string>>& options);

// A missing file is an empty cache. A file that is not a cache of this format is
// InvalidArgument naming the file and what was wrong.
Result<std::map<std::string, LinkFigures>> read_link_cache(const std::string& path);
// Creates the folder if needed and replaces the file atomically (a temporary file renamed
// over it), so that a concurrent reader never sees half a file.
Status write_link_cache(const std::string& path,
                        const std::map<std::string, LinkFigures>& entries);

// Times copies of 4 KiB and 4 MiB (less on a device with little memory) each way, keeps
// the fastest of a few repetitions, and fits latency + bytes / bandwidth through the two
// points. Errors: the device cannot allocate or copy (Unavailable, from the plugin).
Result<LinkFigures> measure_link(const host::Device& device);

// The plugin's copy_cost answers, when it gives them for both directions.
std::optional<LinkFigures> plugin_link_estimate(const host::Device& device);

// The figures the partitioner uses for `device`: the cache's, else measured now (and
// stored), else the plugin's estimate; nullopt when none is known. Problems with the
// cache or the measurement are logged, never fatal: the link figures only steer the
// cost model.
std::optional<LinkFigures> link_figures(
    const std::string& backend, const host::Device& device,
    const std::vector<std::pair<std::string, std::string>>& options, const Logger& log);

}  // namespace infer::runtime
