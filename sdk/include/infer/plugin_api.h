/*
 * infer plugin ABI, version 0.1.
 *
 * This header is the one stable contract between the infer host (the runtime that loads
 * models, partitions them and schedules the work) and a backend plugin (a shared library
 * that drives one kind of device). It is plain C99 so that a plugin can be written in any
 * language and built with any compiler.
 *
 * Rules that hold for every declaration below:
 *  - Versioning: the major version must match exactly; the minor version only ever
 *    appends. Every struct that crosses the boundary begins with `struct_size`, set by
 *    whoever fills the struct. A reader accepts a larger size (a newer writer) and treats
 *    trailing fields beyond a smaller size (an older writer) as absent; use
 *    INFER_HAS_FIELD to test. A NULL function pointer means "not provided": the host then
 *    uses the documented fallback.
 *  - Errors: every fallible call returns `infer_status*`. NULL means success. A non-NULL
 *    status is created through the host's `status_create` service, carries a code and a
 *    copied message, and is owned by whoever receives it (the host frees the statuses
 *    plugins return to it; a plugin frees a status it gets from a host service with
 *    `status_free`, or returns it upward, which passes ownership on).
 *  - Ownership: whoever allocates frees. Strings handed across are borrowed for the
 *    duration of the call and copied by the receiver if it keeps them. Objects created by
 *    a plugin (plugin, devices, buffers, streams, events, executables) are destroyed by
 *    the plugin through the matching destroy function.
 *  - No exception, longjmp or C++ type ever crosses this boundary.
 *  - Enumerations: each ends with a <NAME>_MAX_ENUM = 0x7FFFFFFF entry that is never a
 *    value. It keeps every enum 32 bits wide, and it makes any value a C caller may pass
 *    (one from a newer ABI minor, or a bad one) a valid value of the enum type in C++,
 *    so a reader can check it and answer "unknown dtype 99" without undefined behaviour.
 *    Readers treat a value they do not know as an error, never as a default.
 *  - Threads: unless a function says otherwise, it may be called from any thread, and
 *    calls on different objects may run concurrently. Calls on the same stream are
 *    serialized by the host.
 */
#ifndef INFER_PLUGIN_API_H_
#define INFER_PLUGIN_API_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define INFER_ABI_VERSION_MAJOR 0u
#define INFER_ABI_VERSION_MINOR 3u

/* The one symbol a plugin exports (see infer_plugin_entry_fn at the end). */
#define INFER_PLUGIN_ENTRY_SYMBOL "infer_plugin_entry"

#if defined(_WIN32)
#define INFER_PLUGIN_EXPORT __declspec(dllexport)
#else
#define INFER_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* True when the struct at `ptr` (of type `type`) was written by a party that knew
 * `field`, i.e. its struct_size covers the whole field. */
#define INFER_HAS_FIELD(ptr, type, field)                        \
  ((ptr) != NULL && (ptr)->struct_size >= offsetof(type, field) + \
                                              sizeof(((const type*)0)->field))

/* ------------------------------------------------------------------------------------
 * Opaque handles.
 * Host-owned: infer_status, infer_task_group, infer_run_context.
 * Plugin-owned: everything else.
 * ---------------------------------------------------------------------------------- */
typedef struct infer_status infer_status;
typedef struct infer_task_group infer_task_group;
typedef struct infer_run_context infer_run_context;

typedef struct infer_plugin infer_plugin;
typedef struct infer_device infer_device;
typedef struct infer_buffer infer_buffer;
typedef struct infer_stream infer_stream;
typedef struct infer_event infer_event;
typedef struct infer_executable infer_executable;

/* ------------------------------------------------------------------------------------
 * Status codes.
 * ---------------------------------------------------------------------------------- */
typedef enum infer_status_code {
  INFER_STATUS_OK = 0,
  INFER_STATUS_INVALID_ARGUMENT = 1, /* the caller passed something malformed */
  INFER_STATUS_UNSUPPORTED = 2,      /* never possible on this device: feeds the partitioner */
  INFER_STATUS_UNAVAILABLE = 3,      /* not possible here or now: no driver, no device */
  INFER_STATUS_OUT_OF_MEMORY = 4,
  INFER_STATUS_CANCELLED = 5,
  INFER_STATUS_TIMEOUT = 6,
  INFER_STATUS_INTERNAL = 7, /* a bug in the plugin or the host */
  INFER_STATUS_CODE_MAX_ENUM = 0x7FFFFFFF /* never a value (see "Enumerations") */
} infer_status_code;

typedef enum infer_log_level {
  INFER_LOG_DEBUG = 0,
  INFER_LOG_INFO = 1,
  INFER_LOG_WARNING = 2,
  INFER_LOG_ERROR = 3,
  INFER_LOG_LEVEL_MAX_ENUM = 0x7FFFFFFF /* never a value (see "Enumerations") */
} infer_log_level;

/* ------------------------------------------------------------------------------------
 * Data types. The numbering is ONNX's TensorProto.DataType, so a value read from a
 * model needs no translation. INT4/UINT4 pack two elements per byte, low nibble first.
 * ---------------------------------------------------------------------------------- */
typedef enum infer_dtype {
  INFER_DTYPE_UNDEFINED = 0,
  INFER_DTYPE_FLOAT32 = 1,
  INFER_DTYPE_UINT8 = 2,
  INFER_DTYPE_INT8 = 3,
  INFER_DTYPE_UINT16 = 4,
  INFER_DTYPE_INT16 = 5,
  INFER_DTYPE_INT32 = 6,
  INFER_DTYPE_INT64 = 7,
  INFER_DTYPE_STRING = 8, /* never reaches a plugin: the host rejects string tensors */
  INFER_DTYPE_BOOL = 9,   /* one byte per element, 0 or 1 */
  INFER_DTYPE_FLOAT16 = 10,
  INFER_DTYPE_FLOAT64 = 11,
  INFER_DTYPE_UINT32 = 12,
  INFER_DTYPE_UINT64 = 13,
  INFER_DTYPE_COMPLEX64 = 14,
  INFER_DTYPE_COMPLEX128 = 15,
  INFER_DTYPE_BFLOAT16 = 16,
  INFER_DTYPE_FLOAT8E4M3FN = 17,
  INFER_DTYPE_FLOAT8E4M3FNUZ = 18,
  INFER_DTYPE_FLOAT8E5M2 = 19,
  INFER_DTYPE_FLOAT8E5M2FNUZ = 20,
  INFER_DTYPE_UINT4 = 21,
  INFER_DTYPE_INT4 = 22,
  INFER_DTYPE_MAX_ENUM = 0x7FFFFFFF /* never a value (see "Enumerations") */
} infer_dtype;

/* The arithmetic precision a session allows for float32 nodes (the deployment file's
 * `precision`, infer-run's --precision). FP32: compute as the model says. BF16 / FP16: a
 * plugin may compute the products of float32 matrix multiplications and convolutions
 * with their inputs rounded to that type, accumulating in float32; values between nodes,
 * Softmax, normalization statistics and the outputs stay float32. (Appended in ABI
 * minor 3.) */
typedef enum infer_precision {
  INFER_PRECISION_FP32 = 0,
  INFER_PRECISION_BF16 = 1,
  INFER_PRECISION_FP16 = 2,
  INFER_PRECISION_MAX_ENUM = 0x7FFFFFFF /* never a value (see "Enumerations") */
} infer_precision;

/* ------------------------------------------------------------------------------------
 * Quantization descriptor, attached to a value that holds quantized data.
 * ---------------------------------------------------------------------------------- */
typedef enum infer_quant_scheme {
  INFER_QUANT_PER_TENSOR = 0,
  INFER_QUANT_PER_AXIS = 1,
  INFER_QUANT_BLOCK = 2,
  INFER_QUANT_SCHEME_MAX_ENUM = 0x7FFFFFFF /* never a value (see "Enumerations") */
} infer_quant_scheme;

struct infer_value_view;

typedef struct infer_quant_desc {
  size_t struct_size;
  infer_quant_scheme scheme;
  infer_dtype storage;     /* INT8, UINT8, INT4, UINT4, FLOAT8* ... */
  int64_t axis;            /* PER_AXIS and BLOCK: the quantized axis (non-negative) */
  int64_t block_size;      /* BLOCK only; 0 otherwise */
  /* Scale (float32/float16/bfloat16) and zero point (storage dtype); zero_point may be
   * NULL (meaning zero). Borrowed: valid as long as the view that points here. */
  const struct infer_value_view* scale;
  const struct infer_value_view* zero_point;
} infer_quant_desc;

/* ------------------------------------------------------------------------------------
 * Read-only graph views. The host builds them; a plugin reads them during the call they
 * are passed to and must not keep pointers into them afterwards, with one exception:
 * `const_data` stays valid until every executable compiled from the view is destroyed,
 * so a plugin may use constant weights in place instead of copying them.
 *
 * Within one graph view, a value is identified by its pointer: the same
 * infer_value_view* appears as the output of its producer and as the input of each
 * consumer.
 * ---------------------------------------------------------------------------------- */
typedef struct infer_value_view {
  size_t struct_size;
  const char* name;
  infer_dtype dtype;
  int64_t rank;                    /* -1 when the rank is unknown */
  const int64_t* dims;             /* `rank` entries; -1 for an unknown or symbolic dim */
  const char* const* dim_params;   /* NULL, or `rank` entries: the symbolic name or NULL */
  /* Non-NULL when the value is a constant known at load time (initializer, Constant);
   * NULL with prepacked_data set when the host freed a constant the plugin's prepacked
   * form replaces (INFER_PREPACK_REPLACES_CONSTANT). */
  const void* const_data;
  size_t const_size;               /* bytes at const_data */
  const infer_quant_desc* quant;   /* NULL unless the value holds quantized data */
  /* Set when this plugin's prepack hook transformed the constant (see prepack_constant):
   * the host's copy of what the hook returned, valid like const_data. */
  const void* prepacked_data;
  size_t prepacked_size;
} infer_value_view;

typedef enum infer_attr_type { /* ONNX's AttributeProto.AttributeType numbering */
  INFER_ATTR_UNDEFINED = 0,
  INFER_ATTR_FLOAT = 1,
  INFER_ATTR_INT = 2,
  INFER_ATTR_STRING = 3,
  INFER_ATTR_TENSOR = 4,
  INFER_ATTR_GRAPH = 5,
  INFER_ATTR_FLOATS = 6,
  INFER_ATTR_INTS = 7,
  INFER_ATTR_STRINGS = 8,
  INFER_ATTR_TENSORS = 9,
  INFER_ATTR_GRAPHS = 10,
  INFER_ATTR_TYPE_MAX_ENUM = 0x7FFFFFFF /* never a value (see "Enumerations") */
} infer_attr_type;

struct infer_graph_view;

typedef struct infer_attr_view {
  size_t struct_size;
  const char* name;
  infer_attr_type type;
  double f;                  /* FLOAT */
  int64_t i;                 /* INT */
  const char* s;             /* STRING: s_len bytes (may hold NULs), NUL-terminated too */
  size_t s_len;
  size_t count;              /* number of elements for the list types */
  const double* floats;      /* FLOATS */
  const int64_t* ints;       /* INTS */
  const char* const* strings;/* STRINGS, each NUL-terminated */
  const infer_value_view* const* tensors; /* TENSOR (count == 1) and TENSORS: constants */
  const struct infer_graph_view* const* graphs; /* GRAPH (count == 1) and GRAPHS */
} infer_attr_view;

typedef struct infer_node_view {
  size_t struct_size;
  const char* name;
  const char* op_type;
  const char* domain;        /* "" for the default ONNX domain; "ai.infer" for ours */
  int64_t opset;             /* the model's opset version for this node's domain */
  size_t num_inputs;
  const infer_value_view* const* inputs;   /* an entry is NULL for an omitted optional input */
  size_t num_outputs;
  const infer_value_view* const* outputs;  /* an entry is NULL for an omitted optional output */
  size_t num_attrs;
  const infer_attr_view* attrs;
  size_t index;              /* position of the node in the enclosing graph view */
} infer_node_view;

typedef struct infer_opset_view {
  const char* domain;
  int64_t version;
} infer_opset_view;

typedef struct infer_graph_view {
  size_t struct_size;
  const char* name;
  size_t num_nodes;
  const infer_node_view* const* nodes;     /* topologically ordered */
  /* Values the graph reads from outside, in the order executions bind them. For a
   * subgraph (If/Loop/Scan body) these are the body's formal inputs; values it captures
   * from the outer scope appear as node inputs that no node of the body produces. */
  size_t num_inputs;
  const infer_value_view* const* inputs;
  size_t num_outputs;
  const infer_value_view* const* outputs;  /* in the order executions return them */
  size_t num_opsets;
  const infer_opset_view* opsets;
} infer_graph_view;

/* ------------------------------------------------------------------------------------
 * Capability answers: how well a device runs one node.
 * ---------------------------------------------------------------------------------- */
typedef enum infer_support {
  INFER_SUPPORT_NO = 0,
  INFER_SUPPORT_YES = 1,
  INFER_SUPPORT_PREFERRED = 2, /* supported, and the device is a good place for it */
  INFER_SUPPORT_MAX_ENUM = 0x7FFFFFFF /* never a value (see "Enumerations") */
} infer_support;

#define INFER_REASON_MAX 256

typedef struct infer_capability {
  size_t struct_size;         /* set by the host */
  infer_support support;      /* the host initializes it to NO */
  double est_time_us;         /* estimated run time; < 0 when unknown (initialized -1) */
  int64_t est_memory_bytes;   /* estimated device memory; < 0 when unknown (initialized -1) */
  /* Why the node is not supported, or a note on how it runs: NUL-terminated, written
   * by the plugin into this host-owned buffer (e.g. "unsupported attribute mode=cubic"). */
  char reason[INFER_REASON_MAX];
  /* -- Appended in ABI minor 3 (write it only when struct_size covers it) -- */
  /* The float type the device computes the node's products in when that is narrower
   * than the node's own dtypes because of the session's compute_precision (e.g.
   * INFER_DTYPE_BFLOAT16 for a float32 Conv); the host initializes it to
   * INFER_DTYPE_UNDEFINED, meaning "as the node's dtypes". --explain lists it. */
  infer_dtype compute_dtype;
} infer_capability;

/* A plugin proposes a group of nodes it can fuse by calling the sink with the nodes'
 * `index` values. The host re-checks every proposal (contiguity, acyclicity). */
typedef void (*infer_group_sink_fn)(void* sink_ctx, const size_t* node_indices, size_t count);

/* ------------------------------------------------------------------------------------
 * Devices and memory.
 * ---------------------------------------------------------------------------------- */
typedef enum infer_device_kind {
  INFER_DEVICE_CPU = 0,
  INFER_DEVICE_GPU = 1,
  INFER_DEVICE_ACCELERATOR = 2,
  INFER_DEVICE_KIND_MAX_ENUM = 0x7FFFFFFF /* never a value (see "Enumerations") */
} infer_device_kind;

typedef struct infer_device_props {
  size_t struct_size;          /* set by the host */
  char name[128];              /* NUL-terminated, written by the plugin */
  char vendor[64];
  infer_device_kind kind;
  uint64_t memory_bytes;       /* device memory size; 0 when unknown */
  uint32_t compute_units;
  /* True when DEVICE_LOCAL buffers can be mapped and read by the host directly (CPU,
   * unified memory). The host then skips staging copies. */
  bool host_addressable;
} infer_device_props;

typedef enum infer_memory_kind {
  INFER_MEMORY_DEVICE_LOCAL = 0, /* fastest for the device; may be unreachable from the host */
  INFER_MEMORY_HOST_VISIBLE = 1, /* mappable by the host, usable by the device */
  INFER_MEMORY_HOST_PINNED = 2,   /* host memory the device can copy from/to at full speed */
  INFER_MEMORY_KIND_MAX_ENUM = 0x7FFFFFFF /* never a value (see "Enumerations") */
} infer_memory_kind;

/* A tensor bound to device memory for one execution. */
typedef struct infer_tensor {
  size_t struct_size;
  infer_dtype dtype;
  size_t rank;
  const int64_t* dims;         /* `rank` concrete dims; borrowed for the call */
  infer_buffer* buffer;        /* a buffer of the executing device */
  size_t offset;               /* byte offset of the first element in `buffer` */
  size_t size_bytes;
  const infer_quant_desc* quant;
} infer_tensor;

/* ------------------------------------------------------------------------------------
 * Copies.
 * ---------------------------------------------------------------------------------- */
typedef enum infer_copy_direction {
  INFER_COPY_HOST_TO_DEVICE = 0,
  INFER_COPY_DEVICE_TO_HOST = 1,
  INFER_COPY_DEVICE_TO_DEVICE = 2, /* two buffers of the same plugin */
  INFER_COPY_DIRECTION_MAX_ENUM = 0x7FFFFFFF /* never a value (see "Enumerations") */
} infer_copy_direction;

/* One region of a batched copy. Exactly one of src_host/src_buffer and one of
 * dst_host/dst_buffer is set. Host memory must stay valid until the stream has passed a
 * later signal that the host waits for. */
typedef struct infer_copy_region {
  size_t struct_size;
  const void* src_host;
  infer_buffer* src_buffer;
  size_t src_offset;
  void* dst_host;
  infer_buffer* dst_buffer;
  size_t dst_offset;
  size_t size_bytes;
} infer_copy_region;

/* Link estimate for the partitioner's cost model. */
typedef struct infer_copy_cost {
  size_t struct_size;          /* set by the host */
  double bandwidth_bytes_per_us;
  double latency_us;
} infer_copy_cost;

/* ------------------------------------------------------------------------------------
 * Executables.
 * ---------------------------------------------------------------------------------- */
typedef struct infer_compile_options {
  size_t struct_size;
  uint32_t optimization_level; /* 0..3, as the user asked */
  const char* partition_name;  /* for logs and traces */
} infer_compile_options;

typedef struct infer_event_value {
  infer_event* event;
  uint64_t value;
} infer_event_value;

/* Allocates output `index` of an execution with its final dtype and shape. The plugin
 * calls it exactly once per output, from inside `execute` (before execute returns), as
 * soon as it knows the shape. The host fills `out` with memory of the executing device
 * and keeps ownership of it. */
typedef infer_status* (*infer_output_alloc_fn)(void* alloc_ctx, size_t index, infer_dtype dtype,
                                              size_t rank, const int64_t* dims,
                                              infer_tensor* out);

typedef struct infer_execute_args {
  size_t struct_size;
  size_t num_inputs;
  const infer_tensor* inputs;        /* in the order of the graph view's inputs */
  size_t num_outputs;
  infer_output_alloc_fn alloc_output;
  void* alloc_ctx;
  /* Work waits for each (event, value) before it starts; events belong to this plugin. */
  size_t num_waits;
  const infer_event_value* waits;
  /* Each (event, value) is signalled when the work has completed (or failed). */
  size_t num_signals;
  const infer_event_value* signals;
  /* Pass to the host's is_cancelled. The host keeps it alive until every signal of this
   * execution has completed, so the plugin may poll it from its own queue. */
  infer_run_context* run;
} infer_execute_args;

/* ------------------------------------------------------------------------------------
 * Host services: what the host offers every plugin. One table per plugin instance;
 * valid from plugin_create until plugin_destroy returns.
 * ---------------------------------------------------------------------------------- */
typedef void (*infer_range_fn)(void* user, size_t begin, size_t end);
typedef void (*infer_task_fn)(void* user);
/* Completion callback of an event: `status` is NULL on success, else the sticky failure,
 * borrowed for the call. Called exactly once, from any thread; it must not block. */
typedef void (*infer_event_callback_fn)(void* user, const infer_status* status);

typedef struct infer_host_services {
  size_t struct_size;
  uint32_t abi_major;
  uint32_t abi_minor;
  void* host_ctx;  /* pass back as the first argument of every service */

  void (*log)(void* host_ctx, infer_log_level level, const char* message);

  /* Statuses. The message is copied. */
  infer_status* (*status_create)(void* host_ctx, infer_status_code code, const char* message);
  void (*status_free)(infer_status* status);
  infer_status_code (*status_code)(const infer_status* status);
  const char* (*status_message)(const infer_status* status); /* borrowed from the status */

  /* Parallelism over the host's oneTBB arena. Plugins never start thread pools. */
  size_t (*num_threads)(void* host_ctx);
  /* Calls fn on disjoint sub-ranges covering [begin, end) of at least `grain` items
   * (except the last) and returns when all calls have returned. Nestable. While it waits,
   * the calling thread runs only this loop's own sub-ranges, never another task, so
   * per-thread scratch the caller handed to the loop's bodies is not touched meanwhile. */
  void (*parallel_for)(void* host_ctx, size_t begin, size_t end, size_t grain, infer_range_fn fn,
                       void* user);
  /* A task group: run tasks concurrently, then wait for all of them. The group is owned
   * by the plugin that created it and destroyed with task_group_destroy after a wait. */
  infer_task_group* (*task_group_create)(void* host_ctx);
  void (*task_group_run)(infer_task_group* group, infer_task_fn fn, void* user);
  void (*task_group_wait)(infer_task_group* group);
  void (*task_group_destroy)(infer_task_group* group);

  /* Host memory, aligned to `alignment` (a power of two). NULL when out of memory. */
  void* (*host_alloc)(void* host_ctx, size_t size, size_t alignment);
  void (*host_free)(void* host_ctx, void* ptr);

  /* The option `key` from the YAML `backends.<name>.options` block. Copies the value
   * (NUL-terminated, truncated to buf_size - 1) and returns its full length, or -1 when
   * the option is not set. buf may be NULL when buf_size is 0. */
  int64_t (*get_option)(void* host_ctx, const char* key, char* buf, size_t buf_size);

  /* True once the run `run` was cancelled; long executions should poll it. */
  bool (*is_cancelled)(void* host_ctx, const infer_run_context* run);

  /* -- Appended in ABI minor 3 ------------------------------------------------------ */
  /* The precision the session allows for float32 arithmetic (see infer_precision). A
   * plugin that computes a node in a narrower type says so in its capability answer
   * (infer_capability.compute_dtype); one that ignores the field computes in float32. */
  infer_precision compute_precision;
} infer_host_services;

/* ------------------------------------------------------------------------------------
 * The plugin's function table.
 * ---------------------------------------------------------------------------------- */
typedef struct infer_plugin_api {
  size_t struct_size;
  uint32_t abi_major;        /* INFER_ABI_VERSION_MAJOR the plugin was built with */
  uint32_t abi_minor;        /* INFER_ABI_VERSION_MINOR the plugin was built with */
  uint32_t min_host_minor;   /* the oldest host minor the plugin can work with */
  const char* name;          /* what users type in --backends; matches the file name */
  const char* version;       /* the plugin's own version, free form */
  const char* description;

  /* -- Plugin instance ---------------------------------------------------------------
   * The host creates one instance per session set-up. A plugin whose driver or device is
   * missing still creates successfully and reports zero devices. */
  infer_status* (*plugin_create)(const infer_host_services* host, infer_plugin** out);
  void (*plugin_destroy)(infer_plugin* plugin);

  /* -- Devices -----------------------------------------------------------------------
   * Writes up to `capacity` device handles (owned by the plugin instance) and the total
   * count to *count; `devices` may be NULL when `capacity` is 0 (the host asks for the
   * count first). With zero devices, sets *count = 0 and returns an UNAVAILABLE status
   * saying why (e.g. "no Vulkan driver: vkCreateInstance failed"). */
  infer_status* (*get_devices)(infer_plugin* plugin, infer_device** devices, size_t capacity,
                               size_t* count);
  infer_status* (*device_get_props)(infer_device* device, infer_device_props* out);

  /* -- Capability --------------------------------------------------------------------
   * Fills `out` for one node; `out` arrives with struct_size set and fields initialized
   * to "no, unknown cost". A node the plugin cannot run is not an error (return NULL
   * with support = NO and a reason). */
  infer_status* (*query_capability)(infer_device* device, const infer_node_view* node,
                                    infer_capability* out);
  /* Optional: proposes groups of nodes of `graph` to fuse into one executable. */
  infer_status* (*propose_groups)(infer_device* device, const infer_graph_view* graph,
                                  infer_group_sink_fn sink, void* sink_ctx);

  /* -- Memory ------------------------------------------------------------------------
   * Buffers are freed by buffer_free after the host made sure no queued work uses them. */
  infer_status* (*buffer_alloc)(infer_device* device, infer_memory_kind kind, size_t size,
                                size_t alignment, infer_buffer** out);
  void (*buffer_free)(infer_buffer* buffer);
  /* Optional: wraps host memory (e.g. mmap'd weights) without copying. The host keeps
   * the memory alive until buffer_free. NULL: the host allocates and copies. */
  infer_status* (*buffer_import_host)(infer_device* device, void* host_ptr, size_t size,
                                      infer_buffer** out);
  /* Optional: a host pointer to the buffer's first byte, for HOST_VISIBLE/HOST_PINNED
   * buffers and for any buffer of a host_addressable device. Valid until buffer_free.
   * NULL function or an UNSUPPORTED status: the host copies through a stream instead. */
  infer_status* (*buffer_map)(infer_buffer* buffer, void** host_ptr);

  /* -- Streams -----------------------------------------------------------------------
   * A stream is an ordered queue of work on one device. stream_destroy waits for the
   * queued work to finish. */
  infer_status* (*stream_create)(infer_device* device, infer_stream** out);
  void (*stream_destroy)(infer_stream* stream);

  /* -- Timeline events ---------------------------------------------------------------
   * An event is a 64-bit counter that only grows, starting at 0; a signal with a value
   * not above the current one changes nothing. A failure of the work that was to signal
   * it sticks to the event: every later wait or query returns that failure.
   * After a failed work item, a stream skips its queued work up to the next signal,
   * fails that signal's event, and then runs normally again. */
  infer_status* (*event_create)(infer_device* device, infer_event** out);
  void (*event_destroy)(infer_event* event);
  /* Enqueues on `stream`: set the counter to `value` when all earlier work is done. */
  infer_status* (*stream_signal)(infer_stream* stream, infer_event* event, uint64_t value);
  /* Enqueues on `stream`: later work waits until the counter reaches `value`. */
  infer_status* (*stream_wait)(infer_stream* stream, infer_event* event, uint64_t value);
  /* Sets the counter from the host (to release device work waiting on host work). */
  infer_status* (*event_signal_host)(infer_event* event, uint64_t value);
  /* Blocks the calling thread until the counter reaches `value`, the event fails, or
   * `timeout_ns` passes (UINT64_MAX: forever; then TIMEOUT). It returns only after the
   * completion callbacks registered for values up to `value` have returned. */
  infer_status* (*event_wait)(infer_event* event, uint64_t value, uint64_t timeout_ns);
  /* The counter's current value, or the sticky failure. */
  infer_status* (*event_query)(infer_event* event, uint64_t* value);
  /* Calls `cb` once when the counter reaches `value` or the event fails (immediately, on
   * the calling thread, if that already happened). When this function returns an error,
   * `cb` is never called. Destroying the event calls every pending callback with a
   * CANCELLED status first, so `user` is always released exactly once. The callback may
   * run on the calling thread before this function returns; after it returns, the
   * plugin must not touch the event (the host may destroy it from inside the callback
   * chain). */
  infer_status* (*event_on_complete)(infer_event* event, uint64_t value,
                                     infer_event_callback_fn cb, void* user);

  /* -- Copies ------------------------------------------------------------------------
   * Enqueues all regions on `stream`; they may run in any order relative to each other
   * but after earlier work on the stream. */
  infer_status* (*copy_batch)(infer_stream* stream, const infer_copy_region* regions,
                              size_t count);
  /* Optional: whether and how fast the device copies in `direction`. UNSUPPORTED when it
   * cannot. NULL: the host assumes it can, at unknown cost. */
  infer_status* (*copy_cost)(infer_device* device, infer_copy_direction direction,
                             infer_copy_cost* out);

  /* -- Executables -------------------------------------------------------------------
   * Compiles a partition (a one-node graph for a single kernel). An executable may be
   * executed many times, from many threads at once, on any stream of its device. */
  infer_status* (*compile)(infer_device* device, const infer_graph_view* graph,
                           const infer_compile_options* options, infer_executable** out);
  void (*executable_destroy)(infer_executable* executable);
  /* Enqueues one execution on `stream`. A plugin that needs input values on the host to
   * know output shapes may wait for its inputs first. Errors found before enqueueing are
   * returned; errors during the work fail the signalled events. */
  infer_status* (*execute)(infer_executable* executable, infer_stream* stream,
                           const infer_execute_args* args);

  /* -- Weight prepacking (optional) --------------------------------------------------
   * Transforms constant input `input_index` of `node` into the plugin's own layout. The
   * result is allocated with the host's host_alloc and handed over: the host keeps it
   * (shared across sessions) and passes it back in infer_value_view.prepacked_data at
   * compile time. Return with *out_data = NULL to decline. A constant read by several
   * nodes keeps one prepacked form per partition view, so the data should describe its
   * own layout (the example plugin prefixes a small header). */
  infer_status* (*prepack_constant)(infer_device* device, const infer_node_view* node,
                                    size_t input_index, void** out_data, size_t* out_size);

  /* -- Appended in ABI minor 2 ------------------------------------------------------ */
  /* INFER_PREPACK_* bits that describe the prepack hook; 0 when absent. */
  uint64_t prepack_flags;
} infer_plugin_api;

/* prepack_flags: the plugin reads a constant it prepacked only in its prepacked form.
 * When the hook returned data for a value whose only reader is that node (read through
 * that one input; not a graph output), the host may free the original bytes: the
 * compile view then carries prepacked_data with const_data == NULL (const_size, dtype
 * and dims still describe the original), and neither compile nor the executables may
 * read const_data of that value. Without the bit the host keeps every original. */
#define INFER_PREPACK_REPLACES_CONSTANT 1u

/* The exported entry point, named INFER_PLUGIN_ENTRY_SYMBOL. The host passes its ABI
 * version; the plugin returns its static function table (valid until the library is
 * unloaded), or NULL when it cannot work with that host. The host refuses a table whose
 * abi_major differs from its own or whose min_host_minor is above its own minor. */
typedef const infer_plugin_api* (*infer_plugin_entry_fn)(uint32_t host_abi_major,
                                                         uint32_t host_abi_minor);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* INFER_PLUGIN_API_H_ */
