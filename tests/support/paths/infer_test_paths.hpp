// Folders and programs of this checkout and build that the tests need. Their values live
// in one generated source file (tests/CMakeLists.txt writes paths.cpp into the build
// folder), not in -D flags: compile commands then hold no absolute path, so ccache (with
// base_dir = the source folder) reuses every test object in another clone of the
// repository, and only that one file is compiled again.
#pragma once

namespace infer::test_paths {

const char* source_dir();            // the repository's root
const char* binary_dir();            // the build folder
const char* plugin_dir();            // where infer_add_plugin puts the plugins
const char* run_binary();            // the built infer-run
const char* nm();                    // the toolchain's nm
const char* models_cache_dir();      // where the models_export fixture writes (tests/models)
const char* conformance_data_dir();  // the generated ONNX node cases (tests/conformance)
const char* fixture_plugin_dir();    // the plugin host's fixture plugins
const char* runtime_test_plugin_dir();  // tests/core/runtime's no-device plugin
const char* fake_libcuda_dir();         // tests/plugins/cuda's test doubles of libcuda

}  // namespace infer::test_paths

// The names the tests have always used.
#define INFER_SOURCE_DIR (::infer::test_paths::source_dir())
#define INFER_BINARY_DIR (::infer::test_paths::binary_dir())
#define INFER_PLUGIN_DIR (::infer::test_paths::plugin_dir())
#define INFER_PLUGIN_OUTPUT_DIR (::infer::test_paths::plugin_dir())
#define INFER_RUN_BINARY (::infer::test_paths::run_binary())
#define INFER_NM (::infer::test_paths::nm())
#define INFER_MODELS_CACHE_DIR (::infer::test_paths::models_cache_dir())
#define INFER_CONFORMANCE_DATA (::infer::test_paths::conformance_data_dir())
#define INFER_FIXTURE_PLUGIN_DIR (::infer::test_paths::fixture_plugin_dir())
