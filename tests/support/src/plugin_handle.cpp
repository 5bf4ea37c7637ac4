#include "infer/test_support/plugin_handle.hpp"

#include <dlfcn.h>

#include <algorithm>

#include "infer_test_paths.hpp"

namespace infer::test {

std::string plugin_path(const std::string& name) {
  return std::string(INFER_PLUGIN_DIR) + "/libinfer_plugin_" + name + ".so";
}

std::unique_ptr<PluginHandle> PluginHandle::load(const std::string& path, std::string* error,
                                                 const LoadOptions& options) {
  auto fail = [&](const std::string& why) -> std::unique_ptr<PluginHandle> {
    if (error) *error = "loading plugin '" + path + "': " + why;
    return nullptr;
  };
  std::unique_ptr<PluginHandle> h(new PluginHandle());
  h->host_ = std::make_unique<TestHost>(options.host_threads);
  // RTLD_LOCAL keeps the plugin's symbols out of the global namespace, as the host does.
  h->lib_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h->lib_ == nullptr) {
    const char* e = dlerror();
    return fail(e ? e : "dlopen failed");
  }
  void* sym = dlsym(h->lib_, INFER_PLUGIN_ENTRY_SYMBOL);
  if (sym == nullptr) return fail("no symbol " INFER_PLUGIN_ENTRY_SYMBOL);
  auto entry = reinterpret_cast<infer_plugin_entry_fn>(sym);
  h->api_ = entry(options.host_abi_major, options.host_abi_minor);
  if (h->api_ == nullptr) return fail("the entry point returned no API table");
  if (!options.create_instance) return h;
  if (h->api_->abi_major != options.host_abi_major)
    return fail("plugin ABI major " + std::to_string(h->api_->abi_major) + " != host's " +
                std::to_string(options.host_abi_major));
  if (h->api_->plugin_create == nullptr) return fail("plugin_create is NULL");
  StatusInfo st = take_status(h->api_->plugin_create(h->host_->services(), &h->plugin_));
  if (!st.ok()) {
    h->plugin_ = nullptr;
    return fail(std::string("plugin_create failed: ") + status_code_name(st.code) + ": " +
                st.message);
  }
  if (h->plugin_ == nullptr) return fail("plugin_create returned no plugin");
  return h;
}

PluginHandle::~PluginHandle() {
  if (plugin_ != nullptr && api_ != nullptr && api_->plugin_destroy != nullptr)
    api_->plugin_destroy(plugin_);
  if (lib_ != nullptr) dlclose(lib_);
}

std::vector<infer_device*> PluginHandle::devices() const {
  std::vector<infer_device*> out;
  if (plugin_ == nullptr || api_->get_devices == nullptr) return out;
  size_t count = 0;
  StatusInfo st = take_status(api_->get_devices(plugin_, nullptr, 0, &count));
  if (count == 0) return out;
  out.resize(count);
  st = take_status(api_->get_devices(plugin_, out.data(), out.size(), &count));
  if (!st.ok()) return {};
  out.resize(std::min(out.size(), count));
  return out;
}

infer_device* PluginHandle::device(size_t i) const {
  auto all = devices();
  return i < all.size() ? all[i] : nullptr;
}

}  // namespace infer::test
