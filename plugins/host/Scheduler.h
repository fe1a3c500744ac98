/*===- Scheduler.h - workers, fibers and the pool, shared ---------*- C -*-===*\
|*                                                                            *|
|* What the four files that run a launch share: Fiber.c (the context switch,  *|
|* fiber stacks and barrier phases), Scheduler.c (running programs and        *|
|* recording their failures), RuntimeTable.c (the calls compiled kernels      *|
|* make) and Workers.c (the pool of threads). Private to the host backend;    *|
|* Internal.h has what the rest of the plugin uses. docs/HostBackend.md has   *|
|* the rationale.                                                             *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef KJIT_PLUGINS_HOST_SCHEDULER_H
#define KJIT_PLUGINS_HOST_SCHEDULER_H

/* sigjmp_buf is POSIX: a file that includes this defines _GNU_SOURCE
 * before any header. */
#include "Internal.h"

#include <setjmp.h>

#if !defined(__x86_64__)
#error "the host backend's context switch is written for x86-64 (SysV)"
#endif

/* AddressSanitizer tracks which stack a thread runs on; every fiber switch
 * tells it (start before, finish after), or it would take a fiber's frames
 * for an overflow of the thread's stack. Compiled out otherwise. */
#if defined(__SANITIZE_ADDRESS__)
#define HOST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HOST_ASAN 1
#endif
#endif
#ifdef HOST_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

/*===----------------------------------------------------------------------===*\
|* Workers and fibers                                                         *|
\*===----------------------------------------------------------------------===*/

struct host_worker;

/* Where a SIMT thread stands within the current barrier phase. */
typedef enum fiber_state {
  FIBER_RUNNING,      /* runnable (or running) in this pass */
  FIBER_WAITING,      /* suspended at the workgroup barrier */
  FIBER_WARP_WAITING, /* suspended at a warp barrier */
  FIBER_DONE,         /* returned from the entry */
  FIBER_FAILED        /* ended by a device assert (or a contract violation) */
} fiber_state;

/* Threads per warp: the warp barrier's scope (HostKernel.h). */
#define HOST_WARP_SIZE 32u

/* One SIMT thread: what the compiled code sees (`thread`) and, in fiber
 * mode, its suspended context. thread.backend points back here. */
typedef struct host_simt {
  kjit_host_thread thread;
  struct host_worker *worker;
  void *sp;        /* saved stack pointer while suspended */
  char *stack_top; /* fiber mode: the 16-byte aligned top of its stack */
  fiber_state state;
  uint32_t position; /* index in the worker's run list */
#ifdef HOST_ASAN
  void *fake_stack; /* ASan's fake stack of the suspended fiber */
#endif
} host_simt;

/* One OS thread of the pool. Slot 0 is the launching thread itself. */
typedef struct host_worker {
  host_fault_site site; /* first: the handlers' recover casts it back */
  pthread_t thread;
  unsigned index;
  host_launch *launch; /* the launch being run */
  uint64_t program;    /* linear id of the program being run */
  /* Loop mode: the SIMT thread running, and where an assert jumps back to.
   * volatile: read again after siglongjmp returns to the loop. */
  volatile uint32_t loop_thread;
  sigjmp_buf loop_jump;
  host_simt loop_simt;
  /* Fiber mode: one host_simt and stack per SIMT thread, kept across
   * programs and launches, grown when a launch needs more threads. */
  host_simt *fibers;
  host_simt **run; /* the fibers of this pass, in thread order */
  uint32_t num_run;
  uint32_t capacity; /* fibers and stacks allocated */
  void *stacks;      /* one mapping: [guard][stack] per fiber */
  size_t stacks_bytes;
  void *scheduler_sp; /* the program scheduler's suspended context */
  /* Faults: the SIMT thread running (NULL: the scheduler), the one that
   * faulted, this thread's signal stack, and the floating-point control
   * state the worker started the launch with (a signal resets it). */
  host_simt *volatile current;
  host_simt *volatile faulted;
  host_altstack altstack;
  uint32_t mxcsr;
  uint16_t x87_cw;
#ifdef HOST_ASAN
  const void *thread_stack; /* the worker's own stack, for ASan */
  size_t thread_stack_size;
  void *scheduler_fake_stack;
#endif
} host_worker;

/* The pool: settings, workers, and the hand-off of a launch to helpers.
 * Defined in Workers.c; the fiber and fault code read its settings. */
typedef struct host_pool_state {
  host_config config;
  pthread_mutex_t launch_lock; /* one launch at a time owns the pool */
  pthread_mutex_t lock;        /* guards the fields below */
  pthread_cond_t wake;         /* helpers wait here for a launch */
  pthread_cond_t done;         /* the launcher waits here for helpers */
  host_worker *workers;
  unsigned num_workers; /* started, slot 0 included; 0: not yet */
  uint64_t generation;  /* bumped for every launch handed out */
  host_launch *current;
  unsigned wanted, claimed, finished; /* helpers of the current launch */
  int stopping;
  size_t page;
  kjit_status *cancel_error; /* why KJIT_LAUNCH_TIMEOUT cannot work */
} host_pool_state;

extern host_pool_state host_pool;

/*===----------------------------------------------------------------------===*\
|* Fibers (Fiber.c)                                                           *|
\*===----------------------------------------------------------------------===*/

/* Saves the current context's frame on its stack, stores its stack pointer
 * to *save_sp and resumes the context whose stack pointer is next_sp.
 * Returns when some later switch resumes the saved context. */
void host_switch(void **save_sp, void *next_sp);

/* Suspends the current fiber and resumes the next one of this pass (the
 * run list), or the scheduler when it is the last. */
void host_switch_onward(host_simt *simt);

/* Makes room for `threads` fibers of `w`, kept for later programs;
 * replaced only when a launch needs more threads. */
kjit_status *host_fibers_reserve(host_worker *w, uint32_t threads);

/* Unmaps the fiber stacks of `w` and frees its fibers. */
void host_fibers_free(host_worker *w);

/* Runs one program as fibers, pass by pass, releasing the workgroup
 * barrier and warp barriers; records barrier divergence. */
void host_run_program_fibers(host_worker *w, uint32_t threads);

/*===----------------------------------------------------------------------===*\
|* Programs and failures (Scheduler.c)                                        *|
\*===----------------------------------------------------------------------===*/

/* Records a device failure of (program, thread); the launch reports the
 * first one in program order, then thread order, and counts the rest. */
void host_record_failure(host_launch *launch, uint64_t program, uint32_t thread,
                         int32_t code, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/* Records the fault (or cancellation) the handler left in w->site and
 * stops the launch: no program starts after a fault. */
void host_record_fault(host_worker *w, host_simt *simt);

/* Ends the calling SIMT thread after a failure has been recorded. Loop
 * mode jumps back to the program's loop; fiber mode abandons the fiber
 * (nothing on its stack needs unwinding: HostKernel.h promises it). */
void host_end_thread(host_simt *simt);

static inline host_simt *host_simt_of(kjit_host_thread *thread) {
  return (host_simt *)thread->backend;
}

/* Runtime calls may take libc locks (malloc in print and in recording a
 * failure): a fault there is not the kernel's, and a cancellation waits
 * until the call is done. */
static inline void host_runtime_enter(host_worker *w) {
  w->site.in_runtime = 1;
}
void host_runtime_leave(host_worker *w);

/* Claims programs of the launch until there are none left. */
void host_run_programs(host_worker *w, host_launch *launch);

/*===----------------------------------------------------------------------===*\
|* The runtime table (RuntimeTable.c)                                         *|
\*===----------------------------------------------------------------------===*/

extern const kjit_host_runtime host_runtime_table;

#endif /* KJIT_PLUGINS_HOST_SCHEDULER_H */
