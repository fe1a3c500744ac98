/*===- Scheduler.c - worker pool, fibers and the kernel runtime ---*- C -*-===*\
|*                                                                            *|
|* Runs a launch's programs on a pool of OS threads. Each program runs        *|
|* entirely on one worker (its workgroup memory is that worker's TLS), one    *|
|* program at a time per worker. A kernel without barriers runs its SIMT      *|
|* threads as a plain loop; a kernel with barriers runs one fiber per SIMT    *|
|* thread, switched by a small x86-64 context switch, so a barrier costs two  *|
|* user-space switches per thread instead of a futex round trip per thread.   *|
|* Also implements the runtime table the compiled code calls (barrier,        *|
|* print, assert_fail). docs/HostBackend.md has the rationale.                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* mmap, sched_getaffinity, sigsetjmp: POSIX/GNU, not C99. */
#define _GNU_SOURCE 1

#include "Internal.h"

#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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
|* The context switch                                                         *|
\*===----------------------------------------------------------------------===*/

/* What host_switch leaves on the stack of the context it suspends, lowest
 * address first; its saved stack pointer points at the start. Only the
 * SysV callee-saved state needs saving: the switch is an ordinary call, so
 * the compiler already treats every other register as clobbered. The MXCSR
 * and x87 control words are callee-saved too (rounding mode, exception
 * masks), which kernel code is allowed to change. */
typedef struct switch_frame {
  uint32_t mxcsr;
  uint16_t x87_cw;
  uint16_t pad;
  uint64_t r15, r14, r13, r12, rbx, rbp;
  uint64_t ret; /* where the suspended context resumes */
} switch_frame;

/* C99 has no static_assert: a negative array size fails the build. */
typedef char switch_frame_is_64_bytes[sizeof(switch_frame) == 64 ? 1 : -1];

/* Saves the current context's frame on its stack, stores its stack pointer
 * to *save_sp and resumes the context whose stack pointer is next_sp.
 * Returns when some later switch resumes the saved context. */
void host_switch(void **save_sp, void *next_sp);
/* First code a fresh fiber runs (reached by host_switch's ret): calls
 * r13(r12) with an ABI-aligned stack. The callee never returns. */
void host_fiber_start(void);

/* Pushes in the reverse order of switch_frame's fields so that the frame
 * reads as the struct; the pops mirror them. */
__asm__(".text\n"
        ".p2align 4\n"
        ".globl host_switch\n"
        ".hidden host_switch\n"
        ".type host_switch,@function\n"
        "host_switch:\n"
        "  pushq %rbp\n"
        "  pushq %rbx\n"
        "  pushq %r12\n"
        "  pushq %r13\n"
        "  pushq %r14\n"
        "  pushq %r15\n"
        "  leaq -8(%rsp), %rsp\n"
        "  stmxcsr (%rsp)\n"
        "  fnstcw 4(%rsp)\n"
        "  movq %rsp, (%rdi)\n"
        "  movq %rsi, %rsp\n"
        "  ldmxcsr (%rsp)\n"
        "  fldcw 4(%rsp)\n"
        "  leaq 8(%rsp), %rsp\n"
        "  popq %r15\n"
        "  popq %r14\n"
        "  popq %r13\n"
        "  popq %r12\n"
        "  popq %rbx\n"
        "  popq %rbp\n"
        "  ret\n"
        ".size host_switch, .-host_switch\n"
        ".p2align 4\n"
        ".globl host_fiber_start\n"
        ".hidden host_fiber_start\n"
        ".type host_fiber_start,@function\n"
        "host_fiber_start:\n"
        /* rsp is 16-byte aligned here (see fiber_reset), as a call needs. */
        "  movq %r12, %rdi\n"
        "  callq *%r13\n"
        "  ud2\n"
        ".size host_fiber_start, .-host_fiber_start\n");

/*===----------------------------------------------------------------------===*\
|* Workers and fibers                                                         *|
\*===----------------------------------------------------------------------===*/

struct host_worker;

/* Where a SIMT thread stands within the current barrier phase. */
typedef enum fiber_state {
  FIBER_RUNNING, /* runnable (or running) in this phase */
  FIBER_WAITING, /* suspended at a barrier */
  FIBER_DONE,    /* returned from the entry */
  FIBER_FAILED   /* ended by a device assert (or a contract violation) */
} fiber_state;

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
  host_simt **run; /* live fibers of the phase, in thread order */
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

/* The pool: settings, workers, and the hand-off of a launch to helpers. */
static struct {
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
} pool = {.launch_lock = PTHREAD_MUTEX_INITIALIZER,
          .lock = PTHREAD_MUTEX_INITIALIZER,
          .wake = PTHREAD_COND_INITIALIZER,
          .done = PTHREAD_COND_INITIALIZER};

static const kjit_host_runtime host_runtime_table;

/*===----------------------------------------------------------------------===*\
|* Failures                                                                   *|
\*===----------------------------------------------------------------------===*/

/* Records a device failure of (program, thread). The launch reports the
 * first one in program order (then thread order) so that the message does
 * not depend on which worker got there first, and counts the rest. */
static void record_failure(host_launch *launch, uint64_t program,
                           uint32_t thread, int32_t code, const char *format,
                           ...) {
  va_list ap;
  char *message;
  int len;
  va_start(ap, format);
  len = vsnprintf(NULL, 0, format, ap);
  va_end(ap);
  message = len >= 0 ? malloc((size_t)len + 1) : NULL;
  if (message) {
    va_start(ap, format);
    vsnprintf(message, (size_t)len + 1, format, ap);
    va_end(ap);
  }
  pthread_mutex_lock(&launch->error_lock);
  ++launch->num_errors;
  if (!launch->error_code || program < launch->error_program ||
      (program == launch->error_program && thread < launch->error_thread)) {
    free(launch->error);
    launch->error = message;
    launch->error_code = code;
    launch->error_program = program;
    launch->error_thread = thread;
    message = NULL;
  }
  pthread_mutex_unlock(&launch->error_lock);
  free(message);
}

static host_simt *simt_of(kjit_host_thread *thread) {
  return (host_simt *)thread->backend;
}

/* Ends the calling SIMT thread after a failure has been recorded. Loop
 * mode jumps back to the program's loop; fiber mode abandons the fiber
 * (nothing on its stack needs unwinding: HostKernel.h promises it). */
static void end_thread(host_simt *simt);

/* A signal handler resets MXCSR and the x87 control word; a worker that
 * leaves one by siglongjmp puts back what it started the launch with. */
static void restore_fp_control(host_worker *w) {
  __asm__ __volatile__("ldmxcsr %0\n\tfldcw %1"
                       :
                       : "m"(w->mxcsr), "m"(w->x87_cw));
}

/* Records the fault (or cancellation) the handler left in w->site and
 * stops the launch: no program starts after a fault. */
static void record_fault(host_worker *w, host_simt *simt) {
  host_launch *launch = w->launch;
  const host_kernel *k = launch->kernel;
  const host_fault *f = &w->site.fault;
  const uint32_t *pid = w->loop_simt.thread.program_id;
  unsigned long long pc = (unsigned long long)(f->pc - k->load_base);
  const char *where = f->pc >= k->text_begin && f->pc < k->text_end
                          ? "in the kernel's object"
                          : "outside the kernel's object";
  char what[256];
  w->site.in_handler = 0;
  __atomic_store_n(&launch->aborted, 1, __ATOMIC_RELAXED);
  if (f->signo == host_cancel_signal() && f->code == 0) {
    char at[96] = "in a runtime call";
    if (f->pc) /* 0: ended on leaving a runtime call (runtime_leave) */
      snprintf(at, sizeof at, "at pc 0x%llx %s", pc, where);
    record_failure(launch, w->program, simt->thread.thread_id[0],
                   KJIT_STATUS_DEADLINE_EXCEEDED,
                   "launch of kernel %s cancelled: it ran past its time "
                   "limit of %g s (KJIT_LAUNCH_TIMEOUT); program (%u,%u,%u), "
                   "thread (%u,0,0) was interrupted %s",
                   k->name, (double)pool.config.timeout_ns / 1e9, pid[0],
                   pid[1], pid[2], simt->thread.thread_id[0], at);
    return;
  }
  {
    host_fault_stack stack;
    uintptr_t base = (uintptr_t)w->stacks, slot;
    stack.fiber_stack_bytes = pool.config.stack_bytes;
    slot = stack.fiber_stack_bytes + pool.page;
    stack.guard_hit = simt != &w->loop_simt && f->addr >= base &&
                      f->addr < base + w->stacks_bytes &&
                      (f->addr - base) % slot < pool.page;
    host_describe_fault(what, sizeof what, f, &stack);
  }
  {
    /* Debug builds: the source line of the faulting instruction. */
    char line[160] = "";
    if (k->line_table && f->pc >= k->text_begin && f->pc < k->text_end &&
        host_line_lookup(k->line_table, k->line_table_size, pc, line + 4,
                         sizeof line - 4))
      memcpy(line, " at ", 4);
    record_failure(launch, w->program, simt->thread.thread_id[0],
                   KJIT_STATUS_ABORTED,
                   "kernel %s faulted in program (%u,%u,%u), thread "
                   "(%u,0,0): %s at pc 0x%llx %s%s; the launch was stopped",
                   k->name, pid[0], pid[1], pid[2], simt->thread.thread_id[0],
                   what, pc, where, line);
  }
}

static void switch_onward(host_simt *simt);

/* The handlers' way out of a faulting SIMT thread (Faults.c): back to the
 * program's loop, or from the fiber to the scheduler. Either way the
 * thread's stack is abandoned where it stood. */
static void recover(host_fault_site *site) {
  host_worker *w = (host_worker *)site;
  host_simt *simt = w->current;
  if (simt == &w->loop_simt)
    siglongjmp(w->loop_jump, 2);
  simt->state = FIBER_FAILED;
  w->faulted = simt;
#ifdef HOST_ASAN
  __sanitizer_start_switch_fiber(NULL, w->thread_stack, w->thread_stack_size);
#endif
  host_switch(&simt->sp, w->scheduler_sp);
  abort(); /* unreachable: a faulted fiber is never resumed */
}

/* Runtime calls may take libc locks (malloc in print and in recording a
 * failure): a fault there is not the kernel's, and a cancellation waits
 * until the call is done. */
static void runtime_enter(host_worker *w) { w->site.in_runtime = 1; }

static void runtime_leave(host_worker *w) {
  w->site.in_runtime = 0;
  if (w->site.cancel_pending) {
    w->site.cancel_pending = 0;
    w->site.fault.signo = host_cancel_signal();
    w->site.fault.code = 0;
    w->site.fault.addr = w->site.fault.pc = w->site.fault.sp = 0;
    w->site.in_handler = 1;
    recover(&w->site);
  }
}

/*===----------------------------------------------------------------------===*\
|* Fiber scheduling                                                           *|
\*===----------------------------------------------------------------------===*/

/* Suspends the current fiber and resumes the next one of this phase, or
 * the scheduler when it is the last. Switching fiber to fiber costs one
 * switch per thread and phase instead of two through the scheduler. */
static void switch_onward(host_simt *simt) {
  host_worker *w = simt->worker;
  uint32_t next = simt->position + 1;
  host_simt *to = next < w->num_run ? w->run[next] : NULL;
#ifdef HOST_ASAN
  /* A fiber that will never run again hands its fake stack back. */
  __sanitizer_start_switch_fiber(
      simt->state == FIBER_WAITING ? &simt->fake_stack : NULL,
      to ? to->stack_top - pool.config.stack_bytes : w->thread_stack,
      to ? pool.config.stack_bytes : w->thread_stack_size);
#endif
  w->current = to;
  host_switch(&simt->sp, to ? to->sp : w->scheduler_sp);
#ifdef HOST_ASAN
  __sanitizer_finish_switch_fiber(simt->fake_stack, NULL, NULL);
#endif
}

/* The body of every fiber: one SIMT thread of the current program. */
static void fiber_main(host_simt *simt) {
  host_worker *w = simt->worker;
#ifdef HOST_ASAN
  __sanitizer_finish_switch_fiber(NULL, NULL, NULL);
#endif
  w->launch->kernel->entry(&simt->thread, w->launch->args);
  simt->state = FIBER_DONE;
  switch_onward(simt);
  /* Unreachable: nothing resumes a finished fiber. */
  abort();
}

/* Prepares a fiber to start at fiber_main on an empty stack. */
static void fiber_reset(host_simt *simt, uint32_t mxcsr, uint16_t x87_cw) {
  /* The frame sits so that after host_switch pops it (rsp = frame + 64),
   * rsp is 16-byte aligned, which host_fiber_start's call needs. */
  switch_frame *frame = (switch_frame *)(simt->stack_top - 64);
  memset(frame, 0, sizeof *frame);
  frame->mxcsr = mxcsr;
  frame->x87_cw = x87_cw;
  frame->r12 = (uint64_t)(uintptr_t)simt;
  frame->r13 = (uint64_t)(uintptr_t)fiber_main;
  frame->ret = (uint64_t)(uintptr_t)host_fiber_start;
  simt->sp = frame;
  simt->state = FIBER_RUNNING;
}

/* Makes room for `threads` fibers: host_simt records and one mapping of
 * stacks, each with an inaccessible guard page below it so that a stack
 * overflow faults instead of corrupting a neighbour. Kept for later
 * programs; replaced only when a launch needs more threads. */
static kjit_status *ensure_fibers(host_worker *w, uint32_t threads) {
  size_t stack = pool.config.stack_bytes, slot = stack + pool.page;
  size_t bytes;
  char *base;
  uint32_t i;
  host_simt *fibers;
  host_simt **run;
  if (threads <= w->capacity)
    return NULL;
  bytes = slot * threads;
  base = mmap(NULL, bytes, PROT_NONE,
              MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED)
    return host_error(KJIT_STATUS_RESOURCE_EXHAUSTED,
                      "host backend: cannot map %u fiber stacks of %zu KiB: %s",
                      threads, stack / 1024, strerror(errno));
  for (i = 0; i < threads; ++i)
    if (mprotect(base + (size_t)i * slot + pool.page, stack,
                 PROT_READ | PROT_WRITE) != 0) {
      int err = errno;
      munmap(base, bytes);
      return host_error(KJIT_STATUS_RESOURCE_EXHAUSTED,
                        "host backend: cannot protect fiber stacks: %s",
                        strerror(err));
    }
  fibers = calloc(threads, sizeof *fibers);
  run = calloc(threads, sizeof *run);
  if (!fibers || !run) {
    free(fibers);
    free(run);
    munmap(base, bytes);
    return host_error(KJIT_STATUS_RESOURCE_EXHAUSTED,
                      "host backend: out of memory for %u fibers", threads);
  }
  if (w->stacks)
    munmap(w->stacks, w->stacks_bytes);
  free(w->fibers);
  free(w->run);
  w->stacks = base;
  w->stacks_bytes = bytes;
  w->fibers = fibers;
  w->run = run;
  w->capacity = threads;
  for (i = 0; i < threads; ++i) {
    fibers[i].worker = w;
    fibers[i].stack_top = base + (size_t)(i + 1) * slot;
  }
  return NULL;
}

/* Writes thread numbers as ranges ("0-63, 70"), at most a few of them. */
static void format_threads(char *out, size_t size, host_simt **list,
                           uint32_t count) {
  uint32_t i = 0, ranges = 0;
  size_t used = 0;
  out[0] = '\0';
  while (i < count && used + 1 < size) {
    uint32_t first = list[i]->thread.thread_id[0], last = first;
    int n;
    while (i + 1 < count && list[i + 1]->thread.thread_id[0] == last + 1)
      last = list[++i]->thread.thread_id[0];
    ++i;
    if (++ranges > 8) {
      snprintf(out + used, size - used, ", ...");
      return;
    }
    n = first == last
            ? snprintf(out + used, size - used, "%s%u", used ? ", " : "", first)
            : snprintf(out + used, size - used, "%s%u-%u", used ? ", " : "",
                       first, last);
    if (n < 0)
      return;
    used += (size_t)n;
  }
}

/* Runs one program as fibers, barrier phase by barrier phase. */
static void run_program_fibers(host_worker *w, uint32_t threads) {
  host_launch *launch = w->launch;
  uint32_t i, mxcsr;
  uint16_t x87_cw;
  /* Fibers start with the worker's floating-point control state. */
  __asm__ __volatile__("stmxcsr %0\n\tfnstcw %1" : "=m"(mxcsr), "=m"(x87_cw));
  for (i = 0; i < threads; ++i) {
    host_simt *f = &w->fibers[i];
    f->thread = w->loop_simt.thread;
    f->thread.thread_id[0] = i;
    f->thread.backend = f;
    fiber_reset(f, mxcsr, x87_cw);
    f->position = i;
    w->run[i] = f;
  }
  w->num_run = threads;

  for (;;) {
    uint32_t waiting = 0, done = 0, failed = 0, n = w->num_run;
    /* One phase: each live fiber runs until it waits at a barrier, returns
     * or fails, handing on to the next; the last hands back to us. */
    w->current = w->run[0];
#ifdef HOST_ASAN
    __sanitizer_start_switch_fiber(&w->scheduler_fake_stack,
                                   w->run[0]->stack_top -
                                       pool.config.stack_bytes,
                                   pool.config.stack_bytes);
#endif
    w->site.in_kernel = 1;
    host_switch(&w->scheduler_sp, w->run[0]->sp);
    w->site.in_kernel = 0;
#ifdef HOST_ASAN
    __sanitizer_finish_switch_fiber(w->scheduler_fake_stack, NULL, NULL);
#endif
    w->current = NULL;
    if (w->faulted) {
      /* A fault (or the watchdog) ended a fiber: the program stops. */
      record_fault(w, w->faulted);
      w->faulted = NULL;
      return;
    }
    if (__atomic_load_n(&launch->aborted, __ATOMIC_RELAXED))
      return; /* another program faulted: stop at this barrier */
    for (i = 0; i < n; ++i) {
      fiber_state s = w->run[i]->state;
      waiting += s == FIBER_WAITING;
      done += s == FIBER_DONE;
      failed += s == FIBER_FAILED;
    }
    if (waiting == 0)
      return; /* every thread has returned (or failed): program complete */
    if (failed) {
      /* The failed threads will never reach the barrier the others wait
       * at; the failure is recorded, so stop the program here. */
      return;
    }
    if (done) {
      char list[160];
      uint32_t k = 0;
      for (i = 0; i < n; ++i)
        if (w->run[i]->state == FIBER_DONE)
          w->run[k++] = w->run[i];
      format_threads(list, sizeof list, w->run, k);
      record_failure(launch, w->program, w->run[0]->thread.thread_id[0],
                     KJIT_STATUS_ABORTED,
                     "barrier divergence in kernel %s, program (%u,%u,%u): "
                     "thread%s %s returned while others wait at a barrier",
                     launch->kernel->name, w->loop_simt.thread.program_id[0],
                     w->loop_simt.thread.program_id[1],
                     w->loop_simt.thread.program_id[2], done == 1 ? "" : "s",
                     list);
      return;
    }
    /* Everyone waits: release the barrier and run the next phase. */
    for (i = 0; i < n; ++i)
      w->run[i]->state = FIBER_RUNNING;
  }
}

/*===----------------------------------------------------------------------===*\
|* Plain loop                                                                 *|
\*===----------------------------------------------------------------------===*/

/* Runs one program's SIMT threads one after another. A failing thread
 * siglongjmps back here and the loop goes on with the next thread. */
static void run_program_loop(host_worker *w, uint32_t threads) {
  kjit_host_entry_fn entry = w->launch->kernel->entry;
  void *const *args = w->launch->args;
  host_simt *simt = &w->loop_simt;
  w->loop_thread = 0;
  w->current = simt;
  /* Saved once per program (and again after each failure), not per
   * thread: the loop's cost is the calls alone. savemask 0: no syscall
   * (the fault handlers run with SA_NODEFER, so the mask is unchanged). */
  switch (sigsetjmp(w->loop_jump, 0)) {
  case 0:
    break;
  case 1: /* a failed assert: on with the next thread */
    w->loop_thread = w->loop_thread + 1;
    break;
  default: /* a fault or the watchdog: the program stops */
    w->site.in_kernel = 0;
    w->current = NULL;
    restore_fp_control(w);
    record_fault(w, simt);
    return;
  }
  w->site.in_kernel = 1;
  for (; w->loop_thread < threads; w->loop_thread = w->loop_thread + 1) {
    simt->thread.thread_id[0] = w->loop_thread;
    entry(&simt->thread, args);
  }
  w->site.in_kernel = 0;
  w->current = NULL;
}

static void end_thread(host_simt *simt) {
  host_worker *w = simt->worker;
  if (simt == &w->loop_simt)
    siglongjmp(w->loop_jump, 1);
  simt->state = FIBER_FAILED;
  switch_onward(simt);
  abort(); /* unreachable: a failed fiber is never resumed */
}

/*===----------------------------------------------------------------------===*\
|* The runtime table                                                          *|
\*===----------------------------------------------------------------------===*/

static void rt_barrier(kjit_host_thread *thread) {
  host_simt *simt = simt_of(thread);
  host_worker *w = simt->worker;
  if (simt == &w->loop_simt) {
    /* The object promised no barrier, so its threads run one after another
     * and this one cannot wait for the rest. */
    runtime_enter(w);
    record_failure(w->launch, w->program, thread->thread_id[0],
                   KJIT_STATUS_FAILED_PRECONDITION,
                   "kernel %s reached a barrier in program (%u,%u,%u), thread "
                   "(%u,0,0), but kjit_host_flags_%s lacks "
                   "KJIT_HOST_USES_BARRIER",
                   w->launch->kernel->name, thread->program_id[0],
                   thread->program_id[1], thread->program_id[2],
                   thread->thread_id[0], w->launch->kernel->name);
    w->site.in_runtime = 0;
    end_thread(simt);
  }
  simt->state = FIBER_WAITING;
  switch_onward(simt);
  /* Resumed: every thread of the program has reached the barrier. */
}

static void rt_assert_fail(kjit_host_thread *thread, const char *message,
                           uint64_t message_len) {
  host_simt *simt = simt_of(thread);
  host_worker *w = simt->worker;
  runtime_enter(w);
  record_failure(
      w->launch, w->program, thread->thread_id[0], KJIT_STATUS_ABORTED,
      "device assert failed in kernel %s, program (%u,%u,%u), "
      "thread (%u,0,0): %.*s",
      w->launch->kernel->name, thread->program_id[0], thread->program_id[1],
      thread->program_id[2], thread->thread_id[0],
      message ? (int)(message_len > 4096 ? 4096 : message_len) : 0,
      message ? message : "");
  w->site.in_runtime = 0;
  end_thread(simt);
}

static void rt_bounds_fail(kjit_host_thread *thread, const char *message,
                           uint64_t message_len, int64_t offset, int64_t bytes,
                           const kjit_host_extent *extent) {
  host_simt *simt = simt_of(thread);
  host_worker *w = simt->worker;
  runtime_enter(w);
  record_failure(
      w->launch, w->program, thread->thread_id[0], KJIT_STATUS_ABORTED,
      "device assert failed in kernel %s, program (%u,%u,%u), "
      "thread (%u,0,0): %.*s: bytes [%lld, %lld) from the pointer are outside "
      "its buffer, bytes [%lld, %lld)",
      w->launch->kernel->name, thread->program_id[0], thread->program_id[1],
      thread->program_id[2], thread->thread_id[0],
      message ? (int)(message_len > 4096 ? 4096 : message_len) : 0,
      message ? message : "", (long long)offset, (long long)(offset + bytes),
      extent ? (long long)extent->begin : 0,
      extent ? (long long)extent->end : 0);
  w->site.in_runtime = 0;
  end_thread(simt);
}

/* A growable line buffer that starts on the stack. */
typedef struct line_buffer {
  char *data;
  size_t used, cap;
  int heap;
} line_buffer;

static void line_append(line_buffer *b, const char *text, size_t len) {
  if (b->used + len > b->cap) {
    size_t cap = 2 * (b->used + len);
    char *grown = malloc(cap);
    if (!grown)
      return; /* drop the tail rather than fail a print */
    memcpy(grown, b->data, b->used);
    if (b->heap)
      free(b->data);
    b->data = grown;
    b->cap = cap;
    b->heap = 1;
  }
  memcpy(b->data + b->used, text, len);
  b->used += len;
}

static void rt_print(kjit_host_thread *thread, const char *prefix,
                     uint64_t prefix_len, const kjit_host_print_arg *args,
                     uint64_t num_args) {
  char stack[512], value[128];
  line_buffer b = {stack, 0, sizeof stack, 0};
  uint64_t i;
  int n;
  size_t off = 0;
  host_worker *w = simt_of(thread)->worker;
  runtime_enter(w);
  n = snprintf(value, sizeof value, "pid (%u, %u, %u) tid (%u, 0, 0) ",
               thread->program_id[0], thread->program_id[1],
               thread->program_id[2], thread->thread_id[0]);
  line_append(&b, value, (size_t)n);
  if (prefix)
    line_append(&b, prefix, (size_t)prefix_len);
  for (i = 0; i < num_args; ++i) {
    const kjit_host_print_arg *a = &args[i];
    double d;
    /* Values are separated by a space, and from the prefix unless it ends
     * in one (Triton's prefixes usually end in ": "). */
    int space = b.used > 0 && b.data[b.used - 1] != ' ';
    switch (a->kind) {
    case KJIT_HOST_PRINT_SIGNED:
      n = snprintf(value, sizeof value, "%s%lld", space ? " " : "",
                   (long long)a->bits);
      break;
    case KJIT_HOST_PRINT_UNSIGNED:
      n = snprintf(value, sizeof value, "%s%llu", space ? " " : "",
                   (unsigned long long)a->bits);
      break;
    case KJIT_HOST_PRINT_FLOAT:
      memcpy(&d, &a->bits, sizeof d);
      n = snprintf(value, sizeof value, "%s%g", space ? " " : "", d);
      break;
    case KJIT_HOST_PRINT_POINTER:
      n = snprintf(value, sizeof value, "%s0x%llx", space ? " " : "",
                   (unsigned long long)a->bits);
      break;
    default:
      n = snprintf(value, sizeof value, "%s<kind %u>", space ? " " : "",
                   a->kind);
      break;
    }
    if (n > 0)
      line_append(&b, value,
                  (size_t)n < sizeof value ? (size_t)n : sizeof value - 1);
  }
  line_append(&b, "\n", 1);
  /* One write per line: lines of different threads never interleave. A
   * pipe may still split lines over PIPE_BUF; then write the rest. */
  while (off < b.used) {
    ssize_t w = write(STDOUT_FILENO, b.data + off, b.used - off);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      break;
    off += (size_t)w;
  }
  if (b.heap)
    free(b.data);
  runtime_leave(w);
}

static const kjit_host_runtime host_runtime_table = {
    rt_barrier, rt_print, rt_assert_fail, rt_bounds_fail};

/*===----------------------------------------------------------------------===*\
|* Running programs                                                           *|
\*===----------------------------------------------------------------------===*/

/* Claims programs of the launch until there are none left. */
static void run_programs(host_worker *w, host_launch *launch) {
  int fibers = (launch->kernel->flags & KJIT_HOST_USES_BARRIER) != 0;
  kjit_host_thread *t = &w->loop_simt.thread;
  w->launch = launch;
  w->loop_simt.worker = w;
  memset(t, 0, sizeof *t);
  t->block_dim[0] = launch->threads;
  t->block_dim[1] = t->block_dim[2] = 1;
  t->num_programs[0] = launch->grid[0];
  t->num_programs[1] = launch->grid[1];
  t->num_programs[2] = launch->grid[2];
  t->runtime = &host_runtime_table;
  t->backend = &w->loop_simt;
  t->extents = launch->extents;
  w->current = w->faulted = NULL;
  w->site.in_kernel = w->site.in_runtime = w->site.in_handler = 0;
  w->site.cancel_pending = 0;
  w->site.cancelled = &launch->cancelled;
  w->site.text_begin = launch->kernel->text_begin;
  w->site.text_end = launch->kernel->text_end;
  w->site.recover = recover;
  __asm__ __volatile__("stmxcsr %0\n\tfnstcw %1"
                       : "=m"(w->mxcsr), "=m"(w->x87_cw));
  if (fibers) {
    /* Stacks are made by the worker that needs them, once; a worker that
     * cannot get them leaves the programs to the others. */
    kjit_status *status = ensure_fibers(w, launch->threads);
    if (status) {
      const char *message;
      size_t len;
      host_api->status_message(status, &message, &len);
      record_failure(launch, launch->num_programs, 0,
                     host_api->status_code(status), "%.*s", (int)len, message);
      host_api->status_destroy(status);
      w->launch = NULL;
      return;
    }
#ifdef HOST_ASAN
    {
      pthread_attr_t attr;
      void *bottom = NULL;
      size_t size = 0;
      if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        pthread_attr_getstack(&attr, &bottom, &size);
        pthread_attr_destroy(&attr);
      }
      w->thread_stack = bottom;
      w->thread_stack_size = size;
    }
#endif
  }
  host_fault_enter(&w->site);
  for (;;) {
    uint64_t p;
    /* After a fault or the time limit, no program starts. */
    if (__atomic_load_n(&launch->aborted, __ATOMIC_RELAXED))
      break;
    p = __atomic_fetch_add(&launch->next_program, 1, __ATOMIC_RELAXED);
    if (p >= launch->num_programs)
      break;
    w->program = p;
    /* x varies fastest, as in CUDA's block order. */
    t->program_id[0] = (uint32_t)(p % launch->grid[0]);
    t->program_id[1] = (uint32_t)(p / launch->grid[0] % launch->grid[1]);
    t->program_id[2] = (uint32_t)(p / launch->grid[0] / launch->grid[1]);
    if (fibers)
      run_program_fibers(w, launch->threads);
    else
      run_program_loop(w, launch->threads);
  }
  host_fault_leave();
  __atomic_store_n(&w->launch, NULL, __ATOMIC_RELEASE);
}

/* Unblocks the signals the fault handlers and the watchdog need in a
 * worker: a synchronous fault while blocked kills the process. */
static void unblock_fault_signals(sigset_t *old) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGSEGV);
  sigaddset(&set, SIGBUS);
  sigaddset(&set, SIGFPE);
  sigaddset(&set, SIGILL);
  if (host_cancel_signal())
    sigaddset(&set, host_cancel_signal());
  pthread_sigmask(SIG_UNBLOCK, &set, old);
}

/* The watchdog's cancel (Faults.c): no program starts any more, and every
 * worker still running one of the launch is signalled; the handler ends
 * the SIMT thread when it finds it in the kernel's code. */
static void cancel_launch(host_launch *launch) {
  unsigned i;
  __atomic_store_n(&launch->cancelled, 1, __ATOMIC_RELAXED);
  __atomic_store_n(&launch->aborted, 1, __ATOMIC_RELAXED);
  for (i = 0; i < pool.num_workers; ++i)
    if (__atomic_load_n(&pool.workers[i].launch, __ATOMIC_ACQUIRE) == launch)
      pthread_kill(pool.workers[i].thread, host_cancel_signal());
}

/* A helper thread: waits for launches and runs programs of each. */
static void *worker_main(void *arg) {
  host_worker *w = arg;
  uint64_t seen = 0;
  kjit_status *status = host_altstack_use(&w->altstack);
  /* Without a signal stack a fault still ends the launch, unless it is a
   * stack overflow. */
  if (status)
    host_api->status_destroy(status);
  unblock_fault_signals(NULL);
  pthread_mutex_lock(&pool.lock);
  for (;;) {
    host_launch *launch;
    while (!pool.stopping && pool.generation == seen)
      pthread_cond_wait(&pool.wake, &pool.lock);
    if (pool.stopping)
      break;
    seen = pool.generation;
    /* Only as many helpers as the launch has programs for take part; a
     * late waker of a finished launch finds it fully claimed. */
    if (pool.claimed >= pool.wanted)
      continue;
    ++pool.claimed;
    launch = pool.current;
    __atomic_store_n(&w->launch, launch, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&pool.lock);
    run_programs(w, launch);
    pthread_mutex_lock(&pool.lock);
    if (++pool.finished == pool.wanted)
      pthread_cond_signal(&pool.done);
  }
  pthread_mutex_unlock(&pool.lock);
  host_altstack_free(&w->altstack);
  return NULL;
}

/* Counts the CPUs this process may run on (affinity and cpusets count,
 * the machine's total does not). */
static unsigned available_cpus(void) {
  cpu_set_t set;
  long n;
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
    return (unsigned)CPU_COUNT(&set);
  n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (unsigned)n : 1;
}

void host_config_from_environment(host_config *config) {
  const char *workers = getenv("KJIT_HOST_WORKERS");
  const char *stack = getenv("KJIT_HOST_STACK_KIB");
  const char *timeout = getenv("KJIT_LAUNCH_TIMEOUT");
  char *end;
  unsigned long v;
  config->workers = available_cpus();
  if (workers && *workers) {
    errno = 0;
    v = strtoul(workers, &end, 10);
    if (!errno && !*end && v >= 1 && v <= 4096)
      config->workers = (unsigned)v;
  }
  config->stack_bytes = 64 * 1024;
  if (stack && *stack) {
    errno = 0;
    v = strtoul(stack, &end, 10);
    if (!errno && !*end && v >= 4 && v <= 1024 * 1024)
      config->stack_bytes = (size_t)v * 1024;
  }
  /* Seconds, fractions allowed; 0 or empty: no limit. A value that is not
   * a number fails every launch rather than run without the limit asked
   * for. */
  config->timeout_ns = 0;
  config->bad_timeout = NULL;
  if (timeout && *timeout) {
    double seconds;
    errno = 0;
    seconds = strtod(timeout, &end);
    if (errno || *end || end == timeout || !(seconds >= 0) || seconds > 1e6)
      config->bad_timeout = timeout;
    else
      config->timeout_ns = (uint64_t)(seconds * 1e9);
  }
}

/* Frees the workers' stacks, fibers and the launching slot's signal stack
 * (no thread runs on them: at shutdown they were joined, after a fork they
 * do not exist); the next launch starts a new pool. */
static void free_workers(void) {
  unsigned i;
  for (i = 0; pool.workers && i < pool.config.workers; ++i) {
    host_worker *w = &pool.workers[i];
    if (w->stacks)
      munmap(w->stacks, w->stacks_bytes);
    free(w->fibers);
    free(w->run);
  }
  if (pool.workers)
    host_altstack_free(&pool.workers[0].altstack);
  free(pool.workers);
  pool.workers = NULL;
  pool.num_workers = 0;
  pool.generation = 0;
}

/* fork: only the forking thread lives on in the child, so the helpers and
 * the watchdog are gone while the pool still counts them (a launch of
 * several programs would wait for them forever). The prepare handler takes
 * the pool's locks, so that no launch is under way and the pool's state is
 * whole at the fork; the child frees what the dead threads owned and starts
 * anew on its next launch. glibc unregisters the handlers when the plugin
 * is unloaded (they are registered with the plugin's DSO handle). */
static void pool_prepare_fork(void) {
  pthread_mutex_lock(&pool.launch_lock);
  pthread_mutex_lock(&pool.lock);
  host_watchdog_prepare_fork();
}

static void pool_parent_after_fork(void) {
  host_watchdog_parent_after_fork();
  pthread_mutex_unlock(&pool.lock);
  pthread_mutex_unlock(&pool.launch_lock);
}

static void pool_child_after_fork(void) {
  host_watchdog_child_after_fork();
  free_workers();
  pool.current = NULL;
  pool.wanted = pool.claimed = pool.finished = 0;
  pool.stopping = 0;
  /* The child's copies are held by this thread; condition variables may
   * have had waiters that no longer exist. */
  pthread_cond_init(&pool.wake, NULL);
  pthread_cond_init(&pool.done, NULL);
  pthread_mutex_unlock(&pool.lock);
  pthread_mutex_unlock(&pool.launch_lock);
}

static void register_fork_handlers(void) {
  pthread_atfork(pool_prepare_fork, pool_parent_after_fork,
                 pool_child_after_fork);
}

void host_pool_init(const host_config *config) {
  static pthread_once_t fork_once = PTHREAD_ONCE_INIT;
  long page = sysconf(_SC_PAGESIZE);
  pthread_once(&fork_once, register_fork_handlers);
  pool.config = *config;
  pool.page = page > 0 ? (size_t)page : 4096;
  /* Stacks are whole pages so that guard pages stay page-aligned. */
  pool.config.stack_bytes =
      (pool.config.stack_bytes + pool.page - 1) / pool.page * pool.page;
  pool.stopping = 0;
}

/* Starts the helper threads on first use, so that loading the plugin (or
 * a process that never launches on the host) costs no threads. */
static kjit_status *start_pool(void) {
  unsigned i, n = pool.config.workers;
  sigset_t all, old;
  kjit_status *status;
  pool.workers = calloc(n, sizeof *pool.workers);
  if (!pool.workers)
    return host_error(KJIT_STATUS_RESOURCE_EXHAUSTED,
                      "host backend: out of memory for %u workers", n);
  /* Before the helpers start: they unblock the signals installed here. */
  if ((status = host_faults_install(pool.config.timeout_ns != 0))) {
    if (host_api->status_code(status) != KJIT_STATUS_UNAVAILABLE) {
      free(pool.workers);
      pool.workers = NULL;
      return status;
    }
    /* No signal to cancel with: launches run, without the limit, and the
     * first one says why. */
    pool.config.timeout_ns = 0;
    pool.cancel_error = status;
  }
  pool.num_workers = 1; /* slot 0: whichever thread launches */
  /* Helpers block every signal: signals stay with the application's own
   * threads, whose handlers expect them. */
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  for (i = 1; i < n; ++i) {
    host_worker *w = &pool.workers[i];
    w->index = i;
    if (pthread_create(&w->thread, NULL, worker_main, w) != 0)
      break; /* fewer workers is slower, not wrong */
    pool.num_workers = i + 1;
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return NULL;
}

kjit_status *host_pool_run(host_launch *launch) {
  kjit_status *status = NULL;
  unsigned helpers;
  host_worker *self;
  sigset_t old_mask;
  int timed;
  pthread_mutex_lock(&pool.launch_lock);
  if (pool.config.bad_timeout) {
    status = host_error(KJIT_STATUS_INVALID_ARGUMENT,
                        "launch of kernel '%s': KJIT_LAUNCH_TIMEOUT='%s' is "
                        "not a number of seconds (such as 2 or 0.5; 0 for no "
                        "limit)",
                        launch->kernel->name, pool.config.bad_timeout);
    goto out;
  }
  if (!pool.num_workers && (status = start_pool()) != NULL)
    goto out;
  if (pool.cancel_error) {
    status = pool.cancel_error;
    pool.cancel_error = NULL;
    goto out;
  }
  /* Slot 0 is whichever thread launches: it needs a signal stack for a
   * stack overflow, and the fault signals unblocked, while it runs
   * programs. */
  self = &pool.workers[0];
  self->thread = pthread_self();
  if ((status = host_altstack_use(&self->altstack)) != NULL)
    goto out;
  timed = pool.config.timeout_ns != 0;
  unblock_fault_signals(&old_mask);
  if (timed && (status = host_watchdog_arm(launch, pool.config.timeout_ns,
                                           cancel_launch)) != NULL) {
    pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
    host_altstack_restore(&self->altstack);
    goto out;
  }
  helpers = pool.num_workers - 1;
  if (launch->num_programs - 1 < helpers)
    helpers = (unsigned)(launch->num_programs - 1);
  if (helpers) {
    pthread_mutex_lock(&pool.lock);
    pool.current = launch;
    pool.wanted = helpers;
    pool.claimed = pool.finished = 0;
    ++pool.generation;
    pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.lock);
  }
  /* The launching thread works too: a one-program launch wakes nobody. */
  __atomic_store_n(&self->launch, launch, __ATOMIC_RELEASE);
  run_programs(self, launch);
  if (helpers) {
    pthread_mutex_lock(&pool.lock);
    while (pool.finished < pool.wanted)
      pthread_cond_wait(&pool.done, &pool.lock);
    pool.current = NULL;
    pthread_mutex_unlock(&pool.lock);
  }
  if (timed) {
    host_watchdog_disarm();
    /* A cancel that found no worker in the kernel's code (they were all
     * between programs) still fails the launch. */
    if (launch->cancelled && !launch->error_code)
      record_failure(
          launch, launch->num_programs, 0, KJIT_STATUS_DEADLINE_EXCEEDED,
          "launch of kernel %s cancelled: it ran past its time "
          "limit of %g s (KJIT_LAUNCH_TIMEOUT)",
          launch->kernel->name, (double)pool.config.timeout_ns / 1e9);
  }
  pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
  host_altstack_restore(&self->altstack);
out:
  pthread_mutex_unlock(&pool.launch_lock);
  return status;
}

void host_pool_shutdown(void) {
  unsigned i;
  pthread_mutex_lock(&pool.launch_lock);
  pthread_mutex_lock(&pool.lock);
  pool.stopping = 1;
  pthread_cond_broadcast(&pool.wake);
  pthread_mutex_unlock(&pool.lock);
  for (i = 1; i < pool.num_workers; ++i)
    pthread_join(pool.workers[i].thread, NULL);
  host_watchdog_shutdown();
  free_workers();
  host_faults_uninstall();
  if (pool.cancel_error)
    host_api->status_destroy(pool.cancel_error);
  pool.cancel_error = NULL;
  pthread_mutex_unlock(&pool.launch_lock);
}
