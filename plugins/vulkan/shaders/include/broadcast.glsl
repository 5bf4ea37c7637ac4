// Numpy broadcasting over up to INFER_MAX_RANK dims: the element offset of flat output
// index `i` in an input with per-dim strides `s` (0 on broadcast dims). Used by the
// elementwise shaders, whose push constants carry the output dims and input strides.
#ifndef INFER_VK_BROADCAST_GLSL
#define INFER_VK_BROADCAST_GLSL

#define INFER_MAX_RANK 6

#endif
