// compile_partition with the cpu plugin, whose prepacked weights replace their originals
// (INFER_PREPACK_REPLACES_CONSTANT): a weight with one reader is freed as soon as it is
// packed, in the graph views and in the IR; a weight two nodes read stays. Whether the
// compiled kernels then compute the right thing from the packed form alone is checked in
// tests/plugins/cpu/prepack_test.cpp and, end to end, by every session test on cpu.
#include "runtime/partition_compiler.hpp"

#include <gtest/gtest.h>
#include <oneapi/tbb/task_arena.h>

#include <memory>
#include <vector>

#include "optimizer/rewrite.hpp"
#include "runtime/backend_set.hpp"
#include "session_fixture.hpp"

namespace infer {
namespace {

// x[2,8] -> n0: h = MatMul(x, w_one[8,4]) -> n1: y = MatMul(h, w_shared[4,3])
//                                          -> n2: z = MatMul(h, w_shared)
struct TwoWeights {
  ir::Model model;
  ir::ValueId x, w_one, w_shared, y, z;
  partitioner::Partition partition;
};

TwoWeights two_weights() {
  TwoWeights t;
  t.model.opsets[""] = 17;
  t.model.graph = std::make_shared<ir::Graph>();
  ir::Graph& g = *t.model.graph;
  auto shape = [](int64_t r, int64_t c) { return ir::Shape::of({r, c}); };
  auto ramp = [](size_t n) {
    std::vector<double> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = 0.25 * static_cast<double>(i % 7) - 0.5;
    return v;
  };
  t.x = optimizer::add_value(g, "x", DataType::kFloat32, shape(2, 8));
  t.w_one = optimizer::add_constant(
      g, "w_one", optimizer::make_float_tensor(DataType::kFloat32, {8, 4}, ramp(32)));
  t.w_shared = optimizer::add_constant(
      g, "w_shared", optimizer::make_float_tensor(DataType::kFloat32, {4, 3}, ramp(12)));
  const ir::ValueId h = optimizer::add_value(g, "h", DataType::kFloat32, shape(2, 4));
  t.y = optimizer::add_value(g, "y", DataType::kFloat32, shape(2, 3));
  t.z = optimizer::add_value(g, "z", DataType::kFloat32, shape(2, 3));
  auto matmul = [&](const char* name, ir::ValueId a, ir::ValueId b, ir::ValueId out) {
    ir::Node n;
    n.name = name;
    n.op_type = "MatMul";
    n.inputs = {a, b};
    n.outputs = {out};
    g.add_node(std::move(n));
  };
  matmul("n0", t.x, t.w_one, h);
  matmul("n1", h, t.w_shared, t.y);
  matmul("n2", h, t.w_shared, t.z);
  g.inputs = {t.x};
  g.outputs = {t.y, t.z};
  g.rebuild_links();
  t.partition.name = "p0";
  t.partition.nodes = {0, 1, 2};
  t.partition.inputs = {t.x};
  t.partition.outputs = {t.y, t.z};
  return t;
}

class PartitionCompiler : public ::testing::Test {
 protected:
  void SetUp() override {
    arena_ = std::make_shared<tbb::task_arena>(2);
    runtime::Logger log(nullptr, LogLevel::kError);
    auto b = runtime::open_backends({"cpu"}, testing::tree_options({"cpu"}), arena_, log);
    ASSERT_TRUE(b.is_ok()) << b.status().message();
    backends_ = std::move(*b);
    ASSERT_TRUE(backends_[0].device.prepack_replaces_constants());
  }

  std::shared_ptr<tbb::task_arena> arena_;
  std::vector<runtime::Backend> backends_;
};

TEST_F(PartitionCompiler, AWeightWithOneReaderIsFreedOnceItIsPacked) {
  TwoWeights t = two_weights();
  ir::Graph& g = *t.model.graph;
  std::weak_ptr<const ir::TensorData> one = g.value(t.w_one).constant;
  std::weak_ptr<const ir::TensorData> shared = g.value(t.w_shared).constant;
  auto views = host::GraphViewSet::build(t.model);
  ASSERT_TRUE(views.is_ok()) << views.status().message();
  const auto ids = runtime::value_ids_of(**views);

  auto compiled = runtime::compile_partition(**views, ids, t.partition, 0, backends_[0], 1, &g);
  ASSERT_TRUE(compiled.is_ok()) << compiled.status().message();
  EXPECT_EQ(g.value(t.w_one).constant, nullptr);
  EXPECT_TRUE(one.expired()) << "nothing else may keep the original bytes";
  EXPECT_EQ((*views)->value(t.w_one)->const_data, nullptr);
  // Two readers: kept in the IR and the views, and alive while the executable is.
  ASSERT_NE(g.value(t.w_shared).constant, nullptr);
  EXPECT_EQ((*views)->value(t.w_shared)->const_data, g.value(t.w_shared).constant->data());
  g.value(t.w_shared).constant.reset();
  views->reset();
  EXPECT_FALSE(shared.expired()) << "the executable keeps the constants it may read";
  compiled = Status(StatusCode::kInternal, "executable dropped");
  EXPECT_TRUE(shared.expired());
}

TEST_F(PartitionCompiler, WithoutTheGraphEveryOriginalIsKept) {
  TwoWeights t = two_weights();
  ir::Graph& g = *t.model.graph;
  auto views = host::GraphViewSet::build(t.model);
  ASSERT_TRUE(views.is_ok()) << views.status().message();
  const auto ids = runtime::value_ids_of(**views);
  auto compiled = runtime::compile_partition(**views, ids, t.partition, 0, backends_[0], 1);
  ASSERT_TRUE(compiled.is_ok()) << compiled.status().message();
  ASSERT_NE(g.value(t.w_one).constant, nullptr);
  EXPECT_EQ((*views)->value(t.w_one)->const_data, g.value(t.w_one).constant->data());
}

}  // namespace
}  // namespace infer
