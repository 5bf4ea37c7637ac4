/*
 * Compiled with -std=c99 -Wall -Wextra -pedantic -Werror: proves that plugin_api.h is
 * plain C99, and that a plugin can be written in C against it. The functions below are
 * called from plugin_api_c99_test.cpp, which checks their answers with C++.
 */
#include <string.h>

#include "infer/plugin_api.h"
#include "plugin_api_c99.h"

/* ---- INFER_HAS_FIELD on shortened structs ------------------------------------------- */

unsigned c99_device_props_fields_present(size_t struct_size) {
  infer_device_props props;
  unsigned mask = 0;
  memset(&props, 0, sizeof props);
  props.struct_size = struct_size;
  if (INFER_HAS_FIELD(&props, infer_device_props, name)) mask |= 1u << 0;
  if (INFER_HAS_FIELD(&props, infer_device_props, vendor)) mask |= 1u << 1;
  if (INFER_HAS_FIELD(&props, infer_device_props, kind)) mask |= 1u << 2;
  if (INFER_HAS_FIELD(&props, infer_device_props, memory_bytes)) mask |= 1u << 3;
  if (INFER_HAS_FIELD(&props, infer_device_props, compute_units)) mask |= 1u << 4;
  if (INFER_HAS_FIELD(&props, infer_device_props, host_addressable)) mask |= 1u << 5;
  return mask;
}

int c99_has_field_of_null(void) {
  const infer_capability* cap = NULL;
  return INFER_HAS_FIELD(cap, infer_capability, reason);
}

int c99_host_services_has_is_cancelled(size_t struct_size) {
  infer_host_services services;
  memset(&services, 0, sizeof services);
  services.struct_size = struct_size;
  return INFER_HAS_FIELD(&services, infer_host_services, is_cancelled);
}

/* ---- Layout as C sees it ------------------------------------------------------------ */

#define LAYOUT(type, field) \
  { #type "." #field, sizeof(type), offsetof(type, field) }

static const c99_layout kLayouts[] = {
    LAYOUT(infer_quant_desc, zero_point),
    LAYOUT(infer_value_view, prepacked_size),
    LAYOUT(infer_attr_view, graphs),
    LAYOUT(infer_node_view, index),
    LAYOUT(infer_graph_view, opsets),
    LAYOUT(infer_capability, reason),
    LAYOUT(infer_capability, compute_dtype),
    LAYOUT(infer_device_props, host_addressable),
    LAYOUT(infer_tensor, quant),
    LAYOUT(infer_copy_region, size_bytes),
    LAYOUT(infer_copy_cost, latency_us),
    LAYOUT(infer_compile_options, partition_name),
    LAYOUT(infer_event_value, value),
    LAYOUT(infer_execute_args, run),
    LAYOUT(infer_host_services, is_cancelled),
    LAYOUT(infer_host_services, compute_precision),
    LAYOUT(infer_plugin_api, prepack_constant),
};

size_t c99_layout_count(void) { return sizeof kLayouts / sizeof kLayouts[0]; }
const c99_layout* c99_layout_at(size_t i) { return &kLayouts[i]; }

/* ---- A plugin table written in C ---------------------------------------------------- */

static infer_status* c_get_devices(infer_plugin* plugin, infer_device** devices,
                                   size_t capacity, size_t* count) {
  (void)plugin;
  (void)devices;
  (void)capacity;
  *count = 0;
  return NULL;
}

/* C99 designated initializers: every entry not named is NULL ("not provided"). */
static const infer_plugin_api kCTable = {
    .struct_size = sizeof(infer_plugin_api),
    .abi_major = INFER_ABI_VERSION_MAJOR,
    .abi_minor = INFER_ABI_VERSION_MINOR,
    .min_host_minor = INFER_ABI_VERSION_MINOR,
    .name = "c99",
    .version = "1",
    .description = "a table written in C",
    .get_devices = c_get_devices,
};

const infer_plugin_api* c99_entry(uint32_t host_abi_major, uint32_t host_abi_minor) {
  (void)host_abi_minor;
  return host_abi_major == INFER_ABI_VERSION_MAJOR ? &kCTable : NULL;
}

/* The entry point type accepts the function above. */
infer_plugin_entry_fn c99_entry_as_fn(void) { return c99_entry; }
