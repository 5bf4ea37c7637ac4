// MatMul, Gemm and the fused ai.infer FusedGemm / FusedMatMul (sdk/FUSED_OPS.md) on one
// shader, gemm_tiled.comp: a batched, shared-memory tiled product that reads both
// operands through element strides and applies alpha, beta * C (or FusedMatMul's bias)
// and the fused activation in its epilogue, so every variant is one dispatch and
// transposes or broadcasts never materialize.
//
// MatMul follows numpy: 1-D operands gain (and lose) a unit dim, batch dims broadcast.
// Batch dims are collapsed where both operands walk them contiguously; up to three
// remaining dims run in the grid's z axis, further outer dims as separate dispatches.
// When B has no batch and A's batch is not broadcast, the batch folds into M, so
// [B, S, K] x [K, N] is one [B*S, K] x [K, N] product with full tiles.
//
// float32 only; everything is indexed with 32-bit integers (tensors of < 2^31
// elements).
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "infer/plugin.hpp"
#include "op_kernel.hpp"

namespace infer::vk {
namespace {

constexpr const char* kGemmShader = "gemm_tiled";
constexpr uint32_t kBk = 16;  // K slice, spec constant 5
constexpr int64_t kMaxGroups = 65535;
constexpr int64_t kMaxIndex = 0x7fffffff;

// Workgroup shape (x over N, y over M) and outputs per invocation.
struct Tiles {
  uint32_t wgx, wgy, tm, tn;
};

// 64 x 64 tiles of 8 x 8 outputs per invocation for everything large: each staged
// element is reused 8 times from registers, and 64 invocations per workgroup keep the
// barriers cheap (lavapipe runs a workgroup's invocations as coroutines switched at each
// barrier; there, 8 x 8 per invocation measured 3-6x faster than 4 x 4 with 256
// invocations, and it is the usual SGEMM shape on GPUs too). Thin shapes (a GEMV, a
// product with few rows or columns) get tiles that waste fewer invocations.
Tiles choose_tiles(int64_t M, int64_t N) {
  if (M >= 64 && N >= 64) return {8, 8, 8, 8};
  if (M == 1) return {64, 1, 1, 1};
  if (M < 16 && N >= 64) return {16, 4, 1, 4};
  if (N < 16 && M >= 64) return {4, 16, 4, 1};
  if (M >= 32 && N >= 32) return {8, 8, 4, 4};
  return {8, 8, 2, 2};
}

// Everything one gemm_tiled dispatch needs besides its bindings.
struct GemmParams {
  int64_t M = 0, N = 0, K = 0;
  int64_t a_sm = 0, a_sk = 0, b_sk = 0, b_sn = 0, c_sm = 0, c_sn = 0;
  float alpha = 1, beta = 1;
  ActivationSpec act;
  bool has_c = false;
  // Batch: dims (outermost first) with A and B element strides, at most three per
  // dispatch; bases for dims split off into separate dispatches.
  int64_t bd[3] = {1, 1, 1};
  int64_t as[3] = {0, 0, 0};
  int64_t bs[3] = {0, 0, 0};
  int64_t a_base = 0, b_base = 0, y_base = 0;
};

Dispatch gemm_dispatch(const GemmParams& p, const Shader* shader, uint32_t c_input) {
  const Tiles t = choose_tiles(p.M, p.N);
  const int64_t nbatch = p.bd[0] * p.bd[1] * p.bd[2];
  Dispatch d;
  d.shader = shader;
  d.spec = {t.wgx,
            t.wgy,
            1,
            t.tm,
            t.tn,
            kBk,
            static_cast<uint32_t>(p.act.kind),
            p.has_c ? 1u : 0u,
            p.a_sk == 1 ? 1u : 0u,
            p.b_sn == 1 ? 1u : 0u};
  auto u = [](int64_t v) { return static_cast<uint32_t>(v); };
  d.push = {u(p.M),
            u(p.N),
            u(p.K),
            u(p.a_sm),
            u(p.a_sk),
            u(p.b_sk),
            u(p.b_sn),
            u(p.c_sm),
            u(p.c_sn),
            push_float(p.alpha),
            push_float(p.beta),
            push_float(p.act.p0),
            push_float(p.act.p1),
            u(nbatch),
            u(p.bd[1]),
            u(p.bd[2]),
            u(p.as[0]),
            u(p.as[1]),
            u(p.as[2]),
            u(p.bs[0]),
            u(p.bs[1]),
            u(p.bs[2]),
            u(p.a_base),
            u(p.b_base),
            u(p.y_base)};
  d.bindings = {Operand::input(0), Operand::input(1),
                // An absent C still needs a valid descriptor: A stands in, never read.
                p.has_c ? Operand::input(c_input) : Operand::input(0), Operand::output(0)};
  const int64_t bm = static_cast<int64_t>(t.tm) * t.wgy, bn = static_cast<int64_t>(t.tn) * t.wgx;
  d.groups[0] = static_cast<uint32_t>(std::min(kMaxGroups, (p.N + bn - 1) / bn));
  d.groups[1] = static_cast<uint32_t>(std::min(kMaxGroups, (p.M + bm - 1) / bm));
  d.groups[2] = static_cast<uint32_t>(std::min(kMaxGroups, nbatch));
  return d;
}

bool too_big(std::span<const TensorDesc> tensors) {
  for (const TensorDesc& t : tensors)
    if (t.present && t.elements() > kMaxIndex) return true;
  return false;
}

const Shader* gemm_shader(const NodeInfo& node, std::string* error) {
  const Shader* s = find_shader(kGemmShader);
  if (s == nullptr) *error = node.describe() + ": shader gemm_tiled is not embedded in this build";
  return s;
}

// ---- MatMul / FusedMatMul -----------------------------------------------------------

bool plan_matmul(const NodeInfo& node, std::span<const TensorDesc> in, OpPlan* out,
                 std::string* error) {
  const bool fused = node.domain == "ai.infer";
  if (in.size() < 2 || !in[0].present || !in[1].present)
    return fail(node, error, "expected inputs A and B");
  const TensorDesc& A = in[0];
  const TensorDesc& B = in[1];
  const TensorDesc* bias = fused && in.size() > 2 && in[2].present ? &in[2] : nullptr;
  for (size_t i = 0; i < in.size(); ++i)
    if (in[i].present && in[i].dtype != INFER_DTYPE_FLOAT32)
      return fail(
          node, error,
          "input " + std::to_string(i) + " is " + dtype_name(in[i].dtype) + ", expected float32");
  const size_t ra = A.dims.size(), rb = B.dims.size();
  if (ra < 1 || rb < 1)
    return fail(node, error,
                "MatMul operands must have rank >= 1, got A " + dims_text(A.dims) + " and B " +
                    dims_text(B.dims));
  const bool a1 = ra == 1, b1 = rb == 1;
  const int64_t M = a1 ? 1 : A.dims[ra - 2];
  const int64_t K = A.dims[ra - 1];
  const int64_t Kb = b1 ? B.dims[0] : B.dims[rb - 2];
  const int64_t N = b1 ? 1 : B.dims[rb - 1];
  if (K != Kb)
    return fail(node, error,
                "inner dims differ: A " + dims_text(A.dims) + " and B " + dims_text(B.dims));
  // Batch dims, broadcast numpy-style (right-aligned).
  const std::vector<int64_t> ab(A.dims.begin(), A.dims.end() - (a1 ? 1 : 2));
  const std::vector<int64_t> bb(B.dims.begin(), B.dims.end() - (b1 ? 1 : 2));
  const size_t rank = std::max(ab.size(), bb.size());
  std::vector<int64_t> batch(rank), sa(rank, 0), sbv(rank, 0);
  int64_t stride_a = M * K, stride_b = K * N;
  for (size_t i = rank; i-- > 0;) {
    const size_t from_end = rank - 1 - i;
    const int64_t da = from_end < ab.size() ? ab[ab.size() - 1 - from_end] : 1;
    const int64_t db = from_end < bb.size() ? bb[bb.size() - 1 - from_end] : 1;
    if (da != db && da != 1 && db != 1)
      return fail(node, error,
                  "batch dims of A " + dims_text(A.dims) + " and B " + dims_text(B.dims) +
                      " do not broadcast");
    batch[i] = da == 1 ? db : da;
    sa[i] = da == 1 ? 0 : stride_a;
    sbv[i] = db == 1 ? 0 : stride_b;
    stride_a *= da;
    stride_b *= db;
  }
  TensorDesc Y;
  Y.dtype = INFER_DTYPE_FLOAT32;
  Y.dims = batch;
  if (!a1) Y.dims.push_back(M);
  if (!b1) Y.dims.push_back(N);
  // The bias runs along Y's last axis: N, or M when B is 1-D (Y then ends in M).
  const int64_t bias_len = b1 && !a1 ? M : N;
  if (bias != nullptr && !(bias->dims.size() == 1 && bias->dims[0] == bias_len))
    return fail(node, error,
                "bias has shape " + dims_text(bias->dims) + ", expected [" +
                    std::to_string(bias_len) + "]");
  if (too_big(in) || Y.elements() > kMaxIndex)
    return fail(node, error, "tensors of 2^31 elements or more are not supported");
  out->outputs = {Y};
  if (Y.elements() == 0) return true;
  if (K == 0) return fail(node, error, "an inner dim K of 0 is not supported");

  GemmParams p;
  if (!parse_activation(node, &p.act, error)) return false;
  const Shader* shader = gemm_shader(node, error);
  if (shader == nullptr) return false;
  p.M = M;
  p.N = N;
  p.K = K;
  p.a_sm = K;
  p.a_sk = 1;
  p.b_sk = N;
  p.b_sn = 1;
  if (bias != nullptr) {
    p.has_c = true;
    const bool per_row = b1 && !a1;
    p.c_sm = per_row ? 1 : 0;
    p.c_sn = per_row ? 0 : 1;
  }
  // A bias along M repeats per batch, so the batch cannot fold into M.
  const bool can_fold = !(p.has_c && p.c_sm != 0);

  // Collapse the batch: drop unit dims, merge neighbours both operands walk contiguously.
  struct Dim {
    int64_t d, a, b;
  };
  std::vector<Dim> dims;
  int64_t total = 1, a_count = 1, b_count = 1;
  for (size_t i = 0; i < rank; ++i) {
    total *= batch[i];
    a_count *= sa[i] != 0 ? batch[i] : 1;
    b_count *= sbv[i] != 0 ? batch[i] : 1;
    if (batch[i] == 1) continue;
    if (!dims.empty() && dims.back().a == sa[i] * batch[i] && dims.back().b == sbv[i] * batch[i]) {
      dims.back() = {dims.back().d * batch[i], sa[i], sbv[i]};
    } else {
      dims.push_back({batch[i], sa[i], sbv[i]});
    }
  }
  if (can_fold && b_count == 1 && a_count == total) {
    // One B for every batch and A contiguous: the batch is just more rows.
    p.M = M * total;
    dims.clear();
  }
  const size_t inner = std::min<size_t>(3, dims.size());
  const size_t outer = dims.size() - inner;
  for (size_t j = 0; j < inner; ++j) {
    const Dim& dm = dims[outer + j];
    const size_t slot = 3 - inner + j;
    p.bd[slot] = dm.d;
    p.as[slot] = dm.a;
    p.bs[slot] = dm.b;
  }
  const int64_t inner_count = p.bd[0] * p.bd[1] * p.bd[2];
  int64_t outer_count = 1;
  for (size_t j = 0; j < outer; ++j) outer_count *= dims[j].d;
  // Batch dims beyond three: one dispatch per index of the outer dims, each at its own
  // A, B and Y offsets.
  for (int64_t o = 0; o < outer_count; ++o) {
    int64_t rest = o, a_base = 0, b_base = 0;
    for (size_t j = outer; j-- > 0;) {
      const int64_t idx = rest % dims[j].d;
      rest /= dims[j].d;
      a_base += idx * dims[j].a;
      b_base += idx * dims[j].b;
    }
    p.a_base = a_base;
    p.b_base = b_base;
    p.y_base = o * inner_count * p.M * p.N;
    out->dispatches.push_back(gemm_dispatch(p, shader, 2));
  }
  return true;
}

// ---- Gemm / FusedGemm ---------------------------------------------------------------

bool plan_gemm(const NodeInfo& node, std::span<const TensorDesc> in, OpPlan* out,
               std::string* error) {
  if (in.size() < 2 || !in[0].present || !in[1].present)
    return fail(node, error, "expected inputs A and B");
  for (size_t i = 0; i < in.size(); ++i)
    if (in[i].present && in[i].dtype != INFER_DTYPE_FLOAT32)
      return fail(
          node, error,
          "input " + std::to_string(i) + " is " + dtype_name(in[i].dtype) + ", expected float32");
  const TensorDesc& A = in[0];
  const TensorDesc& B = in[1];
  const TensorDesc* C = in.size() > 2 && in[2].present ? &in[2] : nullptr;
  if (A.dims.size() != 2 || B.dims.size() != 2)
    return fail(node, error,
                "A " + dims_text(A.dims) + " and B " + dims_text(B.dims) + " must be 2-D");
  const bool ta = node.attr_int("transA", 0) != 0;
  const bool tb = node.attr_int("transB", 0) != 0;
  GemmParams p;
  p.M = ta ? A.dims[1] : A.dims[0];
  p.K = ta ? A.dims[0] : A.dims[1];
  const int64_t Kb = tb ? B.dims[1] : B.dims[0];
  p.N = tb ? B.dims[0] : B.dims[1];
  if (p.K != Kb)
    return fail(node, error,
                std::string("inner dims differ: A") + (ta ? "^T " : " ") + dims_text(A.dims) +
                    " and B" + (tb ? "^T " : " ") + dims_text(B.dims));
  p.alpha = static_cast<float>(node.attr_float("alpha", 1.0));
  p.beta = static_cast<float>(node.attr_float("beta", 1.0));
  // A stored [M, K] (or [K, M] with transA), B stored [K, N] (or [N, K] with transB).
  p.a_sm = ta ? 1 : p.K;
  p.a_sk = ta ? p.M : 1;
  p.b_sk = tb ? 1 : p.N;
  p.b_sn = tb ? p.K : 1;
  if (C != nullptr && p.beta != 0.0f) {
    // C broadcasts unidirectionally to [M, N]: right-aligned, each dim equal or 1.
    if (C->dims.size() > 2)
      return fail(node, error, "C has shape " + dims_text(C->dims) + ", expected rank <= 2");
    const int64_t target[2] = {p.M, p.N};
    int64_t strides[2] = {0, 0};
    int64_t s = 1;
    for (size_t j = 0; j < C->dims.size(); ++j) {
      const size_t ci = C->dims.size() - 1 - j;  // C's dim, from the last
      const size_t ti = 1 - j;                   // the matching Y dim
      const int64_t d = C->dims[ci];
      if (d != 1 && d != target[ti])
        return fail(node, error,
                    "C has shape " + dims_text(C->dims) + ", which does not broadcast to [" +
                        std::to_string(p.M) + ", " + std::to_string(p.N) + "]");
      strides[ti] = d == 1 ? 0 : s;
      s *= d;
    }
    p.has_c = true;
    p.c_sm = strides[0];
    p.c_sn = strides[1];
  }
  if (!parse_activation(node, &p.act, error)) return false;
  TensorDesc Y;
  Y.dtype = INFER_DTYPE_FLOAT32;
  Y.dims = {p.M, p.N};
  if (too_big(in) || Y.elements() > kMaxIndex)
    return fail(node, error, "tensors of 2^31 elements or more are not supported");
  out->outputs = {Y};
  if (Y.elements() == 0) return true;
  if (p.K == 0) return fail(node, error, "an inner dim K of 0 is not supported");
  const Shader* shader = gemm_shader(node, error);
  if (shader == nullptr) return false;
  out->dispatches.push_back(gemm_dispatch(p, shader, 2));
  return true;
}

// ---- Capability ---------------------------------------------------------------------

bool float_inputs(const infer_node_view& node, size_t max_inputs, std::string* reason) {
  if (node.num_inputs < 2 || node.num_inputs > max_inputs || node_input(node, 0) == nullptr ||
      node_input(node, 1) == nullptr) {
    *reason = "expected 2 to " + std::to_string(max_inputs) + " inputs";
    return false;
  }
  for (size_t i = 0; i < node.num_inputs; ++i) {
    const infer_value_view* v = node_input(node, i);
    if (v != nullptr && v->dtype != INFER_DTYPE_FLOAT32) {
      *reason = "input " + std::to_string(i) + " is " + dtype_name(v->dtype) +
                ", only float32 is implemented";
      return false;
    }
  }
  return true;
}

infer_support check_matmul(const infer_node_view& node, std::string* reason) {
  const bool fused = std::strcmp(node.domain, "ai.infer") == 0;
  if (!float_inputs(node, fused ? 3 : 2, reason)) return INFER_SUPPORT_NO;
  if (fused && !activation_supported(node, reason)) return INFER_SUPPORT_NO;
  for (size_t i = 0; i < 2; ++i) {
    const infer_value_view* v = node_input(node, i);
    if (v->rank == 0) {
      *reason = "MatMul operands must have rank >= 1";
      return INFER_SUPPORT_NO;
    }
  }
  const infer_value_view* bias = fused ? node_input(node, 2) : nullptr;
  if (bias != nullptr && bias->rank >= 0 && bias->rank != 1) {
    *reason = "bias must be 1-D, got rank " + std::to_string(bias->rank);
    return INFER_SUPPORT_NO;
  }
  return INFER_SUPPORT_YES;
}

infer_support check_gemm(const infer_node_view& node, std::string* reason) {
  const bool fused = std::strcmp(node.domain, "ai.infer") == 0;
  if (!float_inputs(node, 3, reason)) return INFER_SUPPORT_NO;
  if (fused && !activation_supported(node, reason)) return INFER_SUPPORT_NO;
  for (size_t i = 0; i < 2; ++i) {
    const infer_value_view* v = node_input(node, i);
    if (v->rank >= 0 && v->rank != 2) {
      *reason = "Gemm input " + std::to_string(i) + " has rank " + std::to_string(v->rank) +
                ", expected 2";
      return INFER_SUPPORT_NO;
    }
  }
  const infer_value_view* c = node_input(node, 2);
  if (c != nullptr && c->rank > 2) {
    *reason = "Gemm C has rank " + std::to_string(c->rank) + ", expected <= 2";
    return INFER_SUPPORT_NO;
  }
  return INFER_SUPPORT_YES;
}

// 2 * (output elements) * K, from the views' static shapes; -1 when unknown.
double product_flops(const infer_node_view& node, int64_t K) {
  const infer_value_view* y = node.num_outputs > 0 ? node.outputs[0] : nullptr;
  if (y == nullptr || y->rank < 0 || K < 0) return -1;
  double n = 1;
  for (int64_t i = 0; i < y->rank; ++i) {
    if (y->dims[i] < 0) return -1;
    n *= static_cast<double>(y->dims[i]);
  }
  return 2.0 * n * static_cast<double>(K);
}

double flops_matmul(const infer_node_view& node) {
  const infer_value_view* a = node_input(node, 0);
  if (a == nullptr || a->rank < 1) return -1;
  return product_flops(node, a->dims[a->rank - 1]);
}

double flops_gemm(const infer_node_view& node) {
  const infer_value_view* a = node_input(node, 0);
  if (a == nullptr || a->rank != 2) return -1;
  const bool ta = sdk::attr_int(&node, "transA", 0) != 0;
  return product_flops(node, a->dims[ta ? 0 : 1]);
}

}  // namespace

void add_matmul_ops(std::vector<OpKernel>& table) {
  table.push_back({"", "MatMul", check_matmul, plan_matmul, flops_matmul});
  table.push_back({"ai.infer", "FusedMatMul", check_matmul, plan_matmul, flops_matmul});
  table.push_back({"", "Gemm", check_gemm, plan_gemm, flops_gemm});
  table.push_back({"ai.infer", "FusedGemm", check_gemm, plan_gemm, flops_gemm});
}

}  // namespace infer::vk
