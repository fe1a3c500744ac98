/*===- kjit-c/v1.0/Plugin.h - released ABI 1.0, frozen ------------*- C -*-===*\
|*                                                                            *|
|* FROZEN: this header as released for ABI 1.0. Never edit it. Plugins may    *|
|* build against it and must keep working with every 1.x host; tests build    *|
|* a plugin against it and check its layout against kjit-c/Plugin.h.          *|
|*                                                                            *|
|* Rules that hold for every declaration below:                               *|
|*  - Every struct starts with `size_t struct_size` and                       *|
|*    `const kjit_extension *ext`. The producer of a struct sets struct_size  *|
|*    to sizeof its own view; the consumer reads a field only when            *|
|*    KJIT_HAS_FIELD says the producer knew it, and otherwise uses the        *|
|*    documented default (zero: "not set"). Out fields are written only when  *|
|*    the caller's struct_size covers them. ext is NULL or a chain of         *|
|*    kjit_extension nodes; unknown node types are skipped.                   *|
|*  - Minor versions only append fields and table slots. A NULL slot, or a    *|
|*    table too short to hold it, means "unsupported".                        *|
|*  - Errors are kjit_status objects (NULL = OK) created and destroyed only   *|
|*    through kjit_host_api; a status returned across the boundary is owned   *|
|*    by the receiver. No C++ exception, longjmp, abort or exit crosses.      *|
|*  - Inputs are borrowed for the duration of the call: copy what you keep.   *|
|*    Strings are pointer + length and need not be NUL-terminated. Whoever    *|
|*    allocates a buffer frees it, through the release function it provides.  *|
|*  - The host never holds its own locks while it calls a plugin. A plugin    *|
|*    without KJIT_CAP_THREAD_SAFE has all its entries serialized by the      *|
|*    host (re-entry from the same thread is still possible).                 *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef KJIT_C_V1_0_PLUGIN_H
#define KJIT_C_V1_0_PLUGIN_H

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
/** The newest ABI minor this header describes (append-only changes). */
#define KJIT_ABI_MINOR 0

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
|* Extensions, statuses, logging                                              *|
\*===----------------------------------------------------------------------===*/

/** A node of an extension chain. Concrete extensions embed this as their
 *  first member. Type ids below 0x40000000 are assigned by kjit (none exist in
 *  ABI 1.0); 0x40000000 | (vendor << 16) | n is left to out-of-tree vendors.
 *  Ownership: borrowed like the struct that points to it. */
typedef struct kjit_extension {
  size_t struct_size;               /**< sizeof the concrete extension. */
  const struct kjit_extension *ext; /**< The next node, or NULL. */
  uint32_t type;                    /**< Extension type id. */
} kjit_extension;

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
  const kjit_extension *ext;
  const uint8_t *data; /**< The bytes (not NUL-terminated). */
  size_t size;         /**< Number of bytes. */
  void *owner;         /**< Producer's cookie for release. */
  void (*release)(void *owner, const uint8_t *data, size_t size);
} kjit_buffer;

/** The host's function table, handed to init. Static storage of the host:
 *  valid for the life of the process. Every entry is thread-safe. */
typedef struct kjit_host_api {
  size_t struct_size;
  const kjit_extension *ext;
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
} kjit_host_api;

/*===----------------------------------------------------------------------===*\
|* Event payloads                                                             *|
\*===----------------------------------------------------------------------===*/

/** Kinds of kjit_arg values. */
enum {
  KJIT_ARG_NONE = 0,    /**< None / null pointer: no value field is set. */
  KJIT_ARG_INT = 1,     /**< int_value. */
  KJIT_ARG_UINT = 2,    /**< uint_value. */
  KJIT_ARG_FLOAT = 3,   /**< float_value. */
  KJIT_ARG_BOOL = 4,    /**< int_value, 0 or 1. */
  KJIT_ARG_POINTER = 5, /**< uint_value holds the device address. */
  KJIT_ARG_STRING = 6   /**< string_value / string_len (constexpr strings). */
};

/** One bound kernel argument. Borrowed for the call. Arrays of arguments are
 *  passed as arrays of pointers, so that a struct_size larger than the
 *  reader's sizeof never breaks indexing. */
typedef struct kjit_arg {
  size_t struct_size;
  const kjit_extension *ext;
  const char *name; /**< Parameter name. */
  size_t name_len;
  const char *type; /**< Signature type: "*fp32", "i32", "constexpr", ... */
  size_t type_len;
  int32_t kind;          /**< KJIT_ARG_*. */
  uint32_t is_constexpr; /**< 1 for a constexpr parameter. */
  int64_t int_value;
  uint64_t uint_value;
  double float_value;
  const char *string_value;
  size_t string_len;
} kjit_arg;

/** What the cache and compiled hooks learn about a compile. Borrowed. */
typedef struct kjit_compile_info {
  size_t struct_size;
  const kjit_extension *ext;
  const char *kernel_name;
  size_t kernel_name_len;
  const char *key; /**< The specialization key selecting the cache entry. */
  size_t key_len;
  /** Readable specialization: `name[num_warps=4, ...](x: *fp32, n: i32)`. */
  const char *repr;
  size_t repr_len;
  /** The JSON "compile" record: key, signature, device, constants, options,
   *  configs, specialization data, is_warmup. */
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
  const kjit_extension *ext;
  const kjit_compile_info *info;
} kjit_cache_event;

/** Payload of the compiled hook, which runs after codegen. Borrowed. */
typedef struct kjit_compiled_event {
  size_t struct_size;
  const kjit_extension *ext;
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
  const kjit_extension *ext;
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
  uint64_t stream;    /**< The backend's stream handle, as an integer. */
  /** Launch metadata as a JSON object (a kernel's launch_metadata callback
   *  adds fields); empty when there is none. */
  const char *metadata_json;
  size_t metadata_json_len;
  size_t num_args;
  const kjit_arg *const *args;
  /** Exit only: KJIT_STATUS_OK or the code of the failed launch. */
  int32_t launch_status;
} kjit_launch_event;

/** Payload of the pre-run hook: every launch's arguments, before binding to
 *  a cache entry. Borrowed. */
typedef struct kjit_pre_run_event {
  size_t struct_size;
  const kjit_extension *ext;
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
  const kjit_extension *ext;
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
} kjit_hook_table;

/*===----------------------------------------------------------------------===*\
|* Backend table                                                              *|
\*===----------------------------------------------------------------------===*/

/** One artifact format a backend accepts ("ptx", "elf-shared-object",
 *  "mlir-bytecode", ...). Static storage of the plugin until fini. */
typedef struct kjit_artifact_format {
  size_t struct_size;
  const kjit_extension *ext;
  const char *name;
  size_t name_len;
} kjit_artifact_format;

/** A backend option (`name=value`, both strings). Borrowed. */
typedef struct kjit_option {
  size_t struct_size;
  const kjit_extension *ext;
  const char *name;
  size_t name_len;
  const char *value;
  size_t value_len;
} kjit_option;

/** describe: cheap and side-effect free (no device initialization). */
typedef struct kjit_backend_describe_args {
  size_t struct_size;
  const kjit_extension *ext;
  int32_t device; /**< in: device index. */
  /* out: strings and arrays are static storage of the plugin until fini. */
  const char *target; /**< out: "cuda", "host", ... */
  size_t target_len;
  const char *arch; /**< out: "sm_90", "x86_64", ... */
  size_t arch_len;
  uint32_t warp_size; /**< out: threads per warp. */
  size_t num_formats; /**< out: accepted formats, most preferred first. */
  const kjit_artifact_format *const *formats;
} kjit_backend_describe_args;

/** parse_options: validate options and turn them into an opaque handle. */
typedef struct kjit_backend_parse_options_args {
  size_t struct_size;
  const kjit_extension *ext;
  size_t num_options;                /**< in */
  const kjit_option *const *options; /**< in, borrowed */
  /** out: plugin-owned handle, freed with destroy_options; may be NULL. */
  void *options_handle;
} kjit_backend_parse_options_args;

/** fingerprint: bytes that join every cache key for this backend
 *  (toolchain, arch, options that change code). */
typedef struct kjit_backend_fingerprint_args {
  size_t struct_size;
  const kjit_extension *ext;
  int32_t device;          /**< in */
  void *options_handle;    /**< in: from parse_options, or NULL */
  kjit_buffer fingerprint; /**< out: produced by the plugin */
} kjit_backend_fingerprint_args;

/** finalize: artifact bytes of a named format in, loadable bytes out (e.g.
 *  ptx -> cubin). */
typedef struct kjit_backend_finalize_args {
  size_t struct_size;
  const kjit_extension *ext;
  const char *format; /**< in: one of the described formats */
  size_t format_len;
  const uint8_t *artifact; /**< in, borrowed */
  size_t artifact_size;
  const char *kernel_name; /**< in */
  size_t kernel_name_len;
  void *options_handle; /**< in, or NULL */
  kjit_buffer loadable; /**< out: produced by the plugin */
} kjit_backend_finalize_args;

/** load: loadable bytes -> kernel handle on a device. */
typedef struct kjit_backend_load_args {
  size_t struct_size;
  const kjit_extension *ext;
  const uint8_t *loadable; /**< in, borrowed (copy what you keep) */
  size_t loadable_size;
  const char *kernel_name; /**< in */
  size_t kernel_name_len;
  int32_t device; /**< in */
  void *kernel;   /**< out: plugin-owned, freed with unload */
} kjit_backend_load_args;

/** launch: run a loaded kernel. */
typedef struct kjit_backend_launch_args {
  size_t struct_size;
  const kjit_extension *ext;
  void *kernel;                 /**< in: from load */
  uint32_t grid[3];             /**< in */
  uint32_t num_warps;           /**< in */
  uint32_t shared_memory_bytes; /**< in: dynamic shared memory */
  uint64_t stream;              /**< in: stream handle, 0 = default */
  size_t num_args;              /**< in: non-constexpr arguments */
  const kjit_arg *const *args;  /**< in, borrowed */
} kjit_backend_launch_args;

/** unload: release a kernel handle. */
typedef struct kjit_backend_unload_args {
  size_t struct_size;
  const kjit_extension *ext;
  void *kernel; /**< in */
} kjit_backend_unload_args;

/** A backend: finalizes, loads, launches and unloads artifacts. Static
 *  storage of the plugin. Every slot may be NULL ("unsupported"). */
typedef struct kjit_backend_table {
  size_t struct_size;
  const kjit_extension *ext;
  const char *name; /**< Backend name ("cuda", "host"); static. */
  size_t name_len;
  kjit_status *(*describe)(void *self, kjit_backend_describe_args *args);
  kjit_status *(*fingerprint)(void *self, kjit_backend_fingerprint_args *args);
  kjit_status *(*parse_options)(void *self,
                                kjit_backend_parse_options_args *args);
  void (*destroy_options)(void *self, void *options_handle);
  kjit_status *(*finalize)(void *self, kjit_backend_finalize_args *args);
  kjit_status *(*load)(void *self, kjit_backend_load_args *args);
  kjit_status *(*launch)(void *self, kjit_backend_launch_args *args);
  kjit_status *(*unload)(void *self, kjit_backend_unload_args *args);
} kjit_backend_table;

/*===----------------------------------------------------------------------===*\
|* Cache store table                                                          *|
\*===----------------------------------------------------------------------===*/

/** get: look a key up. A miss is found = 0 and a NULL status. */
typedef struct kjit_cache_get_args {
  size_t struct_size;
  const kjit_extension *ext;
  const uint8_t *key; /**< in, borrowed */
  size_t key_size;
  uint32_t timeout_ms; /**< in: give up (and report a miss) after this */
  uint32_t found;      /**< out: 1 when value holds an entry */
  kjit_buffer value;   /**< out: produced by the plugin */
} kjit_cache_get_args;

/** put: store a value under a key (overwriting is allowed). */
typedef struct kjit_cache_put_args {
  size_t struct_size;
  const kjit_extension *ext;
  const uint8_t *key; /**< in, borrowed */
  size_t key_size;
  const uint8_t *value; /**< in, borrowed */
  size_t value_size;
  uint32_t timeout_ms; /**< in */
} kjit_cache_put_args;

/** A cache store: untrusted, advisory byte storage. The host wraps every
 *  value in a record it verifies (key echo, lengths, digest, HMAC) before
 *  anything from get touches disk or a driver; a store never has to
 *  understand values. An error from get or put is a miss for the host, never
 *  a failed launch. Static storage of the plugin; slots may be NULL. */
typedef struct kjit_cache_store_table {
  size_t struct_size;
  const kjit_extension *ext;
  const char *name; /**< Store name ("redis", ...); static. */
  size_t name_len;
  kjit_status *(*get)(void *self, kjit_cache_get_args *args);
  kjit_status *(*put)(void *self, const kjit_cache_put_args *args);
} kjit_cache_store_table;

/*===----------------------------------------------------------------------===*\
|* Plugin table and negotiation                                               *|
\*===----------------------------------------------------------------------===*/

/** Capability bits of kjit_plugin_api.capabilities. Absence is the
 *  conservative default. */
#define KJIT_CAP_THREAD_SAFE ((uint64_t)1 << 0)

/** What a plugin is. Static storage of the plugin, never freed (plugins are
 *  never unloaded by default). */
typedef struct kjit_plugin_api {
  size_t struct_size;
  const kjit_extension *ext;
  const char *name; /**< Short name used in messages ("trace"). */
  size_t name_len;
  const char *version; /**< Free-form plugin version. */
  size_t version_len;
  uint64_t capabilities; /**< KJIT_CAP_* bits. */
  /** Called once after negotiation, on the loading thread, before any other
   *  entry. Store host and ctx; set *self to the instance pointer that every
   *  other entry receives. On failure return a status: the plugin is then
   *  dropped and fini is not called, so clean up first. May be NULL. */
  kjit_status *(*init)(const kjit_host_api *host, kjit_host_context *ctx,
                       void **self);
  /** Called once at host shutdown, after every other entry has returned and
   *  before nothing else is called. Do the final work (flush, report) here,
   *  never in a static destructor or atexit. May be NULL. */
  void (*fini)(void *self);
  const kjit_hook_table *hooks;              /**< NULL: no hooks. */
  const kjit_backend_table *backend;         /**< NULL: no backend. */
  const kjit_cache_store_table *cache_store; /**< NULL: no cache store. */
} kjit_plugin_api;

/** In/out argument of the entry symbol. */
typedef struct kjit_negotiate {
  size_t struct_size; /**< in: the host's sizeof(kjit_negotiate). */
  const kjit_extension *ext;
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

#endif /* KJIT_C_V1_0_PLUGIN_H */
