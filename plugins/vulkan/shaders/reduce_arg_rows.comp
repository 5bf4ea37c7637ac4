// ArgMax / ArgMin over contiguous rows (the axis is the innermost dim): one workgroup
// per row, a shared-memory tree of (value, index) pairs. The output is int64, written as
// (low word, 0) since every index is below 2^31. Ties go to the first index, or the last
// with select_last_index; a NaN counts as the extreme, as in numpy and the CPU plugin.
#version 450

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const uint IS_MAX = 1;
layout(constant_id = 4) const uint SELECT_LAST = 0;

layout(set = 0, binding = 0, std430) readonly buffer X { float x[]; };
layout(set = 0, binding = 1, std430) writeonly buffer Y { uint y[]; };

layout(push_constant, std430) uniform Params {
  uint rows;
  uint n;
} p;

shared float vals[gl_WorkGroupSize.x];
shared uint idxs[gl_WorkGroupSize.x];

// Whether (v, iv) wins over (b, ib). Associative, so the tree order does not matter.
bool better(float v, uint iv, float b, uint ib) {
  const bool tie_wins = SELECT_LAST != 0u ? iv > ib : iv < ib;
  if (isnan(b)) return isnan(v) && tie_wins;
  if (isnan(v)) return true;
  if (v == b) return tie_wins;
  return IS_MAX != 0u ? v > b : v < b;
}

void main() {
  const uint row = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (row >= p.rows) return;
  const uint l = gl_LocalInvocationID.x;
  const uint wg = gl_WorkGroupSize.x;
  const uint base = row * p.n;
  // Invocations past the row's end hold a placeholder that never wins (index ~0u).
  float bv = 0.0;
  uint bi = 0xffffffffu;
  for (uint i = l; i < p.n; i += wg) {
    const float v = x[base + i];
    if (bi == 0xffffffffu || better(v, i, bv, bi)) {
      bv = v;
      bi = i;
    }
  }
  vals[l] = bv;
  idxs[l] = bi;
  barrier();
  for (uint s = wg / 2u; s > 0u; s >>= 1u) {
    if (l < s) {
      const uint oi = idxs[l + s];
      if (oi != 0xffffffffu &&
          (idxs[l] == 0xffffffffu || better(vals[l + s], oi, vals[l], idxs[l]))) {
        vals[l] = vals[l + s];
        idxs[l] = oi;
      }
    }
    barrier();
  }
  if (l == 0u) {
    y[row * 2u] = idxs[0];
    y[row * 2u + 1u] = 0u;
  }
}
