/* A test double of the CUDA driver library: the entry points the cuda plugin's probe
 * resolves, answering as the scenario in $INFER_FAKE_CUDA says (read at each call):
 *   stub      cuInit -> CUDA_ERROR_STUB_LIBRARY (34), like the toolkit's stubs/libcuda.so
 *   nodevice  cuInit -> CUDA_ERROR_NO_DEVICE (100); driver 13.0
 *   old       driver 12.8
 *   zero      driver 13.0, cuDeviceGetCount -> 0
 *   two       driver 13.2, GPUs "Fake H200" (sm_90, 132 SMs, 141 GiB) and "Fake L4"
 *             (sm_89, 58 SMs, 24 GiB)
 *   badprops  driver 13.0, one GPU whose name cannot be read (CUDA_ERROR_UNKNOWN, 999)
 * Built a second time with FAKE_CUDA_INCOMPLETE, it lacks cuDeviceGetAttribute. It proves
 * the plugin's host logic, never a kernel. */
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

static const char* scenario(void) {
  const char* s = getenv("INFER_FAKE_CUDA");
  return s ? s : "";
}
static int is(const char* name) { return strcmp(scenario(), name) == 0; }

static const unsigned long long kGiB = 1024ull * 1024ull * 1024ull;

EXPORT int cuInit(unsigned int flags) {
  (void)flags;
  if (is("stub")) return 34;
  if (is("nodevice")) return 100;
  return 0;
}

EXPORT int cuDriverGetVersion(int* version) {
  if (is("stub")) return 34;
  *version = is("old") ? 12080 : is("two") ? 13020 : 13000;
  return 0;
}

EXPORT int cuDeviceGetCount(int* count) {
  *count = is("two") ? 2 : is("badprops") ? 1 : 0;
  return 0;
}

EXPORT int cuDeviceGet(int* device, int ordinal) {
  *device = ordinal;
  return 0;
}

EXPORT int cuDeviceGetName(char* name, int length, int device) {
  if (is("badprops")) return 999;
  strncpy(name, device == 0 ? "Fake H200" : "Fake L4", (size_t)length);
  return 0;
}

EXPORT int cuDeviceTotalMem_v2(size_t* bytes, int device) {
  *bytes = (size_t)(device == 0 ? 141 * kGiB : 24 * kGiB);
  return 0;
}

#ifndef FAKE_CUDA_INCOMPLETE
EXPORT int cuDeviceGetAttribute(int* value, int attribute, int device) {
  switch (attribute) {
    case 16:
      *value = device == 0 ? 132 : 58;
      return 0; /* multiprocessors */
    case 75:
      *value = device == 0 ? 9 : 8;
      return 0; /* compute capability major */
    case 76:
      *value = device == 0 ? 0 : 9;
      return 0; /* minor */
    default:
      return 1; /* CUDA_ERROR_INVALID_VALUE */
  }
}
#endif

EXPORT int cuGetErrorName(int error, const char** name) {
  if (is("stub")) return 34;
  switch (error) {
    case 999:
      *name = "CUDA_ERROR_UNKNOWN";
      return 0;
    case 100:
      *name = "CUDA_ERROR_NO_DEVICE";
      return 0;
    default:
      return 1;
  }
}
