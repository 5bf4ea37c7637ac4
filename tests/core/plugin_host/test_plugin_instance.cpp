#include <gtest/gtest.h>

#include "plugin_host/graph_views.hpp"
#include "plugin_host/plugin_instance.hpp"
#include "plugin_host/plugin_registry.hpp"
#include "test_graphs.hpp"
#include "test_util.hpp"
#include "infer_test_paths.hpp"

namespace infer::host {
namespace {

using testing::fixture_path;
using testing::LogRecorder;

std::shared_ptr<PluginInstance> instance(const std::string& fixture, InstanceOptions options = {}) {
  auto lib = PluginLibrary::open(fixture_path(fixture));
  EXPECT_TRUE(lib.is_ok()) << lib.status().message();
  if (!lib.is_ok()) return nullptr;
  auto inst = PluginInstance::create(*lib, std::move(options));
  EXPECT_TRUE(inst.is_ok()) << inst.status().message();
  return inst.is_ok() ? *inst : nullptr;
}

TEST(PluginInstance, CreatesTheInstanceAndReadsItsDevices) {
  LogRecorder rec;
  InstanceOptions opts;
  opts.arena = std::make_shared<tbb::task_arena>(3);
  opts.log_sink = rec.sink();
  opts.options = {{"precision", "fp16"}};
  auto inst = instance("good", opts);
  ASSERT_TRUE(inst);
  EXPECT_EQ(inst->name(), "good");
  EXPECT_TRUE(inst->unavailable_reason().is_ok());
  ASSERT_EQ(inst->device_count(), 2u);
  auto devices = inst->devices();
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[1].index(), 1u);
  EXPECT_EQ(devices[0].props().name, "Fixture Device 0");
  EXPECT_EQ(devices[1].props().name, "Fixture Device 1");
  EXPECT_EQ(devices[0].props().vendor, "infer tests");
  EXPECT_EQ(devices[0].props().kind, INFER_DEVICE_CPU);
  EXPECT_EQ(devices[0].props().memory_bytes, uint64_t{1} << 30);
  EXPECT_EQ(devices[0].props().compute_units, 3u);  // the plugin asked num_threads
  EXPECT_TRUE(devices[0].props().host_addressable);
  EXPECT_EQ(devices[0].describe(), "good:0 (Fixture Device 0)");
  EXPECT_EQ(devices[0].plugin_name(), "good");
  EXPECT_EQ(rec.count(LogLevel::kInfo, "[good] fixture plugin created"), 1u);
  EXPECT_EQ(inst->services().option("precision").value_or(""), "fp16");
  EXPECT_FALSE(inst->device(2).valid());
}

TEST(PluginInstance, ZeroDevicesIsNotAnErrorAndKeepsTheReason) {
  auto inst = instance("nodevices");
  ASSERT_TRUE(inst);
  EXPECT_EQ(inst->device_count(), 0u);
  EXPECT_TRUE(inst->devices().empty());
  EXPECT_EQ(inst->unavailable_reason().code(), StatusCode::kUnavailable);
  EXPECT_EQ(inst->unavailable_reason().message(),
            "plugin 'nodevices': no fixture device: simulated missing driver");
}

TEST(PluginInstance, KeepsItsLibraryLoaded) {
  std::shared_ptr<PluginInstance> inst;
  {
    PluginRegistry reg([] {
      DiscoveryOptions o;
      o.search_dirs = {INFER_FIXTURE_PLUGIN_DIR};
      o.use_env_path = o.use_install_dir = false;
      return o;
    }());
    auto lib = reg.find("good");
    ASSERT_TRUE(lib.is_ok());
    auto created = PluginInstance::create(*lib);
    ASSERT_TRUE(created.is_ok());
    inst = *created;
  }
  // The registry and its reference are gone; calling into the plugin must still work.
  Device d = inst->device(0);
  auto stream = d.create_stream();
  EXPECT_TRUE(stream.is_ok());
}

TEST(PluginInstance, CapabilityAnswersComeFromNodeViews) {
  auto inst = instance("good");
  ASSERT_TRUE(inst);
  Device d = inst->device(0);

  ir::Model m = testing::add_relu_model();
  auto set = GraphViewSet::build(m);
  ASSERT_TRUE(set.is_ok()) << set.status().message();
  auto add = d.query_capability(*(*set)->node(0));
  ASSERT_TRUE(add.is_ok()) << add.status().message();
  EXPECT_EQ(add->support, INFER_SUPPORT_YES);
  EXPECT_EQ(add->est_time_us, -1);
  EXPECT_EQ(add->est_memory_bytes, -1);
  EXPECT_EQ(add->reason, "");
  auto relu = d.query_capability(*(*set)->node(1));
  ASSERT_TRUE(relu.is_ok());
  EXPECT_EQ(relu->support, INFER_SUPPORT_PREFERRED);
  EXPECT_TRUE(relu->supported());
  EXPECT_DOUBLE_EQ(relu->est_time_us, 1.5);
  EXPECT_EQ(relu->est_memory_bytes, 128);
  EXPECT_EQ(relu->reason, "fixture: relu at opset 13");

  ir::Model conv = testing::add_relu_model("Conv");
  auto set2 = GraphViewSet::build(conv);
  ASSERT_TRUE(set2.is_ok());
  auto no = d.query_capability(*(*set2)->node(1));
  ASSERT_TRUE(no.is_ok());
  EXPECT_EQ(no->support, INFER_SUPPORT_NO);
  EXPECT_FALSE(no->supported());
  EXPECT_EQ(no->reason, "fixture: unsupported op Conv");
}

TEST(PluginInstance, CapabilitySeesDtypes) {
  auto inst = instance("good");
  ASSERT_TRUE(inst);
  ir::Model m = testing::add_relu_model();
  m.graph->value(0).dtype = DataType::kInt64;  // x
  auto set = GraphViewSet::build(m);
  ASSERT_TRUE(set.is_ok());
  auto cap = inst->device(0).query_capability(*(*set)->node(0));
  ASSERT_TRUE(cap.is_ok());
  EXPECT_EQ(cap->support, INFER_SUPPORT_NO);
  EXPECT_EQ(cap->reason, "fixture: input 0 of add0 is not float32");
}

TEST(PluginInstance, ProposedGroupsAndTheirFallback) {
  ir::Model m = testing::add_relu_model();
  auto set = GraphViewSet::build(m);
  ASSERT_TRUE(set.is_ok());
  auto good = instance("good");
  ASSERT_TRUE(good);
  EXPECT_TRUE(good->device(0).can_propose_groups());
  auto groups = good->device(0).propose_groups(*(*set)->graph());
  ASSERT_TRUE(groups.is_ok()) << groups.status().message();
  EXPECT_EQ(*groups, (std::vector<std::vector<size_t>>{{0, 1}}));

  auto nulls = instance("nulls");
  ASSERT_TRUE(nulls);
  EXPECT_FALSE(nulls->device(0).can_propose_groups());
  auto none = nulls->device(0).propose_groups(*(*set)->graph());
  ASSERT_TRUE(none.is_ok());
  EXPECT_TRUE(none->empty());
}

TEST(PluginInstance, PrepackHandsOverHostMemory) {
  ir::Model m = testing::add_relu_model();
  auto set = GraphViewSet::build(m);
  ASSERT_TRUE(set.is_ok());
  auto good = instance("good");
  ASSERT_TRUE(good);
  Device d = good->device(0);
  ASSERT_TRUE(d.can_prepack());
  // The fixture's executables read const_data, so its packed form replaces nothing.
  EXPECT_FALSE(d.prepack_replaces_constants());
  auto packed = d.prepack_constant(*(*set)->node(0), 1);  // w
  ASSERT_TRUE(packed.is_ok()) << packed.status().message();
  ASSERT_TRUE(packed->has_value());
  ASSERT_EQ((*packed)->size, 4 * sizeof(float));
  const float* p = static_cast<const float*>((*packed)->data.get());
  EXPECT_EQ(std::vector<float>(p, p + 4),
            (std::vector<float>{2, -4, 6, -8}));            // the fixture doubles
  auto declined = d.prepack_constant(*(*set)->node(0), 0);  // x is not constant
  ASSERT_TRUE(declined.is_ok());
  EXPECT_FALSE(declined->has_value());

  // The prepacked bytes outlive the instance that made them.
  auto keep = (*packed)->data;
  packed = Result<std::optional<PrepackedConstant>>(std::optional<PrepackedConstant>());
  good.reset();
  EXPECT_EQ(static_cast<const float*>(keep.get())[3], -8);
}

TEST(PluginInstance, OlderMinorPluginWorksWithoutTheNewerEntries) {
  ir::Model m = testing::add_relu_model();
  auto set = GraphViewSet::build(m);
  ASSERT_TRUE(set.is_ok());
  auto old = instance("oldminor");
  ASSERT_TRUE(old);
  Device d = old->device(0);
  EXPECT_FALSE(d.can_prepack());
  EXPECT_FALSE(d.prepack_replaces_constants());
  auto packed = d.prepack_constant(*(*set)->node(0), 1);
  ASSERT_TRUE(packed.is_ok());
  EXPECT_FALSE(packed->has_value());
  auto cap = d.query_capability(*(*set)->node(1));
  ASSERT_TRUE(cap.is_ok());
  EXPECT_EQ(cap->support, INFER_SUPPORT_PREFERRED);
}

}  // namespace
}  // namespace infer::host
