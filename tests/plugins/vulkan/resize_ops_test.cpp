// Resize and Upsample on the vulkan plugin (resize_ops.cpp, resize.comp): hand-computed
// bilinear, nearest and align_corners results, then the cpu plugin as the reference over
// every coordinate_transformation_mode and nearest_mode, scales and sizes, axes and
// keep_aspect_ratio_policy (opset 18), tf_crop_and_resize with a roi, trilinear volumes,
// int64 data, the older Resize-10 / Upsample forms, and the capability answers.
//
// The scales and sizes are chosen so that the reference's source coordinates are exact
// binary fractions or stay clear of rounding ties (2, 0.5, 1.5, 3, 4->6, 6->4, 5->7):
// there both plugins round nearest neighbours the same way.
#include <cstring>
#include <string>
#include <vector>

#include "vulkan_test_util.hpp"

namespace infer::test::vk {
namespace {

TensorSpec out_spec(infer_dtype dtype = INFER_DTYPE_FLOAT32) {
  TensorSpec s = TensorSpec::of("y", dtype, {});
  s.unknown_rank = true;
  return s;
}

TensorSpec scales(const std::vector<float>& v) {
  return TensorSpec::constant<float>("scales", INFER_DTYPE_FLOAT32,
                                     {static_cast<int64_t>(v.size())}, v);
}
TensorSpec sizes(const std::vector<int64_t>& v) {
  return TensorSpec::constant<int64_t>("sizes", INFER_DTYPE_INT64, {static_cast<int64_t>(v.size())},
                                       v);
}
TensorSpec roi(const std::vector<float>& v) {
  return TensorSpec::constant<float>("roi", INFER_DTYPE_FLOAT32, {static_cast<int64_t>(v.size())},
                                     v);
}

std::string text(const std::vector<int64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
  return s + "]";
}

class ResizeOpsTest : public VulkanTest {
 protected:
  // Resize-`opset` of x with the given roi / scales / sizes inputs (omitted ones left
  // out), against the cpu plugin.
  void same(const std::vector<int64_t>& x, const TensorSpec& r, const TensorSpec& s,
            const TensorSpec& z, const std::vector<AttrSpec>& attrs, int64_t opset, uint32_t seed,
            const std::string& what, infer_dtype dtype = INFER_DTYPE_FLOAT32) {
    std::string name = "Resize " + text(x) + " " + what;
    for (const AttrSpec& a : attrs) name += " " + a.name + "=" + (a.s.empty() ? text(a.ints) : a.s);
    SCOPED_TRACE(name);
    GraphBuilder g;
    g.node("Resize", {TensorSpec::of("x", dtype, x), r, s, z}, {out_spec(dtype)}, attrs, opset);
    expect_same_as_cpu(g.graph_auto({"y"}), seed, 1e-5, 1e-5);
  }

  RunResult run(const std::vector<AttrSpec>& attrs, const HostTensor& x, const TensorSpec& s,
                const TensorSpec& z) {
    GraphBuilder g;
    g.node("Resize", {TensorSpec::f32("x", x.dims), TensorSpec::omitted(), s, z}, {out_spec()},
           attrs, 13);
    return run_vk(g.graph_auto({"y"}), {x});
  }

};

AttrSpec mode(const char* m) { return AttrSpec::String("mode", m); }
AttrSpec coord(const char* c) { return AttrSpec::String("coordinate_transformation_mode", c); }
AttrSpec nearest(const char* n) { return AttrSpec::String("nearest_mode", n); }

TEST_F(ResizeOpsTest, MatchesHandComputedValues) {
  const HostTensor x = HostTensor::f32({1, 1, 2, 2}, {1, 2, 3, 4});
  {
    // Bilinear, half_pixel, x2: source coordinates -0.25, 0.25, 0.75, 1.25 per dim
    // (clamped at the edges), so out[i][j] = 1 + u[j] + 2 u[i], u = 0, .25, .75, 1.
    RunResult r = run({mode("linear")}, x, scales({1, 1, 2, 2}), TensorSpec::omitted());
    ASSERT_TRUE(r.ok()) << r.status.message;
    EXPECT_EQ(r.outputs[0].dims, (std::vector<int64_t>{1, 1, 4, 4}));
    EXPECT_EQ(r.outputs[0].as<float>(),
              (std::vector<float>{1, 1.25f, 1.75f, 2, 1.5f, 1.75f, 2.25f, 2.5f, 2.5f, 2.75f, 3.25f,
                                  3.5f, 3, 3.25f, 3.75f, 4}));
  }
  {
    RunResult r = run({mode("nearest"), coord("asymmetric"), nearest("floor")}, x,
                      scales({1, 1, 2, 2}), TensorSpec::omitted());
    ASSERT_TRUE(r.ok()) << r.status.message;
    EXPECT_EQ(r.outputs[0].as<float>(),
              (std::vector<float>{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}));
  }
  {
    // align_corners to 3x3: the corners stay, the middle averages.
    RunResult r = run({mode("linear"), coord("align_corners")}, x, TensorSpec::omitted(),
                      sizes({1, 1, 3, 3}));
    ASSERT_TRUE(r.ok()) << r.status.message;
    EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{1, 1.5f, 2, 2, 2.5f, 3, 3, 3.5f, 4}));
  }
}

TEST_F(ResizeOpsTest, NearestMatchesCpu) {
  const TensorSpec none = TensorSpec::omitted();
  uint32_t seed = 1;
  for (const char* c : {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel",
                        "tf_half_pixel_for_nn"}) {
    for (const char* n : {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}) {
      const int64_t opset = std::string(c) == "tf_half_pixel_for_nn" ? 11 : 13;
      const std::vector<AttrSpec> a = {mode("nearest"), coord(c), nearest(n)};
      same({1, 2, 3, 4}, TensorSpec::omitted(), scales({1, 1, 2, 3}), none, a, opset, seed++,
           "x2 x3");
      same({1, 2, 6, 4}, TensorSpec::omitted(), scales({1, 1, 0.5f, 1.5f}), none, a, opset, seed++,
           "x0.5 x1.5");
      same({2, 1, 4, 6}, TensorSpec::omitted(), none, sizes({2, 1, 6, 4}), a, opset, seed++,
           "sizes");
    }
  }
  same({1, 1, 3, 4}, TensorSpec::omitted(), scales({1, 1, 2, 2}), none, {mode("nearest")}, 13, 100,
       "int64", INFER_DTYPE_INT64);
}

TEST_F(ResizeOpsTest, LinearMatchesCpu) {
  const TensorSpec none = TensorSpec::omitted();
  uint32_t seed = 200;
  for (const char* c : {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"}) {
    const std::vector<AttrSpec> a = {mode("linear"), coord(c)};
    same({1, 2, 3, 4}, TensorSpec::omitted(), scales({1, 1, 2, 2}), none, a, 13, seed++, "x2");
    same({2, 1, 6, 5}, TensorSpec::omitted(), none, sizes({2, 1, 4, 7}), a, 13, seed++,
         "sizes 6->4 5->7");
    same({1, 1, 5, 8}, TensorSpec::omitted(), none, sizes({1, 1, 1, 3}), a, 13, seed++,
         "to a single row");
    same({1, 1, 4, 4}, TensorSpec::omitted(), scales({1, 1, 0.5f, 0.5f}), none, a, 13, seed++,
         "x0.5");
  }
  // half_pixel_symmetric (opset 19), a volume (trilinear), only the last dim.
  same({1, 1, 4, 5}, TensorSpec::omitted(), scales({1, 1, 1.5f, 2}), none,
       {mode("linear"), coord("half_pixel_symmetric")}, 19, seed++, "x1.5 x2");
  same({1, 2, 3, 4, 5}, TensorSpec::omitted(), scales({1, 1, 2, 1.5f, 0.5f}), none,
       {mode("linear")}, 13, seed++, "trilinear");
  same({3, 10}, TensorSpec::omitted(), scales({1, 1.5f}), none, {mode("linear")}, 13, seed++,
       "1-D rows");
}

TEST_F(ResizeOpsTest, AxesAspectRatioAndCropMatchCpu) {
  const TensorSpec none = TensorSpec::omitted();
  same({1, 2, 4, 6}, TensorSpec::omitted(), scales({2, 0.5f}), none,
       {mode("linear"), AttrSpec::Ints("axes", {2, 3})}, 18, 300, "axes 2,3");
  same({1, 2, 4, 6}, TensorSpec::omitted(), none, sizes({8, 8}),
       {mode("nearest"), AttrSpec::Ints("axes", {-2, -1}),
        AttrSpec::String("keep_aspect_ratio_policy", "not_larger")},
       18, 301, "not_larger");
  same({1, 2, 4, 6}, TensorSpec::omitted(), none, sizes({8, 8}),
       {mode("linear"), AttrSpec::Ints("axes", {2, 3}),
        AttrSpec::String("keep_aspect_ratio_policy", "not_smaller")},
       18, 302, "not_smaller");
  for (const char* m : {"nearest", "linear"}) {
    same({1, 1, 5, 6}, roi({0, 0, 0.2f, -0.1f, 1, 1, 0.8f, 1.3f}), none, sizes({1, 1, 4, 5}),
         {mode(m), coord("tf_crop_and_resize"), AttrSpec::Float("extrapolation_value", -7.0)}, 13,
         303, "crop");
  }
}

TEST_F(ResizeOpsTest, OlderFormsMatchCpu) {
  for (const char* m : {"nearest", "linear"}) {
    SCOPED_TRACE(m);
    {
      GraphBuilder g;
      g.node("Resize", {TensorSpec::f32("x", {1, 2, 3, 4}), scales({1, 1, 2, 0.5f})}, {out_spec()},
             {mode(m)}, 10);
      expect_same_as_cpu(g.graph_auto({"y"}), 400, 1e-5, 1e-5);
    }
    {
      GraphBuilder g;
      g.node("Upsample", {TensorSpec::f32("x", {1, 2, 3, 4}), scales({1, 1, 2, 3})}, {out_spec()},
             {mode(m)}, 9);
      expect_same_as_cpu(g.graph_auto({"y"}), 401, 1e-5, 1e-5);
    }
    {
      GraphBuilder g;
      g.node("Upsample", {TensorSpec::f32("x", {1, 2, 3, 4})}, {out_spec()},
             {mode(m), AttrSpec::Floats("scales", {1, 1, 2, 2})}, 7);
      expect_same_as_cpu(g.graph_auto({"y"}), 402, 1e-5, 1e-5);
    }
  }
}

TEST_F(ResizeOpsTest, RealisticShapesMatchCpu) {
  const TensorSpec none = TensorSpec::omitted();
  // A YOLO neck upsample and a segmentation head's bilinear x4.
  same({1, 128, 20, 20}, none, scales({1, 1, 2, 2}), none,
       {mode("nearest"), coord("asymmetric"), nearest("floor")}, 13, 500, "x2 nearest");
  same({1, 8, 32, 32}, none, scales({1, 1, 4, 4}), none, {mode("linear")}, 13, 501, "x4 linear");
}

TEST_F(ResizeOpsTest, CapabilityRefusesWhatTheKernelsCannotRun) {
  auto cap_of = [&](const std::vector<TensorSpec>& ins, const std::vector<AttrSpec>& attrs,
                    infer_dtype dtype = INFER_DTYPE_FLOAT32) {
    GraphBuilder g;
    g.node("Resize", ins, {out_spec(dtype)}, attrs, 13);
    return capability(g.last_node());
  };
  const TensorSpec x = TensorSpec::f32("x", {1, 1, 4, 4});
  {
    const infer_capability cap =
        cap_of({x, TensorSpec::omitted(), scales({1, 1, 2, 2})}, {mode("cubic")});
    EXPECT_EQ(cap.support, INFER_SUPPORT_NO);
    EXPECT_STREQ(cap.reason, "unsupported attribute mode=cubic");
  }
  {
    const infer_capability cap =
        cap_of({x, TensorSpec::omitted(), TensorSpec::f32("s", {4})}, {mode("nearest")});
    EXPECT_EQ(cap.support, INFER_SUPPORT_NO);
    EXPECT_NE(std::string(cap.reason).find("scales input must be a constant"), std::string::npos)
        << cap.reason;
  }
  {
    const infer_capability cap =
        cap_of({TensorSpec::i64("x", {1, 1, 4, 4}), TensorSpec::omitted(), scales({1, 1, 2, 2})},
               {mode("linear")}, INFER_DTYPE_INT64);
    EXPECT_EQ(cap.support, INFER_SUPPORT_NO);
    EXPECT_NE(std::string(cap.reason).find("int64"), std::string::npos) << cap.reason;
  }
  {
    const infer_capability cap =
        cap_of({x, TensorSpec::omitted(), scales({1, 1, 2, 2})}, {mode("linear")});
    EXPECT_NE(cap.support, INFER_SUPPORT_NO) << cap.reason;
  }
}

}  // namespace
}  // namespace infer::test::vk
