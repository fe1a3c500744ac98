/*===- Fiber.c - fibers: the context switch, stacks and phases ----*- C -*-===*\
|*                                                                            *|
|* A kernel with barriers runs one fiber per SIMT thread: a program's fibers  *|
|* run in turn, each until it waits at a barrier, returns or fails, and hand  *|
|* on to the next, so a barrier costs two user-space switches per thread      *|
|* instead of a futex round trip per thread. Here are the x86-64 context      *|
|* switch (assembly), the fiber stacks with their guard pages, and the loop   *|
|* that runs a program phase by phase and finds barrier divergence.           *|
|* docs/HostBackend.md has the rationale.                                     *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* mmap: POSIX/GNU, not C99. */
#define _GNU_SOURCE 1

#include "Scheduler.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

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

/* host_switch (Scheduler.h) saves the current context's frame on its
 * stack, stores its stack pointer to *save_sp and resumes the context whose
 * stack pointer is next_sp. */
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
|* Fiber scheduling                                                           *|
\*===----------------------------------------------------------------------===*/

/* Suspends the current fiber and resumes the next one of this phase, or
 * the scheduler when it is the last. Switching fiber to fiber costs one
 * switch per thread and phase instead of two through the scheduler. */
void host_switch_onward(host_simt *simt) {
  host_worker *w = simt->worker;
  uint32_t next = simt->position + 1;
  host_simt *to = next < w->num_run ? w->run[next] : NULL;
#ifdef HOST_ASAN
  /* A fiber that will never run again hands its fake stack back. */
  __sanitizer_start_switch_fiber(
      simt->state == FIBER_WAITING ? &simt->fake_stack : NULL,
      to ? to->stack_top - host_pool.config.stack_bytes : w->thread_stack,
      to ? host_pool.config.stack_bytes : w->thread_stack_size);
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
  host_switch_onward(simt);
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
kjit_status *host_fibers_reserve(host_worker *w, uint32_t threads) {
  size_t stack = host_pool.config.stack_bytes, slot = stack + host_pool.page;
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
    if (mprotect(base + (size_t)i * slot + host_pool.page, stack,
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

void host_fibers_free(host_worker *w) {
  if (w->stacks)
    munmap(w->stacks, w->stacks_bytes);
  free(w->fibers);
  free(w->run);
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
void host_run_program_fibers(host_worker *w, uint32_t threads) {
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
                                       host_pool.config.stack_bytes,
                                   host_pool.config.stack_bytes);
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
      host_record_fault(w, w->faulted);
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
      host_record_failure(
          launch, w->program, w->run[0]->thread.thread_id[0],
          KJIT_STATUS_ABORTED,
          "barrier divergence in kernel %s, program (%u,%u,%u): "
          "thread%s %s returned while others wait at a barrier",
          launch->kernel->name, w->loop_simt.thread.program_id[0],
          w->loop_simt.thread.program_id[1], w->loop_simt.thread.program_id[2],
          done == 1 ? "" : "s", list);
      return;
    }
    /* Everyone waits: release the barrier and run the next phase. */
    for (i = 0; i < n; ++i)
      w->run[i]->state = FIBER_RUNNING;
  }
}
