/*===- Internal.h - shared declarations of the cuda backend -------*- C -*-===*\
|*                                                                            *|
|* Types and functions shared by the files of libkjit-cuda.so. Nothing here   *|
|* crosses the plugin boundary: with hidden visibility and the version        *|
|* script, only kjit_plugin_negotiate_v1 is exported. docs/CudaBackend.md     *|
|* explains the design.                                                       *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef KJIT_PLUGINS_CUDA_INTERNAL_H
#define KJIT_PLUGINS_CUDA_INTERNAL_H

#include "CudaApi.h"
#include "kjit-c/Plugin.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/*===----------------------------------------------------------------------===*\
|* Statuses and logging (Status.c)                                            *|
\*===----------------------------------------------------------------------===*/

/** The host's API table, stored by the first init (every host's table is
 *  process-wide static storage, and statuses from any of them are alike). */
extern const kjit_host_api *cuda_host_api;

/** One init: the host and its context, for the log and async errors. */
typedef struct cuda_instance {
  const kjit_host_api *host;
  kjit_host_context *ctx;
} cuda_instance;

/** Creates a status whose message is formatted like printf. Never NULL. */
kjit_status *cuda_error(int32_t code, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/** Logs through the host when KJIT_CUDA_VERBOSE=1 (else nothing). */
void cuda_verbose(const cuda_instance *self, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/** Monotonic nanoseconds. */
uint64_t cuda_now_ns(void);

/*===----------------------------------------------------------------------===*\
|* The driver (Driver.c)                                                      *|
\*===----------------------------------------------------------------------===*/

/** The driver's entry points, resolved once per process through
 *  cuGetProcAddress_v2 (never unloaded: libcuda does not survive dlclose). */
typedef struct cuda_driver_api {
  cuInit_fn cuInit;
  cuDriverGetVersion_fn cuDriverGetVersion;
  cuGetErrorName_fn cuGetErrorName;
  cuGetErrorString_fn cuGetErrorString;
  cuDeviceGetCount_fn cuDeviceGetCount;
  cuDeviceGet_fn cuDeviceGet;
  cuDeviceGetAttribute_fn cuDeviceGetAttribute;
  cuDeviceGetUuid_fn cuDeviceGetUuid;
  cuDevicePrimaryCtxRetain_fn cuDevicePrimaryCtxRetain;
  cuDevicePrimaryCtxRelease_fn cuDevicePrimaryCtxRelease;
  cuCtxGetCurrent_fn cuCtxGetCurrent;
  cuCtxSetCurrent_fn cuCtxSetCurrent;
  cuModuleLoadData_fn cuModuleLoadData;
  cuModuleUnload_fn cuModuleUnload;
  cuModuleGetFunction_fn cuModuleGetFunction;
  cuFuncGetParamInfo_fn cuFuncGetParamInfo; /**< NULL before CUDA 12.4. */
  cuFuncSetAttribute_fn cuFuncSetAttribute;
  cuLaunchKernel_fn cuLaunchKernel;
  cuLaunchKernelEx_fn cuLaunchKernelEx;
  cuPointerGetAttribute_fn cuPointerGetAttribute;
  cuStreamSynchronize_fn cuStreamSynchronize;
  cuMemAlloc_fn cuMemAlloc;
  cuMemFree_fn cuMemFree;
  cuMemcpyHtoDAsync_fn cuMemcpyHtoDAsync;
  cuMemcpyDtoHAsync_fn cuMemcpyDtoHAsync;
  /* Optional: without all of them launches are not timed. */
  cuEventCreate_fn cuEventCreate;
  cuEventDestroy_fn cuEventDestroy;
  cuEventRecord_fn cuEventRecord;
  cuEventSynchronize_fn cuEventSynchronize;
  cuEventQuery_fn cuEventQuery;
  cuEventElapsedTime_fn cuEventElapsedTime;
  cuStreamCreate_fn cuStreamCreate;
  cuStreamDestroy_fn cuStreamDestroy;
  /* Optional: without all of them the driver cannot finalize. */
  cuLinkCreate_fn cuLinkCreate;
  cuLinkAddData_fn cuLinkAddData;
  cuLinkComplete_fn cuLinkComplete;
  cuLinkDestroy_fn cuLinkDestroy;
} cuda_driver_api;

extern cuda_driver_api cu;

/** One device: attributes read once, its primary context (retained on
 *  first need, released by the last fini) and its sticky error. */
typedef struct cuda_device {
  int32_t index;
  CUdevice handle;
  pthread_mutex_t lock; /**< Slow paths only: context, sticky message. */
  char arch[16];        /**< "sm_90" */
  char ptx[8];          /**< PTX ISA version for the compile option */
  int major, minor;
  uint32_t sms, max_threads;
  uint64_t max_smem_optin;
  uint8_t uuid[16];
  int cooperative;
  CUcontext ctx; /**< Atomic; NULL until retained. */
  /** CUresult of the error that made the context unusable; 0 while it is
   *  fine. Written (with sticky_message, under lock) once. Atomic. */
  int sticky;
  char *sticky_message;
  /** The kernel launched last on the device (an interned name), to
   *  attribute asynchronous errors. Atomic. */
  const char *last_kernel;
  /** The thread that times launches (Timing.c); NULL until the first
   *  timed launch. Atomic. */
  struct cuda_timer *timer;
  /** describe's compile options, built once (under lock; atomic flag). */
  kjit_option options[2];
  const kjit_option *option_list[2];
  size_t num_options;
  int options_ready;
} cuda_device;

/** NULL once the driver is loaded and cuInit succeeded; else the "no CUDA
 *  device: ..." error (the same on every call). Loads at most once. */
kjit_status *cuda_driver_status(void);
/** Whether the driver is usable and has its JIT linker (cuLink*). */
int cuda_driver_can_link(void);
/** The driver's part of the fingerprint: its version and its library's
 *  identity ("13000:size:N,mtime:T"), or "missing". Loads the driver. */
void cuda_driver_identity(char *buf, size_t size);
/** The driver library as loaded (a real path), or "" without one. */
const char *cuda_driver_path(void);
/** The devices (valid after cuda_driver_status returned NULL). */
extern cuda_device *cuda_devices;
extern int32_t cuda_num_devices;

/** The device for `device`, or an error naming the entry. */
kjit_status *cuda_get_device(int32_t device, const char *entry,
                             cuda_device **out);
/** cuda_make_current's work once the context is not current already:
 *  retains it on first use, then makes it current. */
kjit_status *cuda_make_current_slow(cuda_device *dev);
/** Makes the device's primary context current on this thread, retaining it
 *  on first use; skipped when it is current already. Inline: every launch
 *  asks, and the answer is nearly always "already current". */
static inline kjit_status *cuda_make_current(cuda_device *dev) {
  CUcontext ctx = __atomic_load_n(&dev->ctx, __ATOMIC_ACQUIRE), current = NULL;
  if (ctx && cu.cuCtxGetCurrent(&current) == CUDA_SUCCESS && current == ctx)
    return NULL;
  return cuda_make_current_slow(dev);
}
/** Releases every retained primary context (the last fini). */
void cuda_release_contexts(void);

/** The kjit status code for a failed driver call. */
int32_t cuda_status_code(CUresult r);
/** "CUDA_ERROR_X (text)" for a CUresult, into buf. */
const char *cuda_result_text(CUresult r, char *buf, size_t size);
/** The bare name, "CUDA_ERROR_X" (or "CUDA error N"). */
const char *cuda_result_name(CUresult r, char *buf, size_t size);
/** Whether `r` leaves the context unusable. */
int cuda_is_sticky(CUresult r);
/** The device's sticky error as a status (the device has one). */
kjit_status *cuda_sticky_error(cuda_device *dev);
/** The device's sticky error as a status, or NULL when it is fine (inline:
 *  one load on every launch). */
static inline kjit_status *cuda_sticky_status(cuda_device *dev) {
  return dev && __atomic_load_n(&dev->sticky, __ATOMIC_ACQUIRE)
             ? cuda_sticky_error(dev)
             : NULL;
}
/** Records `r` (sticky) found by `entry` on `dev`; reports it once through
 *  report_async_error and returns the status to give the caller. */
kjit_status *cuda_mark_sticky(const cuda_instance *self, cuda_device *dev,
                              CUresult r, const char *entry);
/** A status for a failed driver call: sticky errors become the device's
 *  sticky status; others "<what>: CUDA_ERROR_X (text)". */
kjit_status *cuda_call_error(const cuda_instance *self, cuda_device *dev,
                             CUresult r, const char *entry, const char *what);

/*===----------------------------------------------------------------------===*\
|* The toolkit and the finalizers (Toolkit.c, DriverLink.c)                   *|
\*===----------------------------------------------------------------------===*/

enum {
  CUDA_FINALIZER_AUTO,
  CUDA_FINALIZER_PTXAS,
  CUDA_FINALIZER_NVJITLINK,
  CUDA_FINALIZER_DRIVER
};

/** Reads the environment (once per process); never fails. */
void cuda_toolkit_init(void);
/** Waits for the thread opening nvJitLink, if one was started (the last
 *  fini). */
void cuda_toolkit_join(void);
/** A file's identity without running or reading it: "size:N,mtime:T",
 *  or "missing". */
void cuda_file_identity(const char *path, char *buf, size_t size);
/** The finalizer policy, or an error for a bad KJIT_CUDA_FINALIZER. */
kjit_status *cuda_finalizer_policy(int *policy);
/** The libdevice path, or NULL when the toolkit has none. */
const char *cuda_libdevice_path(void);
/** The toolkit's part of the fingerprint (finalizer choice, the driver
 *  where it may finalize, ptxas, nvJitLink and libdevice identities, and
 *  the values of the toolkit's variables), malloc'd into *text. */
kjit_status *cuda_toolkit_fingerprint(char **text);

/** PTX to cubin for `arch` ("sm_90", or a variant of the device's own
 *  such as "sm_90a") on `dev`; the result is malloc'd, and so is *report
 *  (cuda_ptxas_report's JSON, or left NULL when the finalizer said
 *  nothing of the kernel). */
kjit_status *cuda_finalize_ptx(const cuda_instance *self, cuda_device *dev,
                               const char *ptx, size_t ptx_size,
                               const char *arch, const char *kernel,
                               size_t kernel_len, uint8_t **cubin,
                               size_t *cubin_size, char **report);
/** The driver's JIT linker (DriverLink.c): PTX to cubin for `arch` with
 *  `dev`'s context current; *info_log (malloc'd) is its verbose log. */
kjit_status *cuda_driver_link(const cuda_instance *self, cuda_device *dev,
                              const char *ptx, size_t ptx_size,
                              const char *arch, const char *kernel,
                              uint8_t **cubin, size_t *cubin_size,
                              char **info_log);
/** What a finalizer's verbose log (PtxasReport.c) says of `kernel`: a
 *  malloc'd JSON object naming `finalizer` (a static name) with the
 *  registers and, where the log has them, barriers, static shared memory,
 *  stack frame and spill bytes; NULL when the log has no such figures. */
char *cuda_ptxas_report(const char *log, size_t size, const char *kernel,
                        size_t kernel_len, const char *finalizer);

/*===----------------------------------------------------------------------===*\
|* Kernels (CudaBackend.c)                                                    *|
\*===----------------------------------------------------------------------===*/

/** Pointer slots the validation cache has per kernel when the driver
 *  cannot say how many parameters the kernel has. */
enum { CUDA_UNKNOWN_PARAMS_CACHE = 32 };
/** Addresses remembered per parameter slot: double buffering, or a few
 *  threads launching one kernel with buffers of their own, still hit. */
enum { CUDA_POINTER_WAYS = 4 };

typedef struct cuda_kernel {
  cuda_device *dev;
  CUmodule module;
  CUfunction function;
  const char *name;  /**< Interned: lives until the last fini. */
  size_t num_params; /**< SIZE_MAX when the driver cannot say. */
  uint32_t *param_sizes;
  /** The addresses validated as device memory, CUDA_POINTER_WAYS per
   *  parameter slot (atomic, relaxed; 0: none), replaced round robin: way w
   *  of slot n at [w * cache_slots + n], so that a launch's look at the
   *  first way of every slot reads adjacent words; then each slot's
   *  insertion counter at [CUDA_POINTER_WAYS * cache_slots + n]. */
  uint64_t *pointer_cache;
  size_t cache_slots;
  /** The dynamic shared memory the function is configured for (atomic). */
  uint32_t smem_configured;
  /** The arguments of the template load checked (ABI 1.4), when it took
   *  it: launches may then pass values alone. NULL: they pass kjit_args. */
  struct cuda_value_slot *value_slots;
  size_t num_values;
  /** The template's pointer arguments (not None), by index: what a launch
   *  of values checks. */
  uint32_t *pointer_values;
  size_t num_pointer_values;
} cuda_kernel;

/** What a launch of values needs of one argument of the template: its
 *  name, for messages (interned). */
typedef struct cuda_value_slot {
  const char *name;
  size_t name_len;
} cuda_value_slot;

/*===----------------------------------------------------------------------===*\
|* Device times of timed launches (Timing.c)                                  *|
\*===----------------------------------------------------------------------===*/

/** Whether the driver has what timing needs (the event entry points). */
int cuda_timing_available(void);
typedef struct cuda_timed cuda_timed;
/** Starts timing a launch on `stream`: records its start event. NULL when
 *  the launch goes untimed (timing unavailable, too many launches in
 *  flight, an event error: logged once); never fails the launch. */
cuda_timed *cuda_timed_begin(const cuda_instance *self, cuda_device *dev,
                             CUstream stream);
/** After the launch: `launched` is cuLaunchKernel's result. A launch that
 *  failed is reported at once with its code; one that was enqueued is
 *  reported by the device's timer thread once its end event completes. */
void cuda_timed_end(cuda_timed *timed, const char *kernel,
                    uint64_t correlation_id, CUresult launched);
/** Waits until every timed launch of `self` has been reported. */
void cuda_timing_drain(const cuda_instance *self);
/** Stops the timer threads and frees their events (the last fini). */
void cuda_timing_shutdown(void);

/** A copy of `name` that lives until cuda_free_names (the last fini). */
const char *cuda_intern_name(const char *name, size_t len);
void cuda_free_names(void);

#endif /* KJIT_PLUGINS_CUDA_INTERNAL_H */
