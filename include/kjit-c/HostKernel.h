/*===- kjit-c/HostKernel.h - the host target's kernel ABI ---------*- C -*-===*\
|*                                                                            *|
|* The contract between a kernel compiled for the host target (an ELF shared  *|
|* object the compiler library produces) and the host backend that runs it.   *|
|* C99. Rationale: docs/HostTarget.md.                                        *|
|*                                                                            *|
|* For each kernel `K`, a compiled object exports                             *|
|*                                                                            *|
|*   void kjit_host_entry_K(kjit_host_thread *thread, void *const *args);     *|
|*   const uint32_t kjit_host_flags_K;   (KJIT_HOST_USES_BARRIER, ...)        *|
|*   const char kjit_host_signature_K[]; ("*fp32,*kfp32,i32": the signature   *|
|*                   types of the launch arguments; optional, and checked     *|
|*                   against each launch's argument types when present)       *|
|*                                                                            *|
|* The entry runs ONE SIMT thread of one program: `args[i]` points to the     *|
|* value of the i-th launch argument (the kernel's parameters after           *|
|* specialization, in order; a pointer parameter's value is the address).     *|
|* The backend calls it once per (program, thread). The object needs nothing  *|
|* from the process: it                                                       *|
|* reaches the backend only through `thread->runtime`, so it has no undefined *|
|* symbols besides libc/libm and loads with RTLD_LOCAL.                       *|
|*                                                                            *|
|* Workgroup memory is thread-local storage of the OS thread the program runs *|
|* on: the backend runs every SIMT thread of one program on the same OS       *|
|* thread (fibers when the kernel has barriers) and one program at a time per *|
|* OS thread.                                                                 *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef KJIT_C_HOSTKERNEL_H
#define KJIT_C_HOSTKERNEL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Version of this contract. A compiled object exports
 *  `const uint32_t kjit_host_abi_version`: the lowest version that has
 *  everything it uses (so an object that needs nothing of version 2 still
 *  runs on a backend of version 1). A backend runs every version from
 *  KJIT_HOST_ABI_MIN_VERSION to the one it was built for. Each version only
 *  adds to the previous one: fields at the end of kjit_host_thread, slots at
 *  the end of kjit_host_runtime.
 *
 *  Version 2 adds kjit_host_thread.extents and kjit_host_runtime.bounds_fail,
 *  what debug-mode bounds checks use. Version 3 adds
 *  kjit_host_runtime.warp_barrier. */
#define KJIT_HOST_ABI_VERSION 3
#define KJIT_HOST_ABI_MIN_VERSION 1

/** Bits of `kjit_host_flags_<kernel>`. */
enum {
  /** The kernel (or a function it calls) has a barrier or a warp barrier:
   *  its threads must run as fibers that can be suspended; otherwise a plain
   *  loop suffices. */
  KJIT_HOST_USES_BARRIER = 1u << 0
};

/** The kind of one kjit_host_print_arg value. */
enum {
  KJIT_HOST_PRINT_SIGNED = 0,   /**< `bits` holds a sign-extended integer. */
  KJIT_HOST_PRINT_UNSIGNED = 1, /**< `bits` holds a zero-extended integer. */
  KJIT_HOST_PRINT_FLOAT = 2,    /**< `bits` holds a double's bit pattern. */
  KJIT_HOST_PRINT_POINTER = 3   /**< `bits` holds an address. */
};

/** One value of a device print. */
typedef struct kjit_host_print_arg {
  uint32_t kind;       /**< KJIT_HOST_PRINT_*. */
  uint32_t bits_width; /**< Width of the source value in bits (1..64). */
  uint64_t bits;
} kjit_host_print_arg;

struct kjit_host_thread;

/** @since 2. The bytes a pointer argument may reach, relative to the pointer
 *  itself: [pointer + begin, pointer + end). {INT64_MIN, INT64_MAX} when the
 *  backend does not know the allocation the pointer points into (and for
 *  every scalar argument). */
typedef struct kjit_host_extent {
  int64_t begin;
  int64_t end;
} kjit_host_extent;

/** What the compiled code calls back into. Filled by the backend; every slot
 *  is set. Layout is fixed for KJIT_HOST_ABI_VERSION 1. */
typedef struct kjit_host_runtime {
  /** gpu.barrier: returns once every thread of the program has reached it. */
  void (*barrier)(struct kjit_host_thread *thread);
  /** kjit.print: the prefix (not NUL-terminated) and the values. */
  void (*print)(struct kjit_host_thread *thread, const char *prefix,
                uint64_t prefix_len, const kjit_host_print_arg *args,
                uint64_t num_args);
  /** A failed kjit.assert (debug mode). Does not return: the backend ends
   *  this SIMT thread (longjmp back to its loop, or abandons the fiber) and
   *  reports kernel, program, thread and message after the launch. Never
   *  aborts the process. The compiled code keeps no state that needs
   *  unwinding. */
  void (*assert_fail)(struct kjit_host_thread *thread, const char *message,
                      uint64_t message_len);
  /** @since 2. A debug-mode bounds check failed: the access of `bytes` bytes
   *  at byte `offset` from the pointer argument lies outside `extent`.
   *  `message` names the access and where it is in the source. Does not
   *  return, like assert_fail, and is reported like a failed assert. */
  void (*bounds_fail)(struct kjit_host_thread *thread, const char *message,
                      uint64_t message_len, int64_t offset, int64_t bytes,
                      const kjit_host_extent *extent);
  /** @since 3. A warp barrier (CUDA's __syncwarp(), PTX
   *  `bar.warp.sync 0xffffffff`): returns once every thread of the calling
   *  thread's warp has reached a warp barrier, and orders their memory
   *  accesses. Warp w is threads 32*w .. 32*w+31 of the program (up to the
   *  program's last thread for a partial last warp). A kernel that calls it
   *  sets KJIT_HOST_USES_BARRIER (its threads run as fibers) and exports
   *  kjit_host_abi_version 3. */
  void (*warp_barrier)(struct kjit_host_thread *thread);
} kjit_host_runtime;

/** The state of one SIMT thread, read by the compiled code. Field offsets are
 *  part of the contract (the lowering reads them directly). */
typedef struct kjit_host_thread {
  uint32_t thread_id[3];    /**< gpu.thread_id x, y, z. */
  uint32_t block_dim[3];    /**< threads per program: gpu.block_dim. */
  uint32_t program_id[3];   /**< kjit.program_id / gpu.block_id. */
  uint32_t num_programs[3]; /**< kjit.num_programs / gpu.grid_dim. */
  const kjit_host_runtime *runtime;
  void *backend; /**< The backend's own state for this thread. */
  /** @since 2. One extent per launch argument, in the order of `args`. */
  const kjit_host_extent *extents;
} kjit_host_thread;

/** The signature of `kjit_host_entry_<kernel>`. */
typedef void (*kjit_host_entry_fn)(kjit_host_thread *thread, void *const *args);

#ifdef __cplusplus
}
#endif

#endif /* KJIT_C_HOSTKERNEL_H */
