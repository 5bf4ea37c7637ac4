// Thread indexing shared by the shaders (runtime-owned helpers).
#ifndef INFER_VK_INDEXING_GLSL
#define INFER_VK_INDEXING_GLSL

// The flat index of this thread in a dispatch set up with set_grid_1d() (op_kernel.hpp):
// a 1-D workgroup (local_size_x) and workgroups folded into a 2-D grid. The grid rounds
// up, so a shader must skip indices at or beyond its element count.
//
// A macro, not a function, on purpose: gl_WorkGroupSize only becomes the specialization
// constant of `layout(local_size_x_id = 0) in;` after that declaration. A function
// defined here, above the declaration, would see the default size (1, 1, 1), and glslang
// folds it into a constant 1: every workgroup would then index as if it had one thread.
#define infer_flat_index()                                                              \
  ((gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + \
   gl_LocalInvocationID.x)

#endif
