/*===- Scheduler.c - running a launch's programs and failures -----*- C -*-===*\
|*                                                                            *|
|* Runs a launch's programs on one worker of the pool (Workers.c): each       *|
|* program runs entirely on one worker (its workgroup memory is that          *|
|* worker's TLS), one program at a time per worker. A kernel without barriers *|
|* runs its SIMT threads as a plain loop, here; a kernel with barriers runs   *|
|* one fiber per SIMT thread (Fiber.c). Also records device failures (the     *|
|* first by program and thread order wins) and turns the fault handlers'      *|
|* findings (Faults.c) into messages. docs/HostBackend.md has the rationale.  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* sigsetjmp, pthread_getattr_np: POSIX/GNU, not C99. */
#define _GNU_SOURCE 1

#include "Scheduler.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*===----------------------------------------------------------------------===*\
|* Failures                                                                   *|
\*===----------------------------------------------------------------------===*/

/* Records a device failure of (program, thread). The launch reports the
 * first one in program order (then thread order) so that the message does
 * not depend on which worker got there first, and counts the rest. */
void host_record_failure(host_launch *launch, uint64_t program, uint32_t thread,
                         int32_t code, const char *format, ...) {
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

/* A signal handler resets MXCSR and the x87 control word; a worker that
 * leaves one by siglongjmp puts back what it started the launch with. */
static void restore_fp_control(host_worker *w) {
  __asm__ __volatile__("ldmxcsr %0\n\tfldcw %1"
                       :
                       : "m"(w->mxcsr), "m"(w->x87_cw));
}

/* Records the fault (or cancellation) the handler left in w->site and
 * stops the launch: no program starts after a fault. */
void host_record_fault(host_worker *w, host_simt *simt) {
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
    if (f->pc) /* 0: ended on leaving a runtime call (host_runtime_leave) */
      snprintf(at, sizeof at, "at pc 0x%llx %s", pc, where);
    host_record_failure(
        launch, w->program, simt->thread.thread_id[0],
        KJIT_STATUS_DEADLINE_EXCEEDED,
        "launch of kernel %s cancelled: it ran past its time "
        "limit of %g s (KJIT_LAUNCH_TIMEOUT); program (%u,%u,%u), "
        "thread (%u,0,0) was interrupted %s",
        k->name, (double)host_pool.config.timeout_ns / 1e9, pid[0], pid[1],
        pid[2], simt->thread.thread_id[0], at);
    return;
  }
  {
    host_fault_stack stack;
    uintptr_t base = (uintptr_t)w->stacks, slot;
    stack.fiber_stack_bytes = host_pool.config.stack_bytes;
    slot = stack.fiber_stack_bytes + host_pool.page;
    stack.guard_hit = simt != &w->loop_simt && f->addr >= base &&
                      f->addr < base + w->stacks_bytes &&
                      (f->addr - base) % slot < host_pool.page;
    host_describe_fault(what, sizeof what, f, &stack);
  }
  {
    /* Debug builds: the source line of the faulting instruction. */
    char line[160] = "";
    if (k->line_table && f->pc >= k->text_begin && f->pc < k->text_end &&
        host_line_lookup(k->line_table, k->line_table_size, pc, line + 4,
                         sizeof line - 4))
      memcpy(line, " at ", 4);
    host_record_failure(
        launch, w->program, simt->thread.thread_id[0], KJIT_STATUS_ABORTED,
        "kernel %s faulted in program (%u,%u,%u), thread "
        "(%u,0,0): %s at pc 0x%llx %s%s; the launch was stopped",
        k->name, pid[0], pid[1], pid[2], simt->thread.thread_id[0], what, pc,
        where, line);
  }
}

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

/* Leaving a runtime call: a cancellation that came during it ends the
 * thread now. */
void host_runtime_leave(host_worker *w) {
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
    host_record_fault(w, simt);
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

void host_end_thread(host_simt *simt) {
  host_worker *w = simt->worker;
  if (simt == &w->loop_simt)
    siglongjmp(w->loop_jump, 1);
  simt->state = FIBER_FAILED;
  host_switch_onward(simt);
  abort(); /* unreachable: a failed fiber is never resumed */
}

/*===----------------------------------------------------------------------===*\
|* Running programs                                                           *|
\*===----------------------------------------------------------------------===*/

/* Claims programs of the launch until there are none left. */
void host_run_programs(host_worker *w, host_launch *launch) {
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
    kjit_status *status = host_fibers_reserve(w, launch->threads);
    if (status) {
      const char *message;
      size_t len;
      host_api->status_message(status, &message, &len);
      host_record_failure(launch, launch->num_programs, 0,
                          host_api->status_code(status), "%.*s", (int)len,
                          message);
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
      host_run_program_fibers(w, launch->threads);
    else
      run_program_loop(w, launch->threads);
  }
  host_fault_leave();
  __atomic_store_n(&w->launch, NULL, __ATOMIC_RELEASE);
}
