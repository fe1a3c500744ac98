/*===- Internal.h - shared declarations of the host backend -------*- C -*-===*\
|*                                                                            *|
|* Types and functions shared by the files of the host backend plugin         *|
|* (libkjit-host.so). Nothing here crosses the plugin boundary: with hidden   *|
|* visibility and the version script, only kjit_plugin_negotiate_v1 is        *|
|* exported. docs/HostBackend.md explains the design.                         *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef KJIT_PLUGINS_HOST_INTERNAL_H
#define KJIT_PLUGINS_HOST_INTERNAL_H

#include "Status.h"
#include "kjit-c/HostKernel.h"
#include "kjit-c/Plugin.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/*===----------------------------------------------------------------------===*\
|* Kernels                                                                    *|
\*===----------------------------------------------------------------------===*/

/** One parameter of a kernel's signature, as launches are checked against
 *  it: what kjit_arg's dtype, flags and bits_size must say. */
typedef struct host_param {
  int32_t dtype;      /**< KJIT_DTYPE_*: the scalar's or the element's. */
  uint32_t pointer;   /**< 1 for a pointer ("*T", "*kT"). */
  uint32_t bits_size; /**< Bytes of storage (8 for a pointer). */
  const char *type;   /**< The type's text in the signature. */
  size_t type_len;
} host_param;

/** A loaded kernel: the handle `load` returns and `launch` receives. */
typedef struct host_kernel {
  void *dl;                 /**< dlopen handle of the kernel's object. */
  kjit_host_entry_fn entry; /**< kjit_host_entry_<name>. */
  uint32_t flags;           /**< kjit_host_flags_<name>. */
  /** kjit_host_signature_<name> (optional, see docs/HostBackend.md), or
   *  NULL when the object does not say what arguments it expects. */
  const char *signature;
  /** The signature parsed at load (NULL without one). */
  host_param *params;
  size_t num_params;
  char *name; /**< NUL-terminated copy of the kernel name. */
  int fd;     /**< memfd the object was loaded from, or -1. */
  char *path; /**< The path dlopen saw (unique while the kernel lives). */
} host_kernel;

/*===----------------------------------------------------------------------===*\
|* Launches and the worker pool (Scheduler.c)                                 *|
\*===----------------------------------------------------------------------===*/

/** Settings read once from the environment at init. */
typedef struct host_config {
  unsigned workers;   /**< Worker threads, the launching one included. */
  size_t stack_bytes; /**< Usable bytes of each fiber stack. */
} host_config;

/** One launch, shared read-only by every worker except for `next_program`
 *  and the error record. */
typedef struct host_launch {
  const host_kernel *kernel;
  uint32_t grid[3];
  uint32_t threads;      /**< SIMT threads per program (x dimension). */
  uint64_t num_programs; /**< grid[0] * grid[1] * grid[2]. */
  void *const *args;     /**< HostKernel.h's args[i]. */
  uint64_t next_program; /**< Next linear program id to claim (atomic). */

  /* The first failure by (program, thread) order, and how many there were;
   * guarded by error_lock. */
  pthread_mutex_t error_lock;
  uint64_t error_program; /**< Linear program id of `error`. */
  uint32_t error_thread;
  char *error; /**< malloc'd message, NULL when none. */
  int32_t error_code;
  uint64_t num_errors;
} host_launch;

/** Reads KJIT_HOST_WORKERS and KJIT_HOST_STACK_KIB; never fails. */
/** NULL when `device` is the host's one device (0), else an error naming
 *  the entry. */
kjit_status *host_check_device(int32_t device, const char *entry);

/* Memory.c: the 1.2 device-memory entries over the host's own memory. */
kjit_status *host_allocate(void *self, kjit_backend_allocate_args *args);
kjit_status *host_deallocate(void *self, kjit_backend_deallocate_args *args);
kjit_status *host_copy(void *self, kjit_backend_copy_args *args);

void host_config_from_environment(host_config *config);

/** Starts nothing: the pool is created by the first launch. */
void host_pool_init(const host_config *config);

/** Joins the worker threads and unmaps their stacks (plugin fini). */
void host_pool_shutdown(void);

/** Runs every program of `launch` on the pool and returns when all have
 *  finished. Returns a status for a failure of the pool itself (no memory
 *  for stacks); device failures are recorded in `launch`. Launches from
 *  several threads are serialized. */
kjit_status *host_pool_run(host_launch *launch);

/*===----------------------------------------------------------------------===*\
|* Arguments (Args.c)                                                         *|
\*===----------------------------------------------------------------------===*/

/** Storage of one argument: the value a parameter's C type holds, at the
 *  start of the slot (little-endian, so narrower types fit). */
typedef union host_arg_slot {
  uint64_t u64;
  void *ptr;
} host_arg_slot;

/** Parses a kjit_host_signature_<K> ("*fp32,*fp32,i32") into `kernel`'s
 *  params (malloc'd, freed by the caller with free). Names the type and its
 *  position when the signature has one the backend does not know. */
kjit_status *host_parse_signature(host_kernel *kernel);

/** Copies the launch arguments of `kernel` into `slots` and `pointers`
 *  (arrays of at least `num_args` entries; constexpr arguments are skipped,
 *  so `*count` may be smaller). The arguments must carry ABI 1.1's storage
 *  fields; with a signature their dtype code, pointer flag and size, and
 *  their count, are checked against it. Nothing is converted: the runtime
 *  encoded every value (kjit_arg.bits). */
kjit_status *host_copy_args(const host_kernel *kernel, size_t num_args,
                            const kjit_arg *const *args, host_arg_slot *slots,
                            void **pointers, size_t *count);

#endif /* KJIT_PLUGINS_HOST_INTERNAL_H */
