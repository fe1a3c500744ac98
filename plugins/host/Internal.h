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
#include <signal.h>
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
  char *path; /**< The path dlopen saw (unique while the kernel lives). */
  uint32_t abi_version; /**< kjit_host_abi_version of the object. */
  /** Where the object is mapped (addresses in its ELF file plus this), and
   *  its executable segments: a fault's pc there is the kernel's own. */
  uintptr_t load_base, text_begin, text_end;
  /** A copy of the object's .debug_line (debug builds), NULL without one:
   *  a fault's report names its source line from it (Lines.c). */
  uint8_t *line_table;
  size_t line_table_size;
  /** The storage size of each launch argument, from the template load took
   *  (host_take_template); NULL when launches pass kjit_args. */
  uint8_t *value_bytes;
  size_t num_values;
} host_kernel;

/*===----------------------------------------------------------------------===*\
|* Launches and the worker pool (Workers.c)                                   *|
\*===----------------------------------------------------------------------===*/

/** Settings read once from the environment at init. */
typedef struct host_config {
  unsigned workers;    /**< Worker threads, the launching one included. */
  size_t stack_bytes;  /**< Usable bytes of each fiber stack. */
  uint64_t timeout_ns; /**< KJIT_LAUNCH_TIMEOUT; 0: no limit. */
  /** KJIT_LAUNCH_TIMEOUT when it is not a number of seconds (every launch
   *  then fails, naming it), else NULL. Points into the environment. */
  const char *bad_timeout;
} host_config;

/** One launch, shared read-only by every worker except for `next_program`
 *  and the error record. */
typedef struct host_launch {
  const host_kernel *kernel;
  uint32_t grid[3];
  uint32_t threads;      /**< SIMT threads per program (x dimension). */
  uint64_t num_programs; /**< grid[0] * grid[1] * grid[2]. */
  void *const *args;     /**< HostKernel.h's args[i]. */
  /** kjit_host_thread.extents (ABI 2): one per argument, or NULL. */
  const kjit_host_extent *extents;
  uint64_t next_program; /**< Next linear program id to claim (atomic). */
  /** Set (atomically) by a fault or the watchdog: no program starts after
   *  it. `cancelled` says it was the watchdog. */
  int aborted;
  int cancelled;

  /* The first failure by (program, thread) order, and how many there were;
   * guarded by error_lock. */
  pthread_mutex_t error_lock;
  uint64_t error_program; /**< Linear program id of `error`. */
  uint32_t error_thread;
  char *error; /**< malloc'd message, NULL when none. */
  int32_t error_code;
  uint64_t num_errors;
} host_launch;

/** NULL when `device` is the host's one device (0), else an error naming
 *  the entry. */
kjit_status *host_check_device(int32_t device, const char *entry);

/* Memory.c: the 1.2 device-memory entries over the host's own memory. */
kjit_status *host_allocate(void *self, kjit_backend_allocate_args *args);
kjit_status *host_deallocate(void *self, kjit_backend_deallocate_args *args);
kjit_status *host_copy(void *self, kjit_backend_copy_args *args);

/** Reads KJIT_HOST_WORKERS, KJIT_HOST_STACK_KIB and KJIT_LAUNCH_TIMEOUT;
 *  never fails (a malformed timeout is recorded in bad_timeout). */
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
|* Faults, signal stacks and the watchdog (Faults.c)                          *|
\*===----------------------------------------------------------------------===*/

/** A fault as the handler saw it; formatted later, outside the handler. */
typedef struct host_fault {
  int signo; /**< SIGSEGV, ..., or the cancel signal. */
  int code;  /**< si_code. */
  uintptr_t addr, pc, sp;
} host_fault;

/** What the handlers need of the worker running on a thread. Written by
 *  that thread only; `volatile` because a handler reads it between any two
 *  instructions. */
typedef struct host_fault_site {
  volatile sig_atomic_t in_kernel;      /**< the launch's kernel code may run */
  volatile sig_atomic_t in_runtime;     /**< in a runtime-table call: a fault
                                             here is the backend's, not the
                                             kernel's, and is not recovered */
  volatile sig_atomic_t in_handler;     /**< a fault in the handler itself */
  volatile sig_atomic_t cancel_pending; /**< cancelled during a runtime
                                             call: end the thread after it */
  const int *cancelled;                 /**< the launch's flag */
  uintptr_t text_begin, text_end;       /**< the kernel's executable code */
  host_fault fault;
  /** Ends the faulting SIMT thread and never returns (Scheduler.c). */
  void (*recover)(struct host_fault_site *site);
} host_fault_site;

/** An alternate signal stack, set on a thread for a while. */
typedef struct host_altstack {
  void *memory;
  /* The stack_t it replaced (stack_t is POSIX, and this header C99). */
  void *saved_sp;
  size_t saved_size;
  int saved_flags;
  int pushed;
} host_altstack;

/** What a SIGSEGV description needs to know about fiber stacks. */
typedef struct host_fault_stack {
  int guard_hit; /**< the address is in a fiber's guard page */
  size_t fiber_stack_bytes;
} host_fault_stack;

/** Installs the fault handlers (and, with `want_cancel`, picks a free
 *  realtime signal for the watchdog); the previous handlers are kept and
 *  get every fault that is not a kernel's. An error only when no realtime
 *  signal is free for cancellation (the fault handlers are installed). */
kjit_status *host_faults_install(int want_cancel);
void host_faults_uninstall(void);
/** The watchdog's signal, 0 when none was installed. */
int host_cancel_signal(void);

/** Makes `site` the calling thread's (NULL: none) for the handlers. */
void host_fault_enter(host_fault_site *site);
void host_fault_leave(void);

/** Gives the calling thread an alternate signal stack unless it has one;
 *  host_altstack_restore puts back what was there. */
kjit_status *host_altstack_use(host_altstack *s);
void host_altstack_restore(host_altstack *s);
void host_altstack_free(host_altstack *s);

/** Lines.c: copies the .debug_line section of the ELF object `bytes`
 *  (already checked by load) into a malloc'd *table; *table stays NULL
 *  without one. -1 only when out of memory. */
int host_line_table_copy(const uint8_t *bytes, size_t size, uint8_t **table,
                         size_t *table_size);
/** Writes "file:line:col" of the object address `pc` (relative to the
 *  object, as its line table counts) to `out`; 0 when the table has no
 *  source line for it. */
int host_line_lookup(const uint8_t *table, size_t size, uint64_t pc, char *out,
                     size_t out_size);

/** "SIGFPE (integer division by zero or overflow)", ... */
void host_describe_fault(char *out, size_t size, const host_fault *fault,
                         const host_fault_stack *stack);

/** Watches `launch`: after `timeout_ns` calls `cancel(launch)` from the
 *  watchdog thread, and again every few milliseconds until disarmed. */
kjit_status *host_watchdog_arm(host_launch *launch, uint64_t timeout_ns,
                               void (*cancel)(host_launch *));
/** Stops watching; when it returns, no cancel call is running. */
void host_watchdog_disarm(void);
void host_watchdog_shutdown(void);
/** fork handlers of the watchdog (the pool's, Workers.c, call them). */
void host_watchdog_prepare_fork(void);
void host_watchdog_parent_after_fork(void);
void host_watchdog_child_after_fork(void);

/** Memory.c: the allocation of this backend that holds `address`; 0 when
 *  none does. */
int host_find_allocation(uintptr_t address, uintptr_t *begin, uintptr_t *end);

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

/** ABI 1.4: checks load's argument template as host_copy_args checks every
 *  launch's arguments and, when it passes, keeps each argument's storage
 *  size so that launches may pass the values alone. Returns whether it was
 *  taken (load's takes_values); one that fails is not, and its launches pass
 *  kjit_args and fail with host_copy_args' message. */
int host_take_template(host_kernel *kernel, size_t num_args,
                       const kjit_arg *const *args);

/** host_copy_args for a launch of values: the template was checked at
 *  load, so only their count is checked here. */
kjit_status *host_copy_values(const host_kernel *kernel, size_t num_values,
                              const uint64_t *values, host_arg_slot *slots,
                              void **pointers);

#endif /* KJIT_PLUGINS_HOST_INTERNAL_H */
