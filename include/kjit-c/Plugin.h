/*===- kjit-c/Plugin.h - the stable C plugin ABI of kjit ----------*- C -*-===*\
|*                                                                            *|
|* The one header a kjit plugin needs: hooks (cache, compiled, launch enter   *|
|* and exit, pre-run), backends and cache stores. C99, no C++ types, no LLVM  *|
|* or MLIR objects. docs/PluginABI.md is the reference for plugin authors,    *|
|* with the changelog of every minor.                                         *|
|*                                                                            *|
|* Rules that hold for every declaration below:                               *|
|*  - Every struct starts with `size_t struct_size` and `const void *ext`.    *|
|*    The producer of a struct sets struct_size to sizeof its own view; the   *|
|*    consumer reads a field only when KJIT_HAS_FIELD says the producer knew  *|
|*    it, and otherwise uses the documented default (zero: "not set"). Out    *|
|*    fields are written only when the caller's struct_size covers them. ext  *|
|*    is reserved: set it to NULL, never read it (it was an extension chain   *|
|*    until 1.4; no extension was ever defined, and every addition was        *|
|*    appended instead).                                                      *|
|*  - Minor versions only append fields and table slots. A NULL slot, or a    *|
|*    table too short to hold it, means "unsupported".                        *|
|*  - Errors are kjit_status objects (NULL = OK) created and destroyed only   *|
|*    through kjit_host_api; a status returned across the boundary is owned   *|
|*    by the receiver. No C++ exception, longjmp, abort or exit crosses.      *|
|*  - Inputs are borrowed for the duration of the call: copy what you keep.   *|
|*    Strings are pointer + length and need not be NUL-terminated. Whoever    *|
|*    allocates a buffer frees it, through the release function it provides.  *|
|*  - The host calls entries from any thread and never holds its own locks    *|
|*    while it calls a plugin. A plugin without KJIT_CAP_THREAD_SAFE has all  *|
|*    its entries serialized by the host, across every host object of the     *|
|*    process (re-entry from the same thread is still possible). The backend  *|
|*    section adds rules per entry.                                           *|
|*  - Fields, slots and values that a minor version added say "@since 1.x".   *|
|*                                                                            *|
|* Stability. The whole ABI is FROZEN: a released field, slot or value never  *|
|* moves, changes type or meaning, or goes away within major 1 (one that is   *|
|* retired keeps its slot, reserved), and later minors only append.           *|
|* test/Plugins/Inputs/abi-layouts.txt records the layout of every struct in  *|
|* every released minor, and the build checks this header against it. The     *|
|* backend and cache-store sections were provisional until the CUDA backend   *|
|* and the Redis store had shipped against them; they froze, with everything  *|
|* else, at 1.4.                                                              *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef KJIT_C_PLUGIN_H
#define KJIT_C_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*===----------------------------------------------------------------------===*\
|* Versions and struct-size helpers                                           *|
\*===----------------------------------------------------------------------===*/

/** The ABI major this header describes; it is part of the entry symbol. */
#define KJIT_ABI_MAJOR 1
/** The newest ABI minor this header describes. Minors only append;
 *  docs/PluginABI.md keeps the changelog.
 *  1.0: first release.
 *  1.1: arguments as storage (dtype codes, bits), a device model (device
 *       count and attributes, finalize per device), streams and completion
 *       (launch flags and clusters, synchronize, report_async_error), store
 *       operations (remove, put flags and TTL, describe).
 *  1.2: compile options a backend asks of the compiler (describe), device
 *       memory (allocate, deallocate, copy), launch times measured on the
 *       device (KJIT_LAUNCH_TIMED, report_device_time, launch_complete).
 *  1.3: a backend's own specialization attributes (describe's
 *       spec_attributes, the specialize entry).
 *  1.4: launches that pass only the values: load takes the kernel's
 *       argument template and may answer takes_values; such a kernel's
 *       launches may pass values in place of args.
 *  1.5: finalize reports what it learned of the kernel (info: registers,
 *       spills, as JSON), which the host adds to the compile metadata.
 *  After 1.4, without a new minor (neither side of a negotiation behaves
 *  differently): the backend and cache-store sections froze; the extension
 *  chain and KJIT_ARG_STRING, which nothing ever produced, were retired
 *  (ext is a reserved NULL, value 6 is never reused); parse_options and
 *  destroy_options were deprecated. */
#define KJIT_ABI_MINOR 5

/** Size of struct T up to and including its field `last`: the struct_size a
 *  producer that knew T only up to `last` would have set. */
#define KJIT_STRUCT_SIZE(T, last)                                              \
  (offsetof(T, last) + sizeof(((const T *)0)->last))

/** True when the struct at `p` (of type T) was produced by someone who knew
 *  field `f`. Read `f` only when this holds. */
#define KJIT_HAS_FIELD(p, T, f)                                                \
  ((p) != NULL && (p)->struct_size >= KJIT_STRUCT_SIZE(T, f))

/** Exported symbol visibility for the entry point, for GCC and Clang. */
#if defined(__GNUC__)
#define KJIT_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define KJIT_PLUGIN_EXPORT
#endif

/*===----------------------------------------------------------------------===*\
|* Statuses, logging                                                          *|
\*===----------------------------------------------------------------------===*/

/** Status codes (the usual canonical set). Stored as int32_t across the
 *  ABI; new codes are only appended. */
enum {
  KJIT_STATUS_OK = 0,
  KJIT_STATUS_CANCELLED = 1,
  KJIT_STATUS_UNKNOWN = 2,
  KJIT_STATUS_INVALID_ARGUMENT = 3,
  KJIT_STATUS_DEADLINE_EXCEEDED = 4,
  KJIT_STATUS_NOT_FOUND = 5,
  KJIT_STATUS_ALREADY_EXISTS = 6,
  KJIT_STATUS_PERMISSION_DENIED = 7,
  KJIT_STATUS_RESOURCE_EXHAUSTED = 8,
  KJIT_STATUS_FAILED_PRECONDITION = 9,
  KJIT_STATUS_ABORTED = 10,
  KJIT_STATUS_OUT_OF_RANGE = 11,
  KJIT_STATUS_UNIMPLEMENTED = 12,
  KJIT_STATUS_INTERNAL = 13,
  KJIT_STATUS_UNAVAILABLE = 14,
  KJIT_STATUS_DATA_LOSS = 15
};

/** An error: a code and a message. Opaque; created with
 *  kjit_host_api.status_create and destroyed exactly once, by its owner, with
 *  kjit_host_api.status_destroy. NULL means OK. */
typedef struct kjit_status kjit_status;

/** Log levels for kjit_host_api.log. */
enum {
  KJIT_LOG_ERROR = 0,
  KJIT_LOG_WARNING = 1,
  KJIT_LOG_INFO = 2,
  KJIT_LOG_DEBUG = 3
};

/** The host's handle for one loaded plugin (opaque). Passed to init; valid
 *  until fini returns. */
typedef struct kjit_host_context kjit_host_context;

/** Bytes handed from one side to the other with their release function.
 *  The side that fills it in (the producer) allocates; the receiver calls
 *  `release(owner, data, size)` exactly once when done, unless release is
 *  NULL (then data is static storage of the producer, valid until its fini).
 *  release may be called from any thread. */
typedef struct kjit_buffer {
  size_t struct_size;
  const void *ext;
  const uint8_t *data; /**< The bytes (not NUL-terminated). */
  size_t size;         /**< Number of bytes. */
  void *owner;         /**< Producer's cookie for release. */
  void (*release)(void *owner, const uint8_t *data, size_t size);
} kjit_buffer;

/** @since 1.2. A launch's device time (defined below the host API). */
typedef struct kjit_device_time kjit_device_time;

/** The host's function table, handed to init. Static storage of the host:
 *  valid for the life of the process. Every entry is thread-safe. */
typedef struct kjit_host_api {
  size_t struct_size;
  const void *ext;
  uint32_t abi_major; /**< The host's ABI major (KJIT_ABI_MAJOR). */
  uint32_t abi_minor; /**< The newest minor the host speaks. */

  /** Creates a status. code must not be KJIT_STATUS_OK. The message is
   *  copied. Never returns NULL (out of memory yields a static status). */
  kjit_status *(*status_create)(int32_t code, const char *message,
                                size_t message_len);
  /** Destroys a status; NULL is ignored. */
  void (*status_destroy)(kjit_status *status);
  /** The code of a status (KJIT_STATUS_OK for NULL). */
  int32_t (*status_code)(const kjit_status *status);
  /** The message of a status; valid until the status is destroyed. */
  void (*status_message)(const kjit_status *status, const char **message,
                         size_t *message_len);
  /** Reports a message through the host's log (stderr by default), tagged
   *  with the plugin's name. ctx is the one init received. */
  void (*log)(kjit_host_context *ctx, int32_t level, const char *message,
              size_t message_len);

  /** @since 1.1. Reports an error that surfaced after the entry that caused
   *  it had returned: a sticky CUDA error (CUDA_ERROR_ILLEGAL_ADDRESS) seen
   *  by a later call, a failed asynchronous copy. `kernel_name` names the
   *  kernel it is attributed to (NULL and 0 when unknown). The host takes
   *  ownership of `status` and destroys it (NULL is ignored). The host logs
   *  it as an error with the plugin's name and counts it; it fails no launch
   *  by itself (return the error from the entry that finds it as well, e.g.
   *  synchronize). Callable from any thread, also one the plugin created,
   *  until fini returns. A 1.0 host lacks the slot: check
   *  KJIT_HAS_FIELD(host, kjit_host_api, report_async_error) first. */
  void (*report_async_error)(kjit_host_context *ctx, const char *kernel_name,
                             size_t kernel_name_len, kjit_status *status);

  /** @since 1.2. A backend reports the device time of a launch it was asked
   *  to time (KJIT_LAUNCH_TIMED), once the launch has completed; the host
   *  hands it to every launch_complete hook. Callable from any thread, also
   *  one the plugin created, until fini returns; `time` is borrowed. Check
   *  KJIT_HAS_FIELD(host, kjit_host_api, report_device_time) first. */
  void (*report_device_time)(kjit_host_context *ctx,
                             const kjit_device_time *time);
} kjit_host_api;

/** @since 1.2. When a launch ran on the device, as the backend measured it
 *  (cuda: events recorded on the launch's stream before and after it).
 *  Times are host CLOCK_MONOTONIC nanoseconds, on the timeline of the
 *  host-side hooks; the backend maps its device clock onto it. Borrowed. */
struct kjit_device_time {
  size_t struct_size;
  const void *ext;
  /** The launch's (kjit_backend_launch_args.correlation_id). */
  uint64_t correlation_id;
  const char *kernel_name;
  size_t kernel_name_len;
  int32_t device;
  /** KJIT_STATUS_OK, or the code of the error the launch raised. */
  int32_t launch_status;
  uint64_t stream;
  uint64_t start_ns; /**< The kernel began. */
  uint64_t end_ns;   /**< The kernel ended (>= start_ns). */
};

/*===----------------------------------------------------------------------===*\
|* Event payloads                                                             *|
\*===----------------------------------------------------------------------===*/

/** Kinds of kjit_arg values: ABI 1.0's description of a value, which the
 *  runtime still fills. A backend should read the 1.1 storage fields
 *  (dtype, flags, bits, bits_size) instead. Value 6 was KJIT_ARG_STRING,
 *  which nothing ever produced; it is retired and never reused. */
enum {
  KJIT_ARG_NONE = 0,   /**< None / null pointer: no value field is set. */
  KJIT_ARG_INT = 1,    /**< int_value. */
  KJIT_ARG_UINT = 2,   /**< uint_value. */
  KJIT_ARG_FLOAT = 3,  /**< float_value. */
  KJIT_ARG_BOOL = 4,   /**< int_value, 0 or 1. */
  KJIT_ARG_POINTER = 5 /**< uint_value holds the device address. */
};

/** @since 1.1. Type codes of scalars and of pointer elements. The values are
 *  fixed and never reused; new types are appended. They cover the runtime's
 *  dtypes (include/kjit/Model/DType.h) by canonical name; the runtime maps
 *  between the two explicitly, never through enumerator order. */
enum {
  KJIT_DTYPE_UNKNOWN = 0, /**< Not set, or not known to the producer. */
  KJIT_DTYPE_I1 = 1,      /**< bool: one byte holding 0 or 1. */
  KJIT_DTYPE_I8 = 2,
  KJIT_DTYPE_I16 = 3,
  KJIT_DTYPE_I32 = 4,
  KJIT_DTYPE_I64 = 5,
  KJIT_DTYPE_U8 = 6,
  KJIT_DTYPE_U16 = 7,
  KJIT_DTYPE_U32 = 8,
  KJIT_DTYPE_U64 = 9,
  KJIT_DTYPE_FP16 = 10,     /**< IEEE binary16. */
  KJIT_DTYPE_BF16 = 11,     /**< bfloat16. */
  KJIT_DTYPE_FP32 = 12,     /**< IEEE binary32. */
  KJIT_DTYPE_FP64 = 13,     /**< IEEE binary64. */
  KJIT_DTYPE_FP8E4NV = 14,  /**< float8_e4m3fn. */
  KJIT_DTYPE_FP8E5 = 15,    /**< float8_e5m2. */
  KJIT_DTYPE_FP8E4B15 = 16, /**< Triton's fp8e4b15 (bias 15). */
  KJIT_DTYPE_FP8E4B8 = 17,  /**< float8_e4m3fnuz. */
  KJIT_DTYPE_FP8E5B16 = 18  /**< float8_e5m2fnuz. */
};

/** @since 1.1. Bits of kjit_arg.flags. */
/** The argument is a pointer: bits is the device address, dtype the element
 *  type, bits_size the size of an address (8). */
#define KJIT_ARG_FLAG_POINTER ((uint32_t)1 << 0)
/** With KJIT_ARG_FLAG_POINTER: a read-only pointer ("*k" types). An access
 *  qualifier, not storage: a backend need not check it. */
#define KJIT_ARG_FLAG_CONST ((uint32_t)1 << 1)
/** With KJIT_ARG_FLAG_POINTER: None was passed; bits is 0. */
#define KJIT_ARG_FLAG_NULL ((uint32_t)1 << 2)

/** One bound kernel argument. Borrowed for the call. Arrays of arguments are
 *  passed as arrays of pointers, so that a struct_size larger than the
 *  reader's sizeof never breaks indexing.
 *
 *  Since 1.1 the runtime passes every launch argument as storage: the value
 *  encoded in the parameter's signature type, computed once per launch from
 *  what the binder checked, so that a backend copies bytes and converts
 *  nothing (it never parses `type` or rounds floats). Read the 1.1 fields
 *  only when KJIT_HAS_FIELD(arg, kjit_arg, bits_size) holds. */
typedef struct kjit_arg {
  size_t struct_size;
  const void *ext;
  const char *name; /**< Parameter name. */
  size_t name_len;
  /** The parameter's signature type as text: "*fp32", "i32", "constexpr".
   *  Kept beside the 1.1 codes because it is all a constexpr parameter has,
   *  and what hooks and backends' messages show; pre_run arguments, not yet
   *  bound to a signature, carry a description of the value instead. A
   *  backend reads dtype and flags and never parses it. */
  const char *type;
  size_t type_len;
  int32_t kind;          /**< KJIT_ARG_*. */
  uint32_t is_constexpr; /**< 1 for a constexpr parameter. */
  int64_t int_value;
  uint64_t uint_value;
  double float_value;
  /** Reserved: always NULL and 0 (meant for the string kind that nothing
   *  produced). KJIT_STRUCT_SIZE(kjit_arg, string_len) is 1.0's size. */
  const char *string_value;
  size_t string_len;

  /** @since 1.1. KJIT_DTYPE_*: the scalar's type or, with
   *  KJIT_ARG_FLAG_POINTER, the pointer's element type (KJIT_DTYPE_I8 for
   *  None, whose signature type is "*i8"). 0 where no value is bound to a
   *  signature type: pre_run arguments, constexpr parameters. */
  int32_t dtype;
  /** @since 1.1. KJIT_ARG_FLAG_* bits; 0 for a scalar. */
  uint32_t flags;
  /** @since 1.1. The value encoded in the parameter's signature type, in the
   *  low bits_size bytes (the bytes above are zero): two's complement for
   *  integers, 0 or 1 for i1, the IEEE-754 bits for floats (fp16 and bf16
   *  rounded to nearest even straight from the launch value, never through
   *  fp32), the address for pointers. On a little-endian device the first
   *  bits_size bytes of `bits` in memory are the parameter's storage. */
  uint64_t bits;
  /** @since 1.1. Bytes of storage: 1, 2, 4 or 8 (8 for pointers); 0 where
   *  dtype is 0. */
  uint32_t bits_size;
  uint32_t reserved1; /**< @since 1.1. Zero. */
} kjit_arg;

/** What the cache and compiled hooks learn about a compile. Borrowed. */
typedef struct kjit_compile_info {
  size_t struct_size;
  const void *ext;
  const char *kernel_name;
  size_t kernel_name_len;
  const char *key; /**< The specialization key selecting the cache entry. */
  size_t key_len;
  /** Readable specialization: `name[num_warps=4, ...](x: *fp32, n: i32)`. */
  const char *repr;
  size_t repr_len;
  /** The specialization record of this compile as one line of JSON: the
   *  record documented in docs/Specialization.md, which owns its schema. */
  const char *compile_json;
  size_t compile_json_len;
  const char *target; /**< Target name, e.g. "cuda" or "host". */
  size_t target_len;
  int32_t device;     /**< Device index on the target. */
  uint32_t is_warmup; /**< 1 when compiling for warmup (no launch follows). */
} kjit_compile_info;

/** Answers of the cache hook. */
enum {
  KJIT_CACHE_CONTINUE = 0, /**< Compile as usual (the default). */
  KJIT_CACHE_SKIP = 1      /**< Do not compile; the launch returns no kernel. */
};

/** Payload of the cache hook, which runs before codegen. Borrowed. */
typedef struct kjit_cache_event {
  size_t struct_size;
  const void *ext;
  const kjit_compile_info *info;
} kjit_cache_event;

/** Payload of the compiled hook, which runs after codegen. Borrowed. */
typedef struct kjit_compiled_event {
  size_t struct_size;
  const void *ext;
  const kjit_compile_info *info;
  const char *artifact_format; /**< "ptx", "elf-shared-object", ... */
  size_t artifact_format_len;
  const uint8_t *artifact; /**< The artifact's bytes. */
  size_t artifact_size;
  const char *metadata_json; /**< Artifact metadata (JSON object). */
  size_t metadata_json_len;
  uint64_t compile_ns; /**< Wall time of the compile in ns; 0 if unknown. */
} kjit_compiled_event;

/** Payload of the launch enter and exit hooks. The same event, with the same
 *  correlation_id, reaches enter and exit. Borrowed. */
typedef struct kjit_launch_event {
  size_t struct_size;
  const void *ext;
  /** Unique in the process, increasing in launch order, never 0. */
  uint64_t correlation_id;
  const char *kernel_name;
  size_t kernel_name_len;
  const char *key;
  size_t key_len;
  uint32_t grid[3]; /**< Programs per dimension (unused ones are 1). */
  uint32_t num_warps;
  int32_t device;
  uint32_t reserved0; /**< Zero. */
  /** The backend's stream handle, as an integer: what the launch got in
   *  kjit_backend_launch_args.stream (see "Streams" there). */
  uint64_t stream;
  /** Launch metadata as a JSON object (a kernel's launch_metadata callback
   *  adds fields); empty when there is none. */
  const char *metadata_json;
  size_t metadata_json_len;
  size_t num_args;
  const kjit_arg *const *args;
  /** Exit only: KJIT_STATUS_OK or the code of the failed launch. On an
   *  asynchronous backend (cuda) OK means "enqueued", not "completed": the
   *  kernel may still be running, and an error it raises surfaces later
   *  (kjit_host_api.report_async_error). */
  int32_t launch_status;
} kjit_launch_event;

/** Payload of the pre-run hook: every launch's arguments, before binding to
 *  a cache entry. Borrowed. The arguments are not bound to signature types
 *  yet: their 1.1 storage fields are 0. */
typedef struct kjit_pre_run_event {
  size_t struct_size;
  const void *ext;
  const char *kernel_name;
  size_t kernel_name_len;
  size_t num_args;
  const kjit_arg *const *args;
} kjit_pre_run_event;

/*===----------------------------------------------------------------------===*\
|* Hook table                                                                 *|
\*===----------------------------------------------------------------------===*/

/** Hooks of one plugin. Static storage of the plugin. Any slot may be NULL.
 *  `self` is the instance pointer init returned. With several plugins, hooks
 *  run in load order, launch_exit in reverse load order. A hook that returns
 *  a status is reported and the chain goes on; the host destroys the status.
 */
typedef struct kjit_hook_table {
  size_t struct_size;
  const void *ext;
  /** Before a compile. Write KJIT_CACHE_SKIP to *decision to skip it (it
   *  starts as KJIT_CACHE_CONTINUE); any plugin answering skip wins, and
   *  every plugin is still called. */
  kjit_status *(*cache)(void *self, const kjit_cache_event *event,
                        int32_t *decision);
  /** After a compile, with the artifact. */
  kjit_status *(*compiled)(void *self, const kjit_compiled_event *event);
  /** Before a launch. *correlation_data is this plugin's slot for this launch
   *  (starts at 0), handed back to launch_exit. */
  kjit_status *(*launch_enter)(void *self, const kjit_launch_event *event,
                               uint64_t *correlation_data);
  /** After a launch; called for every plugin that has it, even when the
   *  plugin's launch_enter failed. */
  kjit_status *(*launch_exit)(void *self, const kjit_launch_event *event,
                              uint64_t *correlation_data);
  /** Before every launch, with its arguments. */
  kjit_status *(*pre_run)(void *self, const kjit_pre_run_event *event);
  /** @since 1.2. When a launch has completed on the device, with its device
   *  time, matched to launch_enter by correlation_id. While any plugin has
   *  this slot, the host asks backends that can (describe's launch_flags)
   *  to time every launch; a launch on one that cannot reaches no
   *  launch_complete. Runs on whichever thread the backend reports from:
   *  an asynchronous backend's own, after launch_exit or concurrently with
   *  it; a synchronous one's (host) before launch_exit. */
  kjit_status *(*launch_complete)(void *self, const kjit_device_time *time);
} kjit_hook_table;

/*===----------------------------------------------------------------------===*\
|* Backend table                                                              *|
\*===----------------------------------------------------------------------===*/

/* Frozen like the rest of the ABI since the CUDA backend shipped against it
 * (provisional from 1.0 to 1.4).
 *
 * Devices. A backend drives device_count devices, numbered from 0; every
 * `device` field names one of them, and a backend refuses any other.
 *
 * Streams. `stream` is a stream handle of the backend as an integer. It is
 * the caller's: the backend never creates or destroys it.
 *  - cuda: a CUstream. 0 is the legacy default stream, 0x2 the per-thread
 *    default stream (CU_STREAM_PER_THREAD), 0x1 CU_STREAM_LEGACY.
 *  - host: ignored; a launch has completed when launch returns.
 *
 * Completion. An asynchronous backend (cuda) returns from launch once the
 * work is enqueued: a NULL status means "enqueued", and so does
 * launch_status in the launch_exit hook. An error the kernel raises later
 * is returned by the entry that finds it (synchronize, a later launch) and,
 * when no entry the host waits on will see it, reported with
 * kjit_host_api.report_async_error.
 *
 * Threading. The host calls every entry from any thread: an application's
 * launching threads, the thread that misses the cache and compiles, the one
 * that loaded the plugin. A backend makes its context current on every
 * entry that needs one (e.g. the device's primary context with
 * cuCtxSetCurrent), and assumes neither that the calling thread has one nor
 * that two entries come from the same thread. For a plugin with
 * KJIT_CAP_THREAD_SAFE (without it, the host serializes every entry):
 *  - describe, device_count and fingerprint may run concurrently with any
 *    entry;
 *  - parse_options (deprecated), finalize and load may run concurrently with
 *    each other and with launches, for the same device or different ones;
 *  - launch may run concurrently with launch, also of the same kernel handle
 *    and on the same stream; synchronize with launches;
 *  - never concurrently, which the host guarantees: launch and unload of
 *    the same kernel handle (no launch of a handle starts once its unload
 *    has begun, and unload waits for every launch of it to return), and
 *    destroy_options with an entry given the same options handle.
 */

/** One artifact format a backend accepts ("ptx", "elf-shared-object",
 *  "mlir-bytecode", ...). Static storage of the plugin until fini. */
typedef struct kjit_artifact_format {
  size_t struct_size;
  const void *ext;
  const char *name;
  size_t name_len;
} kjit_artifact_format;

/** A backend option (`name=value`, both strings). Borrowed. */
typedef struct kjit_option {
  size_t struct_size;
  const void *ext;
  const char *name;
  size_t name_len;
  const char *value;
  size_t value_len;
} kjit_option;

/** Kinds of parameters a specialization attribute can hold for. */
enum {
  KJIT_SPEC_ON_POINTERS = 1u << 0, /**< tensors (not None) */
  KJIT_SPEC_ON_INTEGERS = 1u << 1  /**< integer scalars (bool excluded) */
};

/** The most attributes one backend may describe. */
#define KJIT_MAX_SPEC_ATTRIBUTES 8

/** @since 1.3. A specialization attribute of a backend: a property of a
 *  launch value that the backend's code generation can use, as Triton's HIP
 *  backend marks pointers whose buffer fits in 32-bit offsets. Where it
 *  holds it joins the cache key (`x:*fp32:D+name`), the record
 *  (`attrs.name`: the parameters it holds for), the hooks (through the
 *  record) and the IR (`kjit.spec_attrs` on the parameter). */
typedef struct kjit_spec_attribute {
  size_t struct_size;
  const void *ext;
  /** [a-z0-9_]+, at most 64 bytes; not "divisibility_16" or
   *  "equal_to_1"; unique within the backend. */
  const char *name;
  size_t name_len;
  uint32_t kinds;     /**< KJIT_SPEC_ON_* bits: which parameters to ask */
  uint32_t reserved1; /**< Zero. */
} kjit_spec_attribute;

/** describe: the target and one device's attributes. Cheap and side-effect
 *  free: no device initialization, no context. Out fields are written only
 *  where the caller's struct_size covers them. */
typedef struct kjit_backend_describe_args {
  size_t struct_size;
  const void *ext;
  int32_t device; /**< in: device index. */
  /* out: strings and arrays are static storage of the plugin until fini. */
  const char *target; /**< out: "cuda", "host", ... */
  size_t target_len;
  const char *arch; /**< out: "sm_90", "x86_64", ... */
  size_t arch_len;
  uint32_t warp_size; /**< out: threads per warp. */
  size_t num_formats; /**< out: accepted formats, most preferred first. */
  const kjit_artifact_format *const *formats;

  /* @since 1.1. out: device attributes; 0 (all zero for uuid) = unknown. */
  /** @since 1.1. Multiprocessors (cuda: SMs); host: worker threads. */
  uint32_t multiprocessor_count;
  /** @since 1.1. Most threads one program (block) may have. */
  uint32_t max_threads_per_block;
  /** @since 1.1. Most bytes of dynamic shared memory one launch may ask for
   *  (cuda: the opt-in maximum, which needs cuFuncSetAttribute above 48 KiB);
   *  0 also where the backend has none (host). */
  uint64_t max_shared_memory_per_block;
  /** @since 1.1. The device's UUID (cuda: cuDeviceGetUuid), for
   *  fingerprints and identity across processes; all zero when unknown. */
  uint8_t uuid[16];

  /** @since 1.2. out: `name=value` options that every compile of this
   *  backend's target passes to the compiler target, which validates them
   *  (cuda: "ptx" = the PTX ISA version, "libdevice" = the path of
   *  libdevice.10.bc). The backend owns its toolchain's discovery; the
   *  options join the cache key through the fingerprint. Static storage of
   *  the plugin until fini. */
  size_t num_compile_options;
  const kjit_option *const *compile_options;
  /** @since 1.2. out: the KJIT_LAUNCH_* bits this backend honours; the host
   *  passes KJIT_LAUNCH_TIMED only when it is listed. 0: unknown. */
  uint32_t launch_flags;
  uint32_t reserved1; /**< @since 1.2. Zero. */
  /** @since 1.3. out: the backend's own specialization attributes, at most
   *  KJIT_MAX_SPEC_ATTRIBUTES, in a fixed order: bit i of specialize's
   *  answer is spec_attributes[i]. Static storage of the plugin until
   *  fini. 0: the backend adds nothing to the runtime's specialization. */
  size_t num_spec_attributes;
  const kjit_spec_attribute *const *spec_attributes;
} kjit_backend_describe_args;

/** Deprecated. parse_options: validate `name=value` options and turn them
 *  into an opaque handle. The runtime never calls it: what a backend asks of
 *  the compiler is describe's compile_options (1.2), and its own settings
 *  come from its environment. Only tools call it (kjit's backend test
 *  drivers check that a backend refuses options it does not take). A
 *  backend may leave parse_options and destroy_options NULL. They, this
 *  struct and options_handle keep their names within major 1: backends of
 *  every released minor fill the slots, and a rename would break their
 *  sources to gain nothing in layout. */
typedef struct kjit_backend_parse_options_args {
  size_t struct_size;
  const void *ext;
  size_t num_options;                /**< in */
  const kjit_option *const *options; /**< in, borrowed */
  /** out: plugin-owned handle, freed with destroy_options; may be NULL. */
  void *options_handle;
} kjit_backend_parse_options_args;

/** fingerprint: bytes that join every cache key for this backend and
 *  device: toolchain, arch, the device or CPU the code is built for, options
 *  that change code. Equal on every call for the same inputs in a process. */
typedef struct kjit_backend_fingerprint_args {
  size_t struct_size;
  const void *ext;
  int32_t device;          /**< in */
  void *options_handle;    /**< in: deprecated; NULL from the runtime */
  kjit_buffer fingerprint; /**< out: produced by the plugin */
} kjit_backend_fingerprint_args;

/** finalize: artifact bytes of a named format in, loadable bytes for one
 *  device out (e.g. ptx -> cubin for that device's sm_XX). */
typedef struct kjit_backend_finalize_args {
  size_t struct_size;
  const void *ext;
  const char *format; /**< in: one of the described formats */
  size_t format_len;
  const uint8_t *artifact; /**< in, borrowed */
  size_t artifact_size;
  const char *kernel_name; /**< in */
  size_t kernel_name_len;
  void *options_handle; /**< in: deprecated; NULL from the runtime */
  kjit_buffer loadable; /**< out: produced by the plugin */
  /** @since 1.1. in: the device the loadable bytes are for. A 1.0 host
   *  does not set it (struct_size): then device 0. */
  int32_t device;
  uint32_t reserved0; /**< @since 1.1. Zero. */
  /** @since 1.5. out: what the backend learned of the kernel while
   *  finalizing, as a JSON object of at most 64 KiB (cuda: the registers,
   *  barriers, static shared memory, stack frame and spill bytes the
   *  finalizer reports, as ptxas -v does); empty when it has nothing to
   *  say. The host adds it to the compile metadata as "finalize" (the
   *  compiled hook's metadata_json and the cached entry's). A 1.4 host does
   *  not offer it: check KJIT_HAS_FIELD before writing it. */
  kjit_buffer info;
} kjit_backend_finalize_args;

/** load: loadable bytes -> kernel handle on a device. */
typedef struct kjit_backend_load_args {
  size_t struct_size;
  const void *ext;
  const uint8_t *loadable; /**< in, borrowed (copy what you keep) */
  size_t loadable_size;
  const char *kernel_name; /**< in */
  size_t kernel_name_len;
  int32_t device; /**< in */
  void *kernel;   /**< out: plugin-owned, freed with unload */
  /** @since 1.4. in: the arguments every launch of this kernel will pass,
   *  in launch order, as a template: the signature fields (name, type,
   *  dtype, flags, bits_size) are set, the values are not. The host's
   *  compiled kernels pass it; a caller that does not know the launches
   *  passes NULL and 0. Borrowed for the call. */
  size_t num_args;
  const kjit_arg *const *args;
  /** @since 1.4. out: 1 when the backend checked `args` against the loaded
   *  kernel once and for all, so that a launch of it may pass `values` in
   *  place of `args` (kjit_backend_launch_args); 0 (the default): launches
   *  pass `args`. */
  uint32_t takes_values;
  uint32_t reserved1; /**< @since 1.4. Zero. */
} kjit_backend_load_args;

/** @since 1.1. Bits of kjit_backend_launch_args.flags. A backend refuses a
 *  flag it cannot honour (KJIT_STATUS_UNIMPLEMENTED) rather than ignore it;
 *  a 1.0 backend cannot see them, so the host refuses to pass them to one. */
/** Every program resident at once (cuda: cooperative launch,
 *  CU_LAUNCH_ATTRIBUTE_COOPERATIVE). */
#define KJIT_LAUNCH_COOPERATIVE ((uint32_t)1 << 0)
/** Programmatic dependent launch: the kernel may start before the previous
 *  one on the stream has finished (cuda:
 *  CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION). */
#define KJIT_LAUNCH_PDL ((uint32_t)1 << 1)
/** @since 1.2. Measure the launch on the device and report it with
 *  kjit_host_api.report_device_time once it has completed, without making
 *  the launch wait (cuda: events, not a synchronize). The host sets it only
 *  for a backend whose describe lists it in launch_flags. */
#define KJIT_LAUNCH_TIMED ((uint32_t)1 << 2)

/** launch: run a loaded kernel on a stream. See "Streams" and "Completion"
 *  above for what the stream is and what returning means. */
typedef struct kjit_backend_launch_args {
  size_t struct_size;
  const void *ext;
  void *kernel;                 /**< in: from load */
  uint32_t grid[3];             /**< in */
  uint32_t num_warps;           /**< in */
  uint32_t shared_memory_bytes; /**< in: dynamic shared memory */
  uint64_t stream;              /**< in: stream handle, 0 = default */
  size_t num_args;              /**< in: non-constexpr arguments */
  const kjit_arg *const *args;  /**< in, borrowed */
  /** @since 1.1. in: KJIT_LAUNCH_* bits; 0: none. */
  uint32_t flags;
  /** @since 1.1. in: programs per cluster in each dimension (cuda:
   *  CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION; grid is a multiple of it); all
   *  zero: no clusters. */
  uint32_t cluster[3];
  /** @since 1.2. in: the launch's correlation id (the launch hooks'), for
   *  report_device_time; 0 when no hook follows launches. */
  uint64_t correlation_id;
  /** @since 1.4. in: NULL, or, only for a kernel whose load answered
   *  takes_values, each argument's storage (what kjit_arg.bits would hold:
   *  the value in the low bits_size bytes, the bytes above zero), num_args
   *  of them in the order of the load's template. `args` is then NULL: the
   *  signature fields are the template's. The host passes it while no
   *  launch hook needs the arguments described. */
  const uint64_t *values;
} kjit_backend_launch_args;

/** unload: release a kernel handle. */
typedef struct kjit_backend_unload_args {
  size_t struct_size;
  const void *ext;
  void *kernel; /**< in */
} kjit_backend_unload_args;

/** @since 1.1. device_count: how many devices the backend drives. Cheap: it
 *  may initialize the driver (cuInit), never a context. */
typedef struct kjit_backend_device_count_args {
  size_t struct_size;
  const void *ext;
  /** out: devices 0 to count - 1. 0 (no driver, no device) is an answer,
   *  not an error. */
  int32_t count;
  uint32_t reserved0; /**< Zero. */
} kjit_backend_device_count_args;

/** @since 1.1. synchronize: wait until everything enqueued on a stream of a
 *  device before the call has completed, and return the first error it
 *  raised (a sticky error of the device is returned again). */
typedef struct kjit_backend_synchronize_args {
  size_t struct_size;
  const void *ext;
  int32_t device;     /**< in */
  uint32_t reserved0; /**< Zero. */
  uint64_t stream;    /**< in: as in launch */
} kjit_backend_synchronize_args;

/** @since 1.2. allocate: device memory for tools and tests (applications
 *  bring their own, as Triton leaves memory to the framework). The address
 *  is what a pointer argument of a launch on that device takes, aligned to
 *  at least 256 bytes. size 0 is an error. */
typedef struct kjit_backend_allocate_args {
  size_t struct_size;
  const void *ext;
  int32_t device;     /**< in */
  uint32_t reserved0; /**< Zero. */
  uint64_t size;      /**< in: bytes, > 0 */
  uint64_t address;   /**< out */
} kjit_backend_allocate_args;

/** @since 1.2. deallocate: frees what allocate returned, after every launch
 *  that uses it has completed (the caller synchronizes). */
typedef struct kjit_backend_deallocate_args {
  size_t struct_size;
  const void *ext;
  int32_t device;     /**< in */
  uint32_t reserved0; /**< Zero. */
  uint64_t address;   /**< in: from allocate on the same device */
} kjit_backend_deallocate_args;

/** @since 1.2. Values of kjit_backend_copy_args.direction. */
#define KJIT_COPY_HOST_TO_DEVICE 1u
#define KJIT_COPY_DEVICE_TO_HOST 2u

/** @since 1.2. copy: between host memory and memory from allocate, ordered
 *  after the work enqueued on `stream` before it; the call returns once the
 *  copy has completed (an error a kernel raised earlier on the stream is
 *  returned here). */
typedef struct kjit_backend_copy_args {
  size_t struct_size;
  const void *ext;
  int32_t device;     /**< in */
  uint32_t direction; /**< in: KJIT_COPY_* */
  uint64_t address;   /**< in: device side, inside one allocation */
  void *host;         /**< in: host side, `size` bytes */
  uint64_t size;      /**< in */
  uint64_t stream;    /**< in: as in launch */
} kjit_backend_copy_args;

/** @since 1.3. specialize: which of the described attributes hold for one
 *  launch value. Called on every launch (the cache hit path included) for
 *  each non-constexpr parameter whose kind an attribute names, so it must be
 *  cheap, thread-safe and a pure function of its inputs; an error fails the
 *  launch with its message. */
typedef struct kjit_backend_specialize_args {
  size_t struct_size;
  const void *ext;
  int32_t device;       /**< in: the launch's device */
  uint32_t param_index; /**< in: the parameter's position in the kernel */
  int32_t dtype;        /**< in: KJIT_DTYPE_*, as kjit_arg.dtype */
  uint32_t flags;       /**< in: KJIT_ARG_FLAG_*, as kjit_arg.flags */
  uint64_t bits;        /**< in: the value as kjit_arg.bits (the address) */
  uint32_t attributes;  /**< out: bit i set = spec_attributes[i] holds */
  uint32_t reserved1;   /**< Zero. */
} kjit_backend_specialize_args;

/** A backend: finalizes, loads, launches and unloads artifacts. Static
 *  storage of the plugin. Every slot may be NULL ("unsupported"); one
 *  backend per plugin. */
typedef struct kjit_backend_table {
  size_t struct_size;
  const void *ext;
  const char *name; /**< Backend name ("cuda", "host"); static. */
  size_t name_len;
  kjit_status *(*describe)(void *self, kjit_backend_describe_args *args);
  kjit_status *(*fingerprint)(void *self, kjit_backend_fingerprint_args *args);
  /** Deprecated (kjit_backend_parse_options_args); may be NULL. */
  kjit_status *(*parse_options)(void *self,
                                kjit_backend_parse_options_args *args);
  void (*destroy_options)(void *self, void *options_handle);
  kjit_status *(*finalize)(void *self, kjit_backend_finalize_args *args);
  kjit_status *(*load)(void *self, kjit_backend_load_args *args);
  kjit_status *(*launch)(void *self, kjit_backend_launch_args *args);
  kjit_status *(*unload)(void *self, kjit_backend_unload_args *args);
  /** @since 1.1. NULL: the host assumes one device, device 0. */
  kjit_status *(*device_count)(void *self,
                               kjit_backend_device_count_args *args);
  /** @since 1.1. NULL: launches complete before launch returns (as 1.0
   *  promised), so there is nothing to wait for. */
  kjit_status *(*synchronize)(void *self, kjit_backend_synchronize_args *args);
  /** @since 1.2. Device memory; all three NULL: the device reads host
   *  memory (a tool passes host pointers). */
  kjit_status *(*allocate)(void *self, kjit_backend_allocate_args *args);
  kjit_status *(*deallocate)(void *self, kjit_backend_deallocate_args *args);
  kjit_status *(*copy)(void *self, kjit_backend_copy_args *args);
  /** @since 1.3. NULL: no attributes of its own (describe's
   *  spec_attributes must then be empty). */
  kjit_status *(*specialize)(void *self, kjit_backend_specialize_args *args);
} kjit_backend_table;

/*===----------------------------------------------------------------------===*\
|* Cache store table                                                          *|
\*===----------------------------------------------------------------------===*/

/* Frozen like the rest of the ABI since the Redis store shipped against it
 * (provisional from 1.0 to 1.4).
 *
 * A store is untrusted, advisory byte storage: keys and values are opaque
 * bytes, and a store never has to understand them. The host uses the first
 * store loaded as its fleet cache (docs/RemoteCache.md): it signs every
 * value and verifies it (HMAC, key echo, digest) before anything of it
 * reaches the disk cache or a loader, which is never the store's duty. An
 * error is a miss, never a failed launch. Its code matters:
 * KJIT_STATUS_DEADLINE_EXCEEDED is a timeout; KJIT_STATUS_CANCELLED means
 * "not attempted" (an open circuit breaker) and is counted, not logged;
 * KJIT_STATUS_OUT_OF_RANGE from get is a stored value the store refused
 * to hand over (above its size limit) and counts as a rejected value; any
 * other code is logged with the store's message.
 *
 * Timeouts: the host cannot interrupt a call. Honouring timeout_ms, and
 * answering a miss or an error when it runs out, is the store's duty.
 *
 * Threading: get runs on the compiling thread (a launch waits for it); put
 * may run on a background thread after the compile; remove and describe on
 * any thread. Without KJIT_CAP_THREAD_SAFE the host serializes them.
 */

/** get: look a key up. A miss is found = 0 and a NULL status. */
typedef struct kjit_cache_get_args {
  size_t struct_size;
  const void *ext;
  const uint8_t *key; /**< in, borrowed */
  size_t key_size;
  /** in: answer (a miss, or an error) within this many milliseconds; 0:
   *  the store's own default. The store's duty (see above). */
  uint32_t timeout_ms;
  uint32_t found;    /**< out: 1 when value holds an entry */
  kjit_buffer value; /**< out: produced by the plugin */
} kjit_cache_get_args;

/** @since 1.1. Bits of kjit_cache_put_args.flags. A store refuses a flag it
 *  cannot honour (KJIT_STATUS_UNIMPLEMENTED) rather than ignore it. */
/** Store only when the key has no entry (Redis SET NX). When it has one,
 *  keep it and return NULL or a KJIT_STATUS_ALREADY_EXISTS status; the host
 *  takes both as "not stored", not as a failure. */
#define KJIT_CACHE_PUT_IF_ABSENT ((uint32_t)1 << 0)

/** put: store a value under a key (overwriting is allowed unless flags say
 *  otherwise). */
typedef struct kjit_cache_put_args {
  size_t struct_size;
  const void *ext;
  const uint8_t *key; /**< in, borrowed */
  size_t key_size;
  const uint8_t *value; /**< in, borrowed */
  size_t value_size;
  uint32_t timeout_ms; /**< in: as in get */
  /** @since 1.1. Zero, never read: it was tail padding in 1.0, which a 1.0
   *  host's struct_size covers without having set it. */
  uint32_t reserved0;
  uint32_t flags; /**< @since 1.1. in: KJIT_CACHE_PUT_* bits; 0: none. */
  /** @since 1.1. in: let the entry expire after this many seconds (Redis
   *  EX); 0: no expiry asked for. */
  uint32_t ttl_seconds;
} kjit_cache_put_args;

/** @since 1.1. remove: delete a key's entry (for pruning and verification
 *  tools). */
typedef struct kjit_cache_remove_args {
  size_t struct_size;
  const void *ext;
  const uint8_t *key; /**< in, borrowed */
  size_t key_size;
  uint32_t timeout_ms; /**< in: as in get */
  uint32_t found;      /**< out: 1 when an entry was removed, 0 when none */
} kjit_cache_remove_args;

/** @since 1.1. describe: what the store is. Cheap and side-effect free: no
 *  connection is made. */
typedef struct kjit_cache_store_describe_args {
  size_t struct_size;
  const void *ext;
  /** out: the largest value put accepts, in bytes; 0: no limit known. */
  uint64_t max_value_size;
  /** out: 1 when entries live outside this machine and are shared with
   *  other machines (Redis); 0: local. */
  uint32_t is_remote;
  uint32_t reserved0; /**< Zero. */
} kjit_cache_store_describe_args;

/** A cache store: get, put, remove and describe on opaque byte keys and
 *  values (see the section's comment for what the host does with them).
 *  Static storage of the plugin; slots may be NULL; one store per plugin. */
typedef struct kjit_cache_store_table {
  size_t struct_size;
  const void *ext;
  const char *name; /**< Store name ("redis", ...); static. */
  size_t name_len;
  kjit_status *(*get)(void *self, kjit_cache_get_args *args);
  kjit_status *(*put)(void *self, const kjit_cache_put_args *args);
  /** @since 1.1. NULL: entries cannot be removed. */
  kjit_status *(*remove)(void *self, kjit_cache_remove_args *args);
  /** @since 1.1. NULL: no limit known, local. */
  kjit_status *(*describe)(void *self, kjit_cache_store_describe_args *args);
} kjit_cache_store_table;

/*===----------------------------------------------------------------------===*\
|* Plugin table and negotiation                                               *|
\*===----------------------------------------------------------------------===*/

/** Capability bits of kjit_plugin_api.capabilities. Absence is the
 *  conservative default. */
/** Every entry may run concurrently with any other (the backend section
 *  narrows this per entry). Without it the host serializes all entries of
 *  the library, across every host object of the process. */
#define KJIT_CAP_THREAD_SAFE ((uint64_t)1 << 0)

/** What a plugin is. Static storage of the plugin, never freed (plugins are
 *  never unloaded by default). */
typedef struct kjit_plugin_api {
  size_t struct_size;
  const void *ext;
  const char *name; /**< Short name used in messages ("trace"). */
  size_t name_len;
  const char *version; /**< Free-form plugin version. */
  size_t version_len;
  uint64_t capabilities; /**< KJIT_CAP_* bits. */
  /** Called once after negotiation, on the loading thread, before any other
   *  entry. Store host and ctx; set *self to the instance pointer that every
   *  other entry receives. On failure return a status: the plugin is then
   *  dropped and fini is not called, so clean up first. May be NULL.
   *  A process may hold several hosts (one per runtime object), each of
   *  which loads the plugin and calls init once with its own ctx: keep state
   *  in *self, and reference-count what is process-wide. */
  kjit_status *(*init)(const kjit_host_api *host, kjit_host_context *ctx,
                       void **self);
  /** Called once per successful init, at that host's shutdown, after every
   *  other entry of that instance has returned; nothing is called with its
   *  self afterwards. Do the final work (flush, report) here, never in a
   *  static destructor or atexit. May be NULL. */
  void (*fini)(void *self);
  const kjit_hook_table *hooks;              /**< NULL: no hooks. */
  const kjit_backend_table *backend;         /**< NULL: no backend. */
  const kjit_cache_store_table *cache_store; /**< NULL: no cache store. */
} kjit_plugin_api;

/** In/out argument of the entry symbol. */
typedef struct kjit_negotiate {
  size_t struct_size; /**< in: the host's sizeof(kjit_negotiate). */
  const void *ext;
  uint32_t host_abi_major;   /**< in: KJIT_ABI_MAJOR of the host. */
  uint32_t host_min_minor;   /**< in: oldest minor the host accepts. */
  uint32_t host_max_minor;   /**< in: newest minor the host speaks. */
  uint32_t plugin_abi_major; /**< out: the major the plugin implements. */
  uint32_t plugin_abi_minor; /**< out: the minor the plugin was built for. */
  uint32_t reserved0;        /**< Zero. */
  const kjit_plugin_api *plugin; /**< out: static table. */
  /** out (on refusal): why, as a static string. */
  const char *reject_reason;
  size_t reject_reason_len;
} kjit_negotiate;

/** Signature of the entry symbol. It must be side-effect free and callable
 *  any number of times: fill `io` and return KJIT_STATUS_OK, or refuse with
 *  another code (e.g. KJIT_STATUS_FAILED_PRECONDITION when host_max_minor is
 *  older than the minor the plugin needs) and set reject_reason. */
typedef int32_t (*kjit_plugin_negotiate_fn)(kjit_negotiate *io);

/** The name of the entry symbol of ABI major 1. */
#define KJIT_PLUGIN_ENTRY_NAME "kjit_plugin_negotiate_v1"

/** The entry symbol every ABI-1 plugin exports (and nothing else). */
KJIT_PLUGIN_EXPORT int32_t kjit_plugin_negotiate_v1(kjit_negotiate *io);

#ifdef __cplusplus
}
#endif

#endif /* KJIT_C_PLUGIN_H */
