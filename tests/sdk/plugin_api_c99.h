/* Functions of plugin_api_c99.c, callable from C++. */
#ifndef INFER_TESTS_SDK_PLUGIN_API_C99_H_
#define INFER_TESTS_SDK_PLUGIN_API_C99_H_

#include <stddef.h>

#include "infer/plugin_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bit i is set when INFER_HAS_FIELD sees field i of infer_device_props (name, vendor,
 * kind, memory_bytes, compute_units, host_addressable) in a struct of struct_size. */
unsigned c99_device_props_fields_present(size_t struct_size);
/* INFER_HAS_FIELD on a NULL pointer (must be 0). */
int c99_has_field_of_null(void);
int c99_host_services_has_is_cancelled(size_t struct_size);

/* sizeof(type) and offsetof(type, field) as the C compiler lays them out. */
typedef struct c99_layout {
  const char* what; /* "type.field" */
  size_t size;
  size_t offset;
} c99_layout;
size_t c99_layout_count(void);
const c99_layout* c99_layout_at(size_t i);

/* A plugin entry point and table written in C. */
const infer_plugin_api* c99_entry(uint32_t host_abi_major, uint32_t host_abi_minor);
infer_plugin_entry_fn c99_entry_as_fn(void);

#ifdef __cplusplus
}
#endif

#endif /* INFER_TESTS_SDK_PLUGIN_API_C99_H_ */
